"""Entry point the Pulumi CLI runs (``python -m pulumi.policy <engine> .`` in this directory): assemble and serve."""

import sys
from pathlib import Path

# The CLI runs this file with only the pack directory on sys.path; the rules import the project's catalog.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pulumi_policy import PolicyPack  # noqa: E402

from policies.pack import pack_arguments  # noqa: E402

PolicyPack(**pack_arguments())
