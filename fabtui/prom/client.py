"""A small Prometheus HTTP API client (`/api/v1/query`, `/api/v1/query_range`) on urllib.

Every request has a deadline: the socket timeout, and the same figure as the query's own
`timeout` parameter so Prometheus gives up too instead of computing for nobody. Failures are one
`PromError` with a kind a face can show as a state: `unreachable` (no connection, DNS, refused,
an HTTP error from a proxy), `timeout` (no answer in time, or Prometheus's own query timeout),
`auth` (401/403) and `bad-query` (Prometheus rejected the PromQL). Secrets (a bearer token, a
basic-auth password) go into the request headers only, never into a message.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Literal

ErrorKind = Literal["unreachable", "timeout", "auth", "bad-query"]


class PromError(Exception):
    """A request Prometheus did not answer usefully; `kind` says which way."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
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

    def query(self, promql: str, at: float | None = None) -> list[Sample]:
        """The instant vector `promql` evaluates to (now, or at `at`)."""
        params = {"query": promql}
        if at is not None:
            params["time"] = f"{at:.3f}"
        data = self._get("/api/v1/query", params)
        if data.get("resultType") != "vector":
            raise PromError("bad-query", f"{promql}: expected an instant vector, got "
                                         f"{data.get('resultType')}")
        return [Sample(item["metric"], float(item["value"][1]), float(item["value"][0]))
                for item in data["result"]]

    def query_range(self, promql: str, start: float, end: float, step: float) -> list[Series]:
        """The series `promql` evaluates to from `start` to `end` every `step` seconds."""
        data = self._get("/api/v1/query_range", {"query": promql, "start": f"{start:.3f}",
                                                 "end": f"{end:.3f}", "step": f"{step:g}"})
        if data.get("resultType") != "matrix":
            raise PromError("bad-query", f"{promql}: expected a range vector, got "
                                         f"{data.get('resultType')}")
        return [Series(item["metric"], tuple((float(t), float(v)) for t, v in item["values"]))
                for item in data["result"]]

    def _get(self, path: str, params: dict[str, str]) -> dict[str, Any]:
        params = {**params, "timeout": f"{self.timeout:g}s"}
        url = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        request = urllib.request.Request(url, headers={"Accept": "application/json",
                                                       **self.headers})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                body = response.read()
        except urllib.error.HTTPError as exc:
            body = exc.read() if exc.fp is not None else b""
            if exc.code in (401, 403):
                raise PromError("auth", f"{self.url}: HTTP {exc.code}: check the Prometheus "
                                        "credentials reference") from None
            kind, reason = _api_error(body)
            if kind == "timeout":  # Prometheus's own query timeout (errorType timeout)
                raise PromError("timeout", f"{self.url}: {reason}") from None
            if kind == "bad_data" or (exc.code in (400, 422) and reason):
                raise PromError("bad-query", f"{params['query']}: {reason}") from None
            raise PromError("unreachable", f"{self.url}: HTTP {exc.code} "
                                           f"{reason or exc.reason}") from None
        except TimeoutError:
            raise PromError("timeout", f"{self.url}: no answer within {self.timeout:g}s "
                                       "(prometheus.timeout)") from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise PromError("timeout", f"{self.url}: no answer within {self.timeout:g}s "
                                           "(prometheus.timeout)") from None
            raise PromError("unreachable", f"{self.url}: {exc.reason}") from None
        except (ConnectionError, OSError) as exc:
            raise PromError("unreachable", f"{self.url}: {exc}") from None
        try:
            document = json.loads(body)
        except ValueError:
            raise PromError("unreachable", f"{self.url}: the answer is not Prometheus's JSON "
                                           "(is this the Prometheus URL?)") from None
        if not isinstance(document, dict) or document.get("status") != "success":
            reason = document.get("error", "unknown error") if isinstance(document, dict) \
                else "unexpected answer"
            raise PromError("bad-query", f"{params['query']}: {reason}")
        data = document.get("data")
        if not isinstance(data, dict):
            raise PromError("unreachable", f"{self.url}: the answer has no data")
        return data


def _api_error(body: bytes) -> tuple[str | None, str | None]:
    """(errorType, error) of an API error answer; (None, None) when it is not one."""
    try:
        document = json.loads(body)
    except ValueError:
        return None, None
    if not isinstance(document, dict) or not document.get("error"):
        return None, None
    kind = document.get("errorType")
    return (str(kind) if kind else None), str(document["error"])
