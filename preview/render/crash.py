"""An unexpected exception in a command is a bug, and says so: one line, its own exit code, the traceback on request.

Exit codes are a contract CI reads (README "Exit codes"): 0 valid, 1 a mandatory policy violation, 2 invalid
configuration, 3 the diff's cost threshold. A crash must never pass for one of them (a traceback with exit 1 would
read as "policy violation"), so it exits ``EXIT_INTERNAL``.
"""

from __future__ import annotations

import sys
import traceback
from typing import Callable, Sequence

EXIT_INTERNAL = 4
REPORT_TO = "the gpu-cluster issue tracker"


def bug_line(exc: BaseException, prog: str) -> str:
    what = f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__
    if len(what) > 160:
        what = what[:157] + "..."
    return (
        f"internal error (a bug in gpu-cluster, not in your stack): {what}; please report it to {REPORT_TO} "
        f"with the output of `{prog} ... --debug` (exit {EXIT_INTERNAL})"
    )


def run_guarded(command: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None, prog: str) -> int:
    """``command(argv)``, with any exception other than an interrupt turned into the bug line and EXIT_INTERNAL."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        return command(args)
    except (KeyboardInterrupt, BrokenPipeError):
        raise
    except Exception as exc:  # noqa: BLE001 - the one place every unexpected error ends
        if "--debug" in args:
            traceback.print_exc(file=sys.stderr)
        print(bug_line(exc, prog), file=sys.stderr)
        return EXIT_INTERNAL
