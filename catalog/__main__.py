"""``python -m catalog refresh`` / ``python -m catalog import-facts``: rebuild the catalog's price CSVs."""

from __future__ import annotations

import sys

from catalog.environment import require_environment

if __name__ == "__main__":
    require_environment("catalog", "import-facts")  # before cli.py imports rich
    from catalog.refresh.cli import main

    sys.exit(main(sys.argv[1:]))
