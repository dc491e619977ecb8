"""A hostile or broken Prometheus (field review M1, M6, L4): an answer drip-fed a byte at a time
ends at the configured timeout, a huge answer is refused, the token never goes to another host a
redirect names, a malformed answer is a clear error (never "internal error"), the server's
control characters never reach the terminal, and a password in the URL is never shown.

Each server here is a tiny real HTTP server on loopback (http.server in a thread), answering
as the reviewer's `fake_prom.py` modes did."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from fabtui.prom.client import PromClient, PromError
from tests.support import REPO
from tests.support.prom_server import free_port

Respond = Callable[[BaseHTTPRequestHandler], None]


class Hostile:
    """An HTTP server on `host` whose every GET is answered by `respond`; it logs each request's
    path and Authorization header."""

    def __init__(self, respond: Respond, host: str = "127.0.0.1") -> None:
        self.requests: list[tuple[str, str | None]] = []
        server_self = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                server_self.requests.append((self.path, self.headers.get("Authorization")))
                with contextlib.suppress(OSError):  # the client gave up (its deadline)
                    respond(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://{host}:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def serve() -> Iterator[Callable[..., Hostile]]:
    started: list[Hostile] = []

    def start(respond: Respond, host: str = "127.0.0.1") -> Hostile:
        started.append(Hostile(respond, host))
        return started[-1]

    yield start
    for server in started:
        server.stop()


def send(handler: BaseHTTPRequestHandler, body: bytes, code: int = 200) -> None:
    handler.send_response(code)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def vector(result: Any) -> bytes:
    return json.dumps({"status": "success",
                       "data": {"resultType": "vector", "result": result}}).encode()


def drip(handler: BaseHTTPRequestHandler) -> None:
    """Headers, then one byte of the body every 0.5 s for a minute."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.wfile.write(b"{")
    handler.wfile.flush()
    for _ in range(120):
        time.sleep(0.5)
        handler.wfile.write(b" ")
        handler.wfile.flush()


def drip_headers(handler: BaseHTTPRequestHandler) -> None:
    """The status line, then a header line every 0.5 s for a minute."""
    handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
    handler.wfile.flush()
    for n in range(120):
        time.sleep(0.5)
        handler.wfile.write(f"X-Slow-{n}: x\r\n".encode())
        handler.wfile.flush()


def config(tmp_path: Path, url: str, **extra: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'data_dir = "{tmp_path / "data"}"\n[prometheus]\nurl = "{url}"\n' +
                    "".join(f'{k} = "{v}"\n' for k, v in extra.items()))
    return path


def fabtui(config_path: Path, *args: str, env: dict[str, str] | None = None,
           timeout: float = 60) -> tuple[int, str, float]:
    """`fabtui` as its own process (its exit waits for every thread it started): exit status,
    stdout and stderr together, seconds until it exited."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "fabtui", "--config", str(config_path), *args],
                          capture_output=True, text=True, timeout=timeout, check=False,
                          cwd=REPO, env={**os.environ, **(env or {}),
                                         "PYTHONPATH": str(REPO)})
    return done.returncode, done.stdout + done.stderr, time.monotonic() - started


@pytest.mark.parametrize("respond", [drip, drip_headers], ids=["body", "headers"])
def test_a_drip_fed_answer_ends_at_the_timeout_and_the_process_exits(
        tmp_path: Path, serve: Callable[..., Hostile], respond: Respond) -> None:
    server = serve(respond)
    code, output, seconds = fabtui(config(tmp_path, server.url, timeout="2s"), "prom", "check")
    assert code == 2, output
    assert "fabtui: prometheus timeout: " in output and "no answer within 2s" in output
    assert seconds < 12  # 2 s per query, all at once, and the interpreter's start
    started = time.monotonic()
    with pytest.raises(PromError) as caught:
        PromClient(server.url, 1.0).query("up")
    assert time.monotonic() - started < 2.5
    assert caught.value.kind == "timeout"


def test_an_answer_over_the_size_limit_is_refused_unread(serve: Callable[..., Hostile]) -> None:
    sent: list[int] = []

    def huge(handler: BaseHTTPRequestHandler) -> None:
        """200 MiB of JSON whitespace, streamed without a length (far more than the limit plus
        what loopback socket buffers hold, which autotune to several MiB)."""
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Connection", "close")
        handler.end_headers()
        chunk = b" " * (1 << 20)
        sent.append(0)
        for _ in range(200):
            handler.wfile.write(chunk)
            sent[-1] += 1

    waited: list[bool] = []

    def announced(handler: BaseHTTPRequestHandler) -> None:
        """A length over the limit, announced, and then nothing for a long while."""
        handler.send_response(200)
        handler.send_header("Content-Length", str(200 << 20))
        handler.end_headers()
        handler.wfile.flush()
        time.sleep(10)
        waited.append(True)

    for respond in (huge, announced):
        server = serve(respond)
        with pytest.raises(PromError) as caught:
            PromClient(server.url, 20).query("up")
        assert caught.value.kind == "bad-query"
        assert str(caught.value) == "up: the answer is larger than 64 MiB: refused (narrow " \
                                    "the query or the label mapping)"
    assert sent[0] < 200  # the rest was never read
    assert not waited  # the announced length was refused before the body's wait was over


def test_the_token_never_goes_to_another_host_a_redirect_names(
        tmp_path: Path, serve: Callable[..., Hostile], run: Callable[..., Result],
        monkeypatch: pytest.MonkeyPatch) -> None:
    other = serve(lambda h: send(h, vector([])), "127.0.0.2")  # another host: logs the header

    def redirect(handler: BaseHTTPRequestHandler) -> None:
        if handler.path.startswith("/moved"):
            send(handler, vector([]))
            return
        same = "query=same" in handler.path  # to the same origin: the token goes along
        handler.send_response(302)
        handler.send_header("Location", f"{'' if same else other.url}/moved{handler.path}")
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    server = serve(redirect)
    monkeypatch.setenv("FABTUI_TEST_PROM_TOKEN", "SECRET-BEARER-TOKEN-123")
    result = run("--config", str(config(tmp_path, server.url, bearer="env:FABTUI_TEST_PROM_TOKEN",
                                        timeout="5s")), "prom", "check")
    assert result.exit_code == 1, result.output  # answered (by the other host): no series
    assert len(other.requests) > 10
    assert [auth for _, auth in other.requests if auth is not None] == []
    client = PromClient.with_auth(server.url, 5, bearer="SECRET-BEARER-TOKEN-123")
    assert client.query("same") == []
    moved = [auth for path, auth in server.requests if path.startswith("/moved")]
    assert moved == ["Bearer SECRET-BEARER-TOKEN-123"]


MALFORMED = {
    "missing value": vector([{"metric": {"instance": "node001:9100"}}]),
    "null value": vector([{"metric": {"instance": "node001:9100"}, "value": None}]),
    "bad value": vector([{"metric": {"instance": "node001:9100"}, "value": [1, "abc"]}]),
    "null result": json.dumps({"status": "success",
                               "data": {"resultType": "vector", "result": None}}).encode(),
    "result of strings": vector(["x", 1, None]),
    "labels not an object": vector([{"metric": "x", "value": [1, "1"]}]),
    "deep": b"[" * 200_000 + b"]" * 200_000,
}


@pytest.mark.parametrize("body", list(MALFORMED.values()), ids=list(MALFORMED))
def test_a_malformed_answer_is_a_clear_error_not_an_internal_one(
        tmp_path: Path, serve: Callable[..., Hostile], run: Callable[..., Result],
        body: bytes) -> None:
    server = serve(lambda h: send(h, body))
    with pytest.raises(PromError) as caught:
        PromClient(server.url, 5).query("up")
    assert caught.value.kind in ("bad-query", "unreachable")
    result = run("--config", str(config(tmp_path, server.url, timeout="5s")), "prom", "check")
    assert result.exit_code == 2, result.output
    assert result.output.startswith("fabtui: prometheus ")
    assert "internal error" not in result.output


EVIL = "\x1b]0;PWNED-TITLE\x07\x1b[2J\x1b[31mRED\r\nfabtui: all good\x00\u202e"


def test_control_characters_from_the_server_never_reach_the_terminal(
        tmp_path: Path, serve: Callable[..., Hostile]) -> None:
    error = json.dumps({"status": "error", "errorType": "bad_data", "error": EVIL}).encode()
    server = serve(lambda h: send(h, error, 400))
    code, output, _ = fabtui(config(tmp_path, server.url, timeout="5s"), "prom", "check")
    assert code == 2
    assert not any(c in output for c in "\x1b\x07\r\x00\u202e"), repr(output)
    assert "\\x1b]0;PWNED-TITLE\\x07\\x1b[2J\\x1b[31mRED\\r\\nfabtui: all good" in output
    labelled = serve(lambda h: send(h, vector([{"metric": {"instance": f"node001{EVIL}:9100"},
                                                "value": [time.time(), "1"]}])))
    [sample] = PromClient(labelled.url, 5).query("up")
    assert sample.labels["instance"] == ("node001\\x1b]0;PWNED-TITLE\\x07\\x1b[2J\\x1b[31mRED"
                                         "\\r\\nfabtui: all good\\x00\\u202e:9100")


def test_a_long_error_from_the_server_is_cut(serve: Callable[..., Hostile]) -> None:
    error = json.dumps({"status": "error", "errorType": "bad_data", "error": "E" * 100_000})
    server = serve(lambda h: send(h, error.encode(), 400))
    with pytest.raises(PromError) as caught:
        PromClient(server.url, 5).query("up")
    assert len(str(caught.value)) < 600
    assert str(caught.value).endswith("... (99,500 more characters)")


def test_a_password_in_the_url_is_refused_and_never_shown(tmp_path: Path,
                                                          run: Callable[..., Result]) -> None:
    path = config(tmp_path, f"http://oncall:Pa55w0rd@127.0.0.1:{free_port()}/", timeout="2s")
    result = run("--config", str(path), "prom", "check")
    assert result.exit_code == 2
    assert "Pa55w0rd" not in result.output
    assert f"{path}:3: prometheus.url: holds a user name or password before '@'" \
        in result.output
    # a client given such a URL by other code does not show it either
    with pytest.raises(PromError) as caught:
        PromClient(f"http://oncall:Pa55w0rd@127.0.0.1:{free_port()}", 2).query("up")
    assert "Pa55w0rd" not in str(caught.value) and "oncall" not in str(caught.value)
