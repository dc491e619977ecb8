"""Alertmanager's webhook payload (version 4), read strictly enough to lose nothing silently.

Alertmanager POSTs one JSON object per notification of an alert group: `version` ("4"),
`groupKey`, `truncatedAlerts`, `status`, `receiver`, `groupLabels`, `commonLabels`,
`commonAnnotations`, `externalURL` and `alerts`, each with `status` (firing or resolved),
`labels`, `annotations`, `startsAt`, `endsAt`, `generatorURL` and `fingerprint`
(prometheus/alertmanager `notify/webhook/webhook.go`, `Message`; `template/template.go`,
`Data` and `Alert`). A body that is not such an object raises `PayloadError` saying what is
wrong, where; an alert that lacks what the receiver needs is skipped with a note, never the
whole notification.

Pure functions, no I/O.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

VERSION = "4"
"""The payload version this reader knows (Alertmanager has sent 4 since 0.7)."""


class PayloadError(ValueError):
    """The body is not an Alertmanager webhook notification (the message says why)."""


@dataclass(frozen=True)
class Alert:
    """One alert of a notification."""

    fingerprint: str
    status: str
    """`firing` or `resolved`."""
    labels: dict[str, str]
    annotations: dict[str, str]
    starts_at: str
    ends_at: str = ""
    generator_url: str = ""

    @property
    def name(self) -> str:
        return self.labels.get("alertname", "")

    @property
    def firing(self) -> bool:
        return self.status == "firing"


@dataclass(frozen=True)
class Notification:
    """One webhook POST."""

    receiver: str
    status: str
    alerts: tuple[Alert, ...]
    group_key: str = ""
    external_url: str = ""
    truncated: int = 0
    """Alerts Alertmanager left out (`max_alerts` of the webhook config)."""
    notes: tuple[str, ...] = field(default=())
    """What was skipped or odd in the body, one line each."""


def _strings(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise PayloadError(f"{where}: an object of strings, not {type(value).__name__}")
    return {str(k): str(v) for k, v in value.items()}


def fingerprint_of(labels: dict[str, str]) -> str:
    """A stable id for an alert sent without `fingerprint` (an older or hand-made sender):
    the hash of its sorted labels, as Alertmanager's own fingerprint identifies an alert by
    its label set."""
    text = json.dumps(sorted(labels.items()))
    return "fabtui-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def parse_notification(body: bytes | str) -> Notification:
    """The notification in `body`. Raises `PayloadError` for a body that is not JSON, not an
    object, of another version, or without an `alerts` list."""
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise PayloadError(f"body is not JSON (line {exc.lineno} column {exc.colno}: "
                           f"{exc.msg})") from None
    except UnicodeDecodeError as exc:
        raise PayloadError(f"body is not UTF-8 text ({exc.reason} at byte {exc.start})") \
            from None
    if not isinstance(data, dict):
        raise PayloadError(f"body is a JSON {type(data).__name__}, not an Alertmanager "
                           "notification object")
    version = data.get("version")
    if version is not None and str(version) != VERSION:
        raise PayloadError(f"version {version!r}: this receiver reads Alertmanager's webhook "
                           f"payload version {VERSION}")
    raw = data.get("alerts")
    if not isinstance(raw, list):
        raise PayloadError("no `alerts` list: not an Alertmanager webhook notification")
    alerts: list[Alert] = []
    notes: list[str] = []
    for index, item in enumerate(raw):
        where = f"alerts[{index}]"
        if not isinstance(item, dict):
            notes.append(f"{where}: not an object, skipped")
            continue
        try:
            labels = _strings(item.get("labels"), f"{where}.labels")
            annotations = _strings(item.get("annotations"), f"{where}.annotations")
        except PayloadError as exc:
            notes.append(f"{exc}; skipped")
            continue
        status = str(item.get("status") or data.get("status") or "firing")
        if status not in ("firing", "resolved"):
            notes.append(f"{where}: status {status!r} is neither firing nor resolved; skipped")
            continue
        if not labels:
            notes.append(f"{where}: no labels; skipped")
            continue
        fingerprint = str(item.get("fingerprint") or "") or fingerprint_of(labels)
        alerts.append(Alert(fingerprint, status, labels, annotations,
                            str(item.get("startsAt") or ""), str(item.get("endsAt") or ""),
                            str(item.get("generatorURL") or "")))
    truncated = data.get("truncatedAlerts") or 0
    if isinstance(truncated, int) and truncated > 0:
        notes.append(f"Alertmanager left out {truncated} alert(s) of this group (max_alerts "
                     "of the webhook config): they reach fabtui only when the group is sent "
                     "again")
    return Notification(receiver=str(data.get("receiver") or ""),
                        status=str(data.get("status") or ""), alerts=tuple(alerts),
                        group_key=str(data.get("groupKey") or ""),
                        external_url=str(data.get("externalURL") or ""),
                        truncated=truncated if isinstance(truncated, int) else 0,
                        notes=tuple(notes))
