"""The HTTP side of `fabtui alerts serve`: Alertmanager's webhook POSTs in, one log line out.

A stdlib `ThreadingHTTPServer` (no web framework: one endpoint, small bodies, a handful of
senders) on the address given. `POST /alerts` (or `/`) hands the body to `handle(body, peer)`
and answers its status: 200 once the incidents are journaled, 400 for a body that is not a
notification (Alertmanager does not retry a 4xx), 500 when it could not be recorded (it
retries). A body above `MAX_BODY` is refused with 413 before it is read. `GET /-/healthy`
answers 200 (for a probe beside Alertmanager's own); `GET /incidents` the open incidents as
JSON (what `list()` returns).

Side effects: listens on a TCP port until `stop()`.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_BODY = 64 * 1024 * 1024
"""Bytes a notification may have (10,000 alerts of ~1 KiB are ~10 MiB)."""

Handle = Callable[[bytes, str], tuple[int, str]]


class AlertReceiver:
    """The server (see the module docstring); `start()` serves on a thread."""

    def __init__(self, handle: Handle, log: Callable[[str], None], host: str = "127.0.0.1",
                 port: int = 9095, listing: Callable[[], list[dict[str, Any]]] | None = None
                 ) -> None:

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self, status: int, text: str,
                        content_type: str = "text/plain; charset=utf-8") -> None:
                body = (text + "\n").encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)

            def do_POST(self) -> None:
                path = self.path.split("?")[0].rstrip("/")
                if path not in ("", "/alerts"):
                    self._answer(404, "POST the webhook to /alerts")
                    return
                peer = f"{self.client_address[0]}:{self.client_address[1]}"
                try:
                    length = int(self.headers.get("Content-Length") or "0")
                except ValueError:
                    length = -1
                if length < 0 or length > MAX_BODY:
                    log(f"refused a body of {self.headers.get('Content-Length')!r} bytes "
                        f"from {peer} (at most {MAX_BODY})")
                    self.close_connection = True
                    self._answer(413, f"a notification has at most {MAX_BODY} bytes")
                    return
                status, text = handle(self.rfile.read(length), peer)
                self._answer(status, text)

            def do_GET(self) -> None:
                path = self.path.split("?")[0].rstrip("/")
                if path == "/-/healthy":
                    self._answer(200, "ok")
                elif path == "/incidents" and listing is not None:
                    self._answer(200, json.dumps(listing(), indent=2), "application/json")
                else:
                    self._answer(404, "POST /alerts (Alertmanager webhook), GET /incidents, "
                                      "GET /-/healthy")

            def log_message(self, format: str, *args: Any) -> None:
                """Requests are not logged one by one: `handle` logs what each did."""

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> str:
        host, port = self.server.server_address[:2]
        return f"{host!s}:{port}"

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def start(self) -> AlertReceiver:
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True,
                                        name="alert-receiver")
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self.server.serve_forever()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
