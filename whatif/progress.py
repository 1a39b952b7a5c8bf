"""A progress bar on stderr that appears only once a run has taken a couple of seconds (short runs stay quiet)."""

from __future__ import annotations

import time
from typing import Any

SHOW_AFTER_S = 2.0


class LazyProgress:
    def __init__(self, label: str):
        self.label = label
        self.started = time.monotonic()
        self._bar: Any = None
        self._task: Any = None

    def __call__(self, sim_s: float, end_s: float) -> None:
        if self._bar is None:
            if time.monotonic() - self.started < SHOW_AFTER_S:
                return
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.fields[at]}"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=max(end_s, 1.0), at="")
        self._bar.update(self._task, completed=min(sim_s, end_s), at=f"{sim_s / 3600:.0f} h simulated")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
