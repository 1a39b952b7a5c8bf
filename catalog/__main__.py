"""``python -m catalog refresh`` / ``python -m catalog import-facts``: rebuild the catalog's price CSVs."""
from __future__ import annotations

import sys

from catalog.refresh.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
