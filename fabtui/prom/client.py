"""A small Prometheus HTTP API client (`/api/v1/query`, `/api/v1/query_range`) on urllib.

Every request has a deadline: `timeout` seconds for the whole request (connecting, the headers
and every byte of the answer: a server that drips its answer a byte at a time is cut off when
the time is up, not when it stops sending), and the same figure as the query's own `timeout`
parameter so Prometheus gives up too instead of computing for nobody. An answer over
`max_bytes` is refused unread beyond that. Failures are one `PromError` with a kind a face can
show as a state: `unreachable` (no connection, DNS, refused, an HTTP error from a proxy, an
answer that is not Prometheus's), `timeout` (no answer in time, or Prometheus's own query
timeout), `auth` (401/403) and `bad-query` (Prometheus rejected the PromQL, or its answer is too
large or malformed).

Secrets (a bearer token, a basic-auth password) go into the request headers only, never into a
message, and only to the configured server: a redirect to another scheme, host or port is
followed without them. A `user:password@` in the URL is never shown (`shown_url`). Text from
the server (its error message, label values) has its control characters escaped before it
reaches a message, a terminal or a report.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import re
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from fabtui.errors import printable

ErrorKind = Literal["unreachable", "timeout", "auth", "bad-query"]

MAX_ANSWER_BYTES = 64 * 1024 * 1024
"""The largest answer read (the whole state of a 1,024-node fabric is ~10 MB): a larger one is
refused before it costs gigabytes of memory to decode."""
QUOTED = 500
"""Characters of a server's own text (its error message) quoted in a message at most."""
_CHUNK = 1 << 16
_CONTROLS = re.compile(rb"\\u00[01]|\\u007[fF]|\\u00[89]|\\u20(?:2[89a-eA-E]|6[6-9])|"
                       rb"\xc2[\x80-\x9f]|\xe2\x80[\xa8-\xae]|\xe2\x81[\xa6-\xa9]")
"""A control character, raw or as a JSON escape, somewhere in an answer's bytes (a cheap test
before escaping every label value)."""


class PromError(Exception):
    """A request Prometheus did not answer usefully; `kind` says which way. The message is made
    printable: it may quote the server."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(printable(message))
        self.kind = kind


@dataclass(frozen=True)
class Sample:
    """One series of an instant vector: its labels, the value and when it was sampled."""

    labels: dict[str, str]
    value: float
    at: float
    """Epoch seconds of the evaluation (for `timestamp(...)` queries, the value is the sample's)."""


@dataclass(frozen=True)
class Series:
    """One series of a range query: labels and (time, value) points."""

    labels: dict[str, str]
    points: tuple[tuple[float, float], ...]


@dataclass
class PromClient:
    """See the module docstring. `headers` carries the resolved auth (never logged)."""

    url: str
    timeout: float = 10.0
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    max_bytes: int = MAX_ANSWER_BYTES

    @classmethod
    def with_auth(cls, url: str, timeout: float, *, bearer: str | None = None,
                  username: str | None = None, password: str | None = None) -> PromClient:
        """A client that sends a bearer token, or basic auth, with every request."""
        headers: dict[str, str] = {}
        if bearer:
            headers["Authorization"] = f"Bearer {bearer}"
        elif username is not None:
            pair = f"{username}:{password or ''}".encode()
            headers["Authorization"] = f"Basic {base64.b64encode(pair).decode()}"
        return cls(url.rstrip("/"), timeout, headers)

    @property
    def shown_url(self) -> str:
        """The URL as messages show it: without a `user:password@` it may hold."""
        return shown_url(self.url)

    def query(self, promql: str, at: float | None = None) -> list[Sample]:
        """The instant vector `promql` evaluates to (now, or at `at`)."""
        return self.samples(promql, self.fetch(promql, at))

    def fetch(self, promql: str, at: float | None = None) -> bytes:
        """The undecoded answer of the instant query `promql` (`samples` decodes it): many
        fetched concurrently can be decoded one at a time, so that only one answer's objects
        are alive at once (a full read's 55 answers decoded together fragment the heap)."""
        params = {"query": promql}
        if at is not None:
            params["time"] = f"{at:.3f}"
        return self._fetch("/api/v1/query", params)

    def samples(self, promql: str, body: bytes) -> list[Sample]:
        """The instant vector in `body`, the answer `fetch(promql)` got."""
        data, clean = self._decode(body, promql)
        if data.get("resultType") != "vector":
            raise PromError("bad-query", f"{promql}: expected an instant vector, got "
                                         f"{str(data.get('resultType'))[:40]}")
        try:
            return [Sample(clean(item["metric"]), float(item["value"][1]),
                           float(item["value"][0])) for item in _result(data)]
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            raise PromError("bad-query", f"{promql}: malformed answer: a series without "
                                         "its labels or a [time, value] pair") from None

    def query_range(self, promql: str, start: float, end: float, step: float) -> list[Series]:
        """The series `promql` evaluates to from `start` to `end` every `step` seconds."""
        data, clean = self._get("/api/v1/query_range",
                                {"query": promql, "start": f"{start:.3f}", "end": f"{end:.3f}",
                                 "step": f"{step:g}"})
        if data.get("resultType") != "matrix":
            raise PromError("bad-query", f"{promql}: expected a range vector, got "
                                         f"{str(data.get('resultType'))[:40]}")
        try:
            return [Series(clean(item["metric"]),
                           tuple((float(t), float(v)) for t, v in item["values"]))
                    for item in _result(data)]
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            raise PromError("bad-query", f"{promql}: malformed answer: a series without "
                                         "its labels or [time, value] pairs") from None

    def _get(self, path: str, params: dict[str, str]
             ) -> tuple[dict[str, Any], Callable[[Any], dict[str, str]]]:
        """The `data` of an answer, and what makes its label sets safe to show."""
        return self._decode(self._fetch(path, params), params["query"])

    def _fetch(self, path: str, params: dict[str, str]) -> bytes:
        """The body of a successful answer (its HTTP errors raised as `PromError`)."""
        params = {**params, "timeout": f"{self.timeout:g}s"}
        base = self.shown_url  # a user:password@ is never sent (nor shown by an error)
        url = f"{base}{path}?{urllib.parse.urlencode(params)}"
        request = urllib.request.Request(url, headers={"Accept": "application/json"})
        for name, value in self.headers.items():  # never copied to a redirect's request
            request.add_unredirected_header(name, value)
        deadline = _Deadline(self.timeout)
        opener = urllib.request.build_opener(
            _TrackedHTTP(deadline), _TrackedHTTPS(deadline),
            _SameOriginRedirect(base, self.headers))
        where = base
        late = f"{where}: no answer within {self.timeout:g}s (prometheus.timeout)"
        deadline.start()
        try:
            with opener.open(request, timeout=self.timeout) as response:
                body = _read(response, deadline, self.max_bytes)
        except urllib.error.HTTPError as exc:
            if deadline.expired:
                raise PromError("timeout", late) from None
            if exc.code in (401, 403):
                raise PromError("auth", f"{where}: HTTP {exc.code}: check the Prometheus "
                                        "credentials reference") from None
            try:
                body = _read(exc, deadline, 1 << 20) if exc.fp is not None else b""
            except (_TooLarge, OSError, http.client.HTTPException):
                body = b""
            kind, reason = _api_error(body)
            if kind == "timeout":  # Prometheus's own query timeout (errorType timeout)
                raise PromError("timeout", f"{where}: {_quoted(reason)}") from None
            if kind == "bad_data" or (exc.code in (400, 422) and reason):
                raise PromError("bad-query", f"{params['query']}: {_quoted(reason)}") from None
            raise PromError("unreachable", f"{where}: HTTP {exc.code} "
                                           f"{_quoted(reason or str(exc.reason))}") from None
        except _TooLarge:
            raise PromError("bad-query", f"{params['query']}: the answer is larger than "
                                         f"{self.max_bytes // (1 << 20)} MiB: refused (narrow "
                                         "the query or the label mapping)") from None
        except TimeoutError:
            raise PromError("timeout", late) from None
        except urllib.error.URLError as exc:
            if deadline.expired or isinstance(exc.reason, TimeoutError):
                raise PromError("timeout", late) from None
            raise PromError("unreachable", f"{where}: {_quoted(str(exc.reason))}") from None
        except (OSError, http.client.HTTPException) as exc:
            if deadline.expired:
                raise PromError("timeout", late) from None
            raise PromError("unreachable", f"{where}: {_quoted(str(exc) or type(exc).__name__)}"
                            ) from None
        finally:
            deadline.cancel()
        return body

    def _decode(self, body: bytes, promql: str
                ) -> tuple[dict[str, Any], Callable[[Any], dict[str, str]]]:
        """The `data` of an answer's body, and what makes its label sets safe to show."""
        where = self.shown_url
        try:
            document = json.loads(body)
        except (ValueError, RecursionError):
            raise PromError("unreachable", f"{where}: the answer is not Prometheus's JSON "
                                           "(is this the Prometheus URL?)") from None
        if not isinstance(document, dict) or document.get("status") != "success":
            reason = document.get("error", "unknown error") if isinstance(document, dict) \
                else "unexpected answer"
            raise PromError("bad-query", f"{promql}: {_quoted(str(reason))}")
        data = document.get("data")
        if not isinstance(data, dict):
            raise PromError("unreachable", f"{where}: the answer has no data")
        return data, (_printable_labels if _CONTROLS.search(body) else _labels)


def shown_url(url: str) -> str:
    """`url` without the `user:password@` it may hold (messages never show a password)."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def _result(data: dict[str, Any]) -> list[Any]:
    result = data.get("result")
    if not isinstance(result, list):
        raise TypeError("result is not a list")
    return result


def _labels(metric: Any) -> dict[str, str]:
    if not isinstance(metric, dict):
        raise TypeError("labels are not an object")
    return {str(k): str(v) for k, v in metric.items()}


def _printable_labels(metric: Any) -> dict[str, str]:
    """Label names and values with their control characters escaped (they name elements in
    messages, notes and the app's screens)."""
    return {printable(k): printable(v) for k, v in _labels(metric).items()}


def _quoted(text: str | None) -> str:
    """A server's own text as a message quotes it: printable, and not megabytes of it."""
    return printable(text or "", QUOTED)


class _TooLarge(Exception):
    """The answer is over the size limit."""


def _read(response: Any, deadline: _Deadline, limit: int) -> bytes:
    """The body of `response`, read in chunks until the end, the deadline or `limit` bytes."""
    length = response.headers.get("Content-Length") if response.headers else None
    if length is not None and length.strip().isdigit() and int(length) > limit:
        raise _TooLarge
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = response.read(_CHUNK)
        if deadline.expired:
            raise TimeoutError
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > limit:
            raise _TooLarge
        chunks.append(chunk)


class _Deadline:
    """One request's deadline: when it passes, every socket the request opened is shut down,
    so whatever call is blocked on one (a connect, the headers, a drip-fed body) returns at
    once. `start` it before the request, `cancel` it after."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def start(self) -> None:
        self._timer = threading.Timer(self.seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def track(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired
        if expired:
            _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _shut(sock)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # closed already, or never connected
        sock.shutdown(socket.SHUT_RDWR)


class _Tracking:
    """A handler mixin: each connection it opens reports its sockets to the deadline (the raw
    one as soon as it is connected, then the TLS one wrapped around it)."""

    deadline: _Deadline

    def do_open(self, http_class: Any, req: urllib.request.Request, **kwargs: Any
                ) -> http.client.HTTPResponse:
        deadline = self.deadline

        def connection(host: str, **args: Any) -> http.client.HTTPConnection:
            conn: http.client.HTTPConnection = http_class(host, **args)
            create, connect = conn._create_connection, conn.connect  # type: ignore[attr-defined]

            def created(*a: Any, **k: Any) -> socket.socket:
                sock: socket.socket = create(*a, **k)
                deadline.track(sock)
                return sock

            def connected() -> None:
                connect()
                if conn.sock is not None:
                    deadline.track(conn.sock)

            conn._create_connection = created  # type: ignore[attr-defined]
            conn.connect = connected  # type: ignore[method-assign]
            return conn

        opened: http.client.HTTPResponse = super().do_open(  # type: ignore[misc]
            connection, req, **kwargs)
        return opened


class _TrackedHTTP(_Tracking, urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline


class _TrackedHTTPS(_Tracking, urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline


class _SameOriginRedirect(urllib.request.HTTPRedirectHandler):
    """Follows redirects; the credentials go along only to the configured scheme, host and
    port (urllib would copy them to any host a redirect names)."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        self.origin = _origin(url)
        self.headers = headers

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str,
                         headers: Any, newurl: str) -> urllib.request.Request | None:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and _origin(newurl) == self.origin:
            for name, value in self.headers.items():
                new.add_unredirected_header(name, value)
        return new


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), port


def _api_error(body: bytes) -> tuple[str | None, str | None]:
    """(errorType, error) of an API error answer; (None, None) when it is not one."""
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return None, None
    if not isinstance(document, dict) or not document.get("error"):
        return None, None
    kind = document.get("errorType")
    return (str(kind) if kind else None), str(document["error"])
