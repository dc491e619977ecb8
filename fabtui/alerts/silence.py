"""Silences for an incident's alerts: suggested as text, applied only through a typed gate.

`suggest(incident)` gives one silence per element the incident's firing alerts name (its
labels, without `alertname`, `severity` and fabtui's own, matched exactly, and the alert names
as one regex), shown as the `amtool silence add` command an operator could run and as the body
Alertmanager's API v2 takes (`POST /api/v2/silences`, `postableSilence`: matchers with `name`,
`value`, `isRegex`, `isEqual`; `startsAt`, `endsAt`, `createdBy`, `comment`). A silence hides
symptoms while the suspect is worked on; it never fixes anything, so it is never applied by
itself: `gate_phrase(incident)` is what the operator must type (the suspect element, as a
dangerous probe asks for its target), and the workspace journals the request before sending
and the silence ids after.

Pure: text and data, no I/O.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from fabtui.alerts.incidents import Incident

_KEEP_OUT = ("alertname", "severity")


@dataclass(frozen=True)
class Matcher:
    name: str
    value: str
    regex: bool = False

    def text(self) -> str:
        """As amtool takes it (`name="value"`, `name=~"regex"`)."""
        escaped = self.value.replace("\\", "\\\\").replace('"', '\\"')
        return f'{self.name}{"=~" if self.regex else "="}"{escaped}"'


@dataclass(frozen=True)
class SilenceSpec:
    """One suggested silence."""

    matchers: tuple[Matcher, ...]
    duration_s: float
    comment: str

    def amtool(self, url: str = "http://127.0.0.1:9093") -> str:
        """The `amtool silence add` command line (every value quoted for the shell)."""
        hours = self.duration_s / 3600
        duration = f"{hours:g}h" if hours >= 1 else f"{self.duration_s / 60:g}m"
        words = ["amtool", "silence", "add", f"--alertmanager.url={url}",
                 f"--duration={duration}", f"--comment={self.comment}",
                 *(m.text() for m in self.matchers)]
        return " ".join(shlex.quote(w) for w in words)

    def body(self, author: str, now: datetime | None = None) -> dict[str, Any]:
        """The API v2 `postableSilence`."""
        start = now or datetime.now(UTC)
        end = start + timedelta(seconds=self.duration_s)
        return {"matchers": [{"name": m.name, "value": m.value, "isRegex": m.regex,
                              "isEqual": True} for m in self.matchers],
                "startsAt": start.isoformat().replace("+00:00", "Z"),
                "endsAt": end.isoformat().replace("+00:00", "Z"),
                "createdBy": author, "comment": self.comment}


def gate_phrase(incident: Incident) -> str:
    """What the operator types to apply the incident's silences: its suspect element."""
    return incident.suspect


def suggest(incident: Incident, duration_s: float = 7200.0) -> list[SilenceSpec]:
    """One silence per element named by the incident's firing alerts (see the module
    docstring); none when nothing fires."""
    by_element: dict[tuple[tuple[str, str], ...], set[str]] = {}
    for alert in incident.firing:
        labels = tuple(sorted((k, v) for k, v in alert.labels.items()
                              if k not in _KEEP_OUT and not k.startswith("fabtui_")))
        by_element.setdefault(labels, set()).add(alert.name)
    comment = f"fabtui incident {incident.id}: suspect {incident.suspect}"
    specs = []
    for labels, names in sorted(by_element.items()):
        ordered = sorted(names)
        name = Matcher("alertname", ordered[0]) if len(ordered) == 1 else \
            Matcher("alertname", "|".join(re.escape(n) for n in ordered), regex=True)
        specs.append(SilenceSpec((name, *(Matcher(k, v) for k, v in labels)), duration_s,
                                 comment))
    return specs
