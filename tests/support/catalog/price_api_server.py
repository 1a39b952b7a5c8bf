"""A loopback HTTP server that serves recorded price-API responses, for the ``python -m catalog refresh`` tests.

``routes`` maps a path (query string ignored, except GCP's pageToken) to (status, body); a route whose body is
``SLOW`` answers only after the client's timeout, so the timeout path runs without any timed assert."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

SLOW = b"<slow>"
SLOW_SECONDS = 3.0


@contextmanager
def serve(routes: dict[str, tuple[int, bytes]]) -> Iterator[str]:
    """Yield the base URL (``http://127.0.0.1:<port>``) of a server answering ``routes``."""
    release = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            url = urlsplit(self.path)
            token = parse_qs(url.query).get("pageToken", [""])[0]
            status, body = routes.get(url.path + (f"#{token}" if token else ""), (404, b'{"error": "not found"}'))
            if body == SLOW:
                release.wait(SLOW_SECONDS)  # the client gave up long before; the event ends the wait on shutdown
                body = b"{}"
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:  # keep test output clean
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        release.set()
        server.shutdown()
        server.server_close()
