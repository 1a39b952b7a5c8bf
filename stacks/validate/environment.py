"""Stack names given on the command line; the environment check the commands run first lives in
``catalog/environment.py`` (standard library only, importable from every package) and is re-exported here.
"""

from __future__ import annotations

from pathlib import Path

from catalog.environment import EXIT_ENVIRONMENT as EXIT_ENVIRONMENT
from catalog.environment import missing_modules as missing_modules
from catalog.environment import require_environment as require_environment

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def stack_name_problem(option: str, name: str) -> str | None:
    """A file name given where a stack name belongs (``--stack Pulumi.dev.yaml`` would look for
    ``Pulumi.Pulumi.dev.yaml.yaml``): the error with the fix, else None."""
    path = Path(name)
    if not (path.suffix in (".yaml", ".yml") or "/" in name):
        return None
    stem = path.name
    if stem.startswith("Pulumi.") and stem.endswith((".yaml", ".yml")):
        stem = stem[len("Pulumi.") :].rsplit(".", 1)[0]
    return (
        f"error: {option} takes a stack name, not a file: received {name!r}\n"
        f"  fix:      {option} {stem}   (reads Pulumi.{stem}.yaml in {PROJECT_ROOT}), or {option}-file {name}"
    )
