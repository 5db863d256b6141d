"""A loopback HTTP server for the data set downloads (tests only).

Serves bytes by path, each in a mode: ``ok``; ``truncate`` (announces the full
``Content-Length``, sends half, closes: a transfer cut short); ``refuse`` (HTTP 403). Counts the
requests per path, so a test can tell a cached file from a new download.
"""

from __future__ import annotations

import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class DataServer:
    """``with DataServer({"/a.tar.gz": (data, "ok")}) as srv: srv.url("/a.tar.gz")``."""

    def __init__(self, routes: dict[str, tuple[bytes, str]]) -> None:
        self.routes = routes
        self.hits: Counter[str] = Counter()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                owner.hits[self.path] += 1
                data, mode = owner.routes.get(self.path, (b"", "missing"))
                if mode in ("refuse", "missing"):
                    self.send_error(403 if mode == "refuse" else 404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data if mode == "ok" else data[: len(data) // 2])
                self.wfile.flush()
                if mode == "truncate":
                    self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def __enter__(self) -> DataServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
