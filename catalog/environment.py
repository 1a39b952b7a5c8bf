"""Is this interpreter the project's environment? Checked first by every ``python -m`` command of the project, so a
bare ``python`` without the dependencies says what to run instead of printing a traceback that exits 1 (the code CI
reads as "policy violation"). Standard library only, and in ``catalog`` (which imports nothing of the project) so
every package may call it before anything else is importable.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

EXIT_ENVIRONMENT = 2
"""The exit code of "nothing ran": like invalid configuration or a usage error (README "Exit codes")."""

REQUIRED = ("pulumi", "yaml", "ruamel.yaml", "pydantic", "rich")
"""Top-level modules of requirements.txt every command needs (the provider SDKs come with the same pip command)."""

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # "ruamel.yaml" without "ruamel"
        return False


def missing_modules(modules: tuple[str, ...] = REQUIRED) -> list[str]:
    return [m for m in modules if not _importable(m)]


def require_environment(prog: str, example: str, modules: tuple[str, ...] = REQUIRED) -> None:
    """Exit EXIT_ENVIRONMENT with what to run instead when a dependency is missing; ``example`` is the arguments
    of a command that works once the environment exists (``--stack dev``)."""
    missing = missing_modules(modules)
    if not missing:
        return
    venv_python = PROJECT_ROOT / ".venv" / "bin" / "python"
    built = venv_python.exists()
    print(
        f"error: {sys.executable} lacks {', '.join(missing)} (the project's dependencies, requirements.txt)\n"
        f"  fix:      {'' if built else 'bash scripts/venv.sh && '}.venv/bin/python -m {prog} {example}   "
        f"(from {PROJECT_ROOT}; `bash scripts/venv.sh` builds .venv once)",
        file=sys.stderr,
    )
    sys.exit(EXIT_ENVIRONMENT)
