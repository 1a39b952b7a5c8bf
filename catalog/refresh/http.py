"""Fetch JSON over HTTP(S) with a timeout and a progress bar; every failure becomes one clear RefreshError."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

from catalog.refresh.errors import RefreshError

CHUNK_BYTES = 1 << 16


class Fetcher:
    """``with Fetcher(console, timeout) as fetch: fetch.json(url, what)``; the bar shows each download."""

    def __init__(self, console: Console, timeout: float):
        self._timeout = timeout
        self._progress = Progress(
            TextColumn("{task.description}"), BarColumn(), DownloadColumn(), console=console, transient=True
        )

    def __enter__(self) -> Fetcher:
        self._progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._progress.stop()

    def json(self, url: str, what: str, *, redact: str | None = None) -> dict[str, Any]:
        """GET ``url`` and parse a JSON object. ``redact`` (an API key) never appears in an error message."""
        shown = url.replace(redact, "<key>") if redact else url
        body = self._download(url, shown, what)
        try:
            data = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise RefreshError(
                f"{what}: the response from {shown} is not complete JSON ({exc.__class__.__name__}: "
                f"{exc}; {len(body)} bytes received): the download was cut short or the service "
                "returned something else; run again"
            ) from None
        if not isinstance(data, dict):
            raise RefreshError(f"{what}: {shown} returned JSON {type(data).__name__}, not an object")
        return data

    def _download(self, url: str, shown: str, what: str) -> bytes:
        task = self._progress.add_task(what, total=None)
        try:
            with urllib.request.urlopen(url, timeout=self._timeout) as response:  # noqa: S310 (https or loopback)
                length = response.headers.get("Content-Length")
                self._progress.update(task, total=int(length) if length and length.isdigit() else None)
                chunks = []
                while chunk := response.read(CHUNK_BYTES):
                    chunks.append(chunk)
                    self._progress.advance(task, len(chunk))
                return b"".join(chunks)
        except urllib.error.HTTPError as exc:
            raise RefreshError(
                f"{what}: HTTP {exc.code} {exc.reason} from {shown}"
                + (" (check the API key)" if exc.code in (400, 401, 403) else "")
            ) from None
        except (TimeoutError, socket.timeout):
            raise RefreshError(
                f"{what}: no answer from {shown} within {self._timeout:g} s (raise --timeout-seconds, or run again)"
            ) from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (TimeoutError, socket.timeout)):
                raise RefreshError(
                    f"{what}: no answer from {shown} within {self._timeout:g} s (raise --timeout-seconds, or run again)"
                ) from None
            raise RefreshError(f"{what}: cannot reach {shown}: {exc.reason}") from None
        except (ConnectionError, OSError) as exc:
            raise RefreshError(f"{what}: the connection to {shown} failed: {exc}") from None
        finally:
            self._progress.remove_task(task)
