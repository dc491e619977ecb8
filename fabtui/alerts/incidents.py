"""Incidents: one per group of simultaneous alerts, journaled before anyone is told.

`IncidentBook.receive(notification)` updates the alerts firing now (by fingerprint), groups
them all again (`fabtui.alerts.grouping`) and reconciles the groups with the open incidents:
a group none of whose alerts belongs to an open incident opens one; a group that holds alerts
of one incident adds its new alerts to it (and names a new suspect when the evidence moved);
a group that spans several incidents merges them into the oldest. An incident whose alerts
have all resolved is resolved. An operator may close an incident by hand (`close`, with a
reason, journaled with who): it leaves the open list; the alerts it held that are still firing
do not reopen it when Alertmanager sends them again or resolves them; a new firing does (one
of its alerts with a new `startsAt`, or a new alert on its suspect), within `REOPEN_S` of the
close (later, it is a new incident). Alerts whose labels name
nothing in the topology are never dropped: they gather in one `unmapped` incident per alert
name, and the receipt says so.

Every change is an event in the alerts journal (`fabtui.journal.store.Journal`, its own file
beside the runbook journal: one journal session per incident), committed before `receive`
returns, so the HTTP answer Alertmanager gets means "on disk"; a restarted receiver reads the
open incidents and their firing alerts back from it (`load`).

What an incident says besides its alerts (blast radius, runbook, similar cases, the jobs and
ranks behind it) comes from `enrich`, and the running jobs symptoms may group by from `jobs`;
the workspace supplies both (`fabtui.workspace.alerting`).

Side effects: writes the journal. Not thread-safe: the receiver serialises calls.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from fabtui.alerts.grouping import Group, Jobs, Placed, group_alerts
from fabtui.alerts.locate import FAULT, ROLE, Locator
from fabtui.alerts.payload import Alert, Notification
from fabtui.journal.store import Journal

RUNBOOK = "alertmanager"
"""The `runbook` column of an incident's journal session."""
OPEN, RESOLVED, MERGED, CLOSED = "open", "resolved", "merged", "closed"
UNMAPPED = "unmapped"
REOPEN_S = 900.0
"""An incident resolved less than this long ago opens again when its suspect alerts again
(a link that flaps every few minutes is one incident, not one per flap)."""


@dataclass
class AlertRecord:
    """An alert as an incident keeps it."""

    fingerprint: str
    name: str
    status: str
    element: str
    severity: str
    role: str
    fault: str
    summary: str
    starts_at: str
    labels: dict[str, str]
    runbook: str = ""
    threshold: str = ""

    @classmethod
    def of(cls, alert: Alert, element: str) -> AlertRecord:
        notes = alert.annotations
        return cls(alert.fingerprint, alert.name, alert.status, element,
                   alert.labels.get("severity", ""), alert.labels.get(ROLE, "cause"),
                   alert.labels.get(FAULT, ""), notes.get("summary", "") or
                   notes.get("description", ""), alert.starts_at, dict(alert.labels),
                   notes.get("runbook", ""), notes.get("threshold", ""))

    def record(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> AlertRecord:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)


@dataclass
class Context:
    """What an incident says about its suspect beyond the alerts (see the module docstring)."""

    blast: dict[str, Any] = field(default_factory=dict)
    runbook: str | None = None
    similar: list[str] = field(default_factory=list)
    impact: list[str] = field(default_factory=list)
    """Jobs and ranks behind the suspect, one line each."""


Enrich = Callable[[str, str, list[AlertRecord]], Context]


@dataclass
class Incident:
    """One incident, as its journal events fold."""

    id: str
    opened_at: float
    suspect: str
    kind: str
    reason: str
    status: str = OPEN
    alerts: dict[str, AlertRecord] = field(default_factory=dict)
    context: Context = field(default_factory=Context)
    resolved_at: float | None = None
    merged_into: str | None = None
    silences: list[dict[str, Any]] = field(default_factory=list)
    alertmanager: str = ""
    """The Alertmanager that sent its first alerts (where its silences go)."""
    seen_at: float = 0.0
    """When it last changed (journal time)."""
    closed_by: str = ""
    """Who closed it by hand (the last time), and why."""
    close_reason: str = ""

    @property
    def firing(self) -> list[AlertRecord]:
        return [a for a in self.alerts.values() if a.status == "firing"]

    @property
    def explains(self) -> list[AlertRecord]:
        """The alerts it explains: the suspect's own first, then the symptoms."""
        return sorted(self.alerts.values(), key=lambda a: (a.element != self.suspect,
                                                           a.role != "cause", a.name,
                                                           a.element))

    @property
    def title(self) -> str:
        names = sorted({a.name for a in self.alerts.values()})
        shown = ", ".join(names[:3]) + (f" +{len(names) - 3}" if len(names) > 3 else "")
        return f"{self.suspect}: {shown}"


@dataclass
class Receipt:
    """What one notification did."""

    alerts: int = 0
    firing: int = 0
    resolved: int = 0
    opened: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)
    unmapped: int = 0
    held: int = 0
    """Firing alerts of hand-closed incidents sent again (the same firing): kept closed."""
    notes: list[str] = field(default_factory=list)
    suspects: dict[str, str] = field(default_factory=dict)
    """Incident id -> its suspect, for the incidents this notification opened or changed."""

    def line(self) -> str:
        """One log line."""
        parts = [f"{self.alerts} alert(s) ({self.firing} firing, {self.resolved} resolved)"]
        for label, ids in (("opened", self.opened), ("updated", self.updated),
                           ("resolved", self.closed)):
            if ids:
                named = [f"{i} ({self.suspects[i]})" if i in self.suspects else i for i in ids]
                parts.append(f"{label} {', '.join(named)}")
        if self.unmapped:
            parts.append(f"{self.unmapped} name nothing in the topology (incident "
                         f"'{UNMAPPED}')")
        if self.held:
            parts.append(f"{self.held} still firing in incident(s) closed by hand (kept "
                         "closed)")
        return "; ".join(parts)


class IncidentBook:
    """The incidents of one fabric, kept in an alerts journal (see the module docstring)."""

    def __init__(self, journal: Journal, locator: Locator, enrich: Enrich | None = None,
                 jobs: Callable[[], Jobs | None] | None = None) -> None:
        self.journal = journal
        self.locator = locator
        self.enrich = enrich or (lambda _s, _k, _a: Context())
        self.jobs = jobs
        """The running jobs (from Slurm), for grouping symptoms by the job behind them."""
        self.incidents: dict[str, Incident] = {}
        self.active: dict[str, Placed] = {}
        """Firing alerts that name a topology element, by fingerprint."""
        self.owner: dict[str, str] = {}
        """Fingerprint -> the incident it belongs to."""
        self.held: dict[str, tuple[str, str]] = {}
        """Fingerprint -> (the hand-closed incident, `startsAt`) of an alert that was firing
        when its incident was closed: sent again unchanged, it is not grouped again."""
        self._others: tuple[int, int] | None = None
        """Other writers' commits to the journal when this book last read it (`sync`; the
        book's own writes, through its `Journal`, do not count)."""
        self.load()

    # reading back ---------------------------------------------------------------------------
    def load(self, limit: int = 10_000) -> None:
        """Read the incidents back from the journal (their firing alerts become active)."""
        self.incidents.clear()
        self.active.clear()
        self.owner.clear()
        self.held.clear()
        # The stamp before the read: a write made meanwhile is read again at the next `sync`.
        self._others = self.journal.changes().others
        for info in reversed(self.journal.sessions(limit)):
            incident = fold(info.id, info.started_at, self.journal.iter_events(info.id))
            if incident is None:
                continue
            self.incidents[incident.id] = incident
            if incident.status == CLOSED:
                self.held.update({r.fingerprint: (incident.id, r.starts_at)
                                  for r in incident.firing})
            if incident.status != OPEN:
                continue
            for record in incident.firing:
                self.owner[record.fingerprint] = incident.id
                alert = Alert(record.fingerprint, "firing", record.labels, {},
                              record.starts_at)
                where = self.locator.locate(alert)
                if where is not None:
                    self.active[record.fingerprint] = Placed(alert, where)

    def sync(self) -> bool:
        """Read the journal back when another process wrote to it since (`fabtui alerts
        close` while `fabtui alerts serve` runs); True when it did. Asks SQLite's
        data_version (`Journal.changes`), not the tables: cheap on every notification."""
        if self.journal.changes().others == self._others:
            return False
        self.journal.forget_sequences()
        self.load()
        return True

    def _append(self, incident_id: str, kind: str, data: dict[str, Any]) -> None:
        self.journal.append(incident_id, kind, data=data)

    def open_incidents(self) -> list[Incident]:
        """Open incidents, newest first."""
        return sorted((i for i in self.incidents.values() if i.status == OPEN),
                      key=lambda i: -i.opened_at)

    # receiving ------------------------------------------------------------------------------
    def receive(self, notification: Notification) -> Receipt:
        """Apply one notification (see the module docstring); journaled before returning."""
        receipt = Receipt(alerts=len(notification.alerts), notes=list(notification.notes))
        unmapped: dict[str, list[AlertRecord]] = {}
        touched: dict[str, list[AlertRecord]] = {}
        resolved: dict[str, list[str]] = {}
        for alert in notification.alerts:
            if not alert.firing:
                receipt.resolved += 1
                self.held.pop(alert.fingerprint, None)  # a hand-closed incident stays closed
                self.active.pop(alert.fingerprint, None)
                owner = self.owner.get(alert.fingerprint)
                if owner is not None:
                    resolved.setdefault(owner, []).append(alert.fingerprint)
                continue
            receipt.firing += 1
            held = self.held.get(alert.fingerprint)
            if held is not None:
                if held[1] == alert.starts_at:  # the firing its incident was closed on
                    receipt.held += 1
                    continue
                del self.held[alert.fingerprint]  # it resolved and fires again
            where = self.locator.locate(alert)
            if where is None:
                receipt.unmapped += 1
                unmapped.setdefault(alert.name or "(no alertname)", []).append(
                    AlertRecord.of(alert, ""))
                continue
            known = self.active.get(alert.fingerprint)
            self.active[alert.fingerprint] = Placed(alert, where)
            if known is None or alert.fingerprint not in self.owner:
                touched.setdefault("", []).append(AlertRecord.of(alert, where.element))
        if receipt.unmapped:
            first = next(iter(unmapped.values()))[0]
            receipt.notes.append(
                f"{receipt.unmapped} firing alert(s) name nothing in the topology, e.g. "
                f"{first.name} {_label_text(first.labels)}: kept in the '{UNMAPPED}' "
                "incident; check [prometheus.labels] and the alert's labels")
        self._resolve(resolved, receipt)
        if touched:
            self._regroup(receipt, notification.external_url)
        for name, records in unmapped.items():
            self._unmapped(name, records, receipt, notification.external_url)
        return receipt

    def _resolve(self, resolved: dict[str, list[str]], receipt: Receipt) -> None:
        for incident_id, fingerprints in resolved.items():
            incident = self.incidents[incident_id]
            if incident.status != OPEN:
                continue
            for fp in fingerprints:
                if fp in incident.alerts:
                    incident.alerts[fp].status = "resolved"
                self.owner.pop(fp, None)
            self._append(incident_id, "alerts_resolved",
                         {"fingerprints": fingerprints})
            if not incident.firing:
                self._close(incident, RESOLVED)
                receipt.closed.append(incident_id)
            elif incident_id not in receipt.updated:
                receipt.updated.append(incident_id)

    def _close(self, incident: Incident, status: str, into: str | None = None) -> None:
        incident.status = status
        incident.resolved_at = time.time()
        if into is not None:
            incident.merged_into = into
            self._append(incident.id, "incident_merged", {"incident": into})
        else:
            self._append(incident.id, "incident_resolved", {})
        self.journal.set_status(incident.id, status)

    def _regroup(self, receipt: Receipt, sender: str = "") -> None:
        """Group every firing alert again and reconcile with the open incidents."""
        groups = group_alerts(list(self.active.values()), self.locator.tier, self.jobs)
        for group in groups:
            owners = sorted({self.owner[fp] for fp in group.fingerprints if fp in self.owner
                             and self.incidents[self.owner[fp]].status == OPEN},
                            key=lambda i: (self.incidents[i].opened_at, i))
            new = [p for p in group.alerts if p.alert.fingerprint not in self.owner]
            if not owners:
                if not new:
                    continue
                again = self._recent(group.suspect, {p.alert.fingerprint for p in new})
                if again is not None:
                    self._reopen(again, [AlertRecord.of(p.alert, p.where.element)
                                         for p in new])
                    receipt.opened.append(again.id)
                    receipt.suspects[again.id] = again.suspect
                    continue
                opened = self._open(group, sender)
                receipt.opened.append(opened)
                receipt.suspects[opened] = group.suspect
                continue
            keep = self.incidents[owners[0]]
            for other_id in owners[1:]:
                other = self.incidents[other_id]
                moved = [a for a in other.alerts.values() if a.status == "firing"]
                self._add(keep, moved)
                self._close(other, MERGED, into=keep.id)
                receipt.closed.append(other_id)
            if new:
                self._add(keep, [AlertRecord.of(p.alert, p.where.element) for p in new])
            if (group.suspect, group.kind) != (keep.suspect, keep.kind):
                self._suspect(keep, group)
            if (new or owners[1:]) and keep.id not in receipt.updated:
                receipt.updated.append(keep.id)
                receipt.suspects[keep.id] = keep.suspect

    def _recent(self, suspect: str, fingerprints: set[str]) -> Incident | None:
        """The incident resolved or closed by hand within `REOPEN_S` on `suspect`, or that
        held one of `fingerprints` (firing again), if any."""
        now = time.time()
        found = [i for i in self.incidents.values() if i.status in (RESOLVED, CLOSED) and
                 (i.suspect == suspect or not fingerprints.isdisjoint(i.alerts)) and
                 i.resolved_at is not None and now - i.resolved_at < REOPEN_S]
        return max(found, key=lambda i: i.resolved_at or 0.0) if found else None

    def _reopen(self, incident: Incident, records: list[AlertRecord]) -> None:
        self._append(incident.id, "incident_reopened",
                     {"alerts": [r.record() for r in records]})
        self.journal.set_status(incident.id, OPEN)
        incident.status, incident.resolved_at = OPEN, None
        for fp, (owner, _) in list(self.held.items()):
            if owner == incident.id:  # its other alerts still firing belong to it again
                del self.held[fp]
                self.owner[fp] = incident.id
        for r in records:
            incident.alerts[r.fingerprint] = r
            self.owner[r.fingerprint] = incident.id

    def _open(self, group: Group, sender: str = "") -> str:
        records = [AlertRecord.of(p.alert, p.where.element) for p in group.alerts]
        context = self.enrich(group.suspect, group.kind, records)
        incident_id = self.journal.start(RUNBOOK, f"{group.suspect}: {group.reason}"[:200],
                                         "alertmanager", "", {})
        self._append(incident_id, "incident_opened", {
            "suspect": group.suspect, "kind": group.kind, "reason": group.reason,
            "alertmanager": sender, "context": context.__dict__,
            "alerts": [r.record() for r in records]})
        self.journal.set_status(incident_id, OPEN)
        incident = Incident(incident_id, time.time(), group.suspect, group.kind, group.reason,
                            alerts={r.fingerprint: r for r in records}, context=context,
                            alertmanager=sender)
        self.incidents[incident_id] = incident
        for r in records:
            self.owner[r.fingerprint] = incident_id
        return incident_id

    def _add(self, incident: Incident, records: list[AlertRecord]) -> None:
        if not records:
            return
        self._append(incident.id, "alerts_firing", {"alerts": [r.record() for r in records]})
        for r in records:
            incident.alerts[r.fingerprint] = r
            self.owner[r.fingerprint] = incident.id

    def _suspect(self, incident: Incident, group: Group) -> None:
        context = self.enrich(group.suspect, group.kind, list(incident.alerts.values()))
        self._append(incident.id, "suspect_changed", {
            "suspect": group.suspect, "kind": group.kind, "reason": group.reason,
            "was": incident.suspect, "context": context.__dict__})
        incident.suspect, incident.kind, incident.reason = group.suspect, group.kind, \
            group.reason
        incident.context = context

    def _unmapped(self, name: str, records: list[AlertRecord], receipt: Receipt,
                  sender: str) -> None:
        suspect = f"{UNMAPPED}:{name}"
        found = next((i for i in self.incidents.values()
                      if i.status == OPEN and i.suspect == suspect), None)
        new = [r for r in records if found is None or r.fingerprint not in found.alerts]
        if found is None:
            incident_id = self.journal.start(RUNBOOK, f"{suspect}: alerts naming nothing in "
                                             "the topology", "alertmanager", "", {})
            reason = ("their labels name no element of the topology (label mapping "
                      "[prometheus.labels])")
            self._append(incident_id, "incident_opened", {
                "suspect": suspect, "kind": UNMAPPED, "reason": reason,
                "alertmanager": sender, "context": Context().__dict__,
                "alerts": [r.record() for r in records]})
            self.journal.set_status(incident_id, OPEN)
            found = Incident(incident_id, time.time(), suspect, UNMAPPED, reason,
                             alerts={r.fingerprint: r for r in records}, alertmanager=sender)
            self.incidents[incident_id] = found
            receipt.opened.append(incident_id)
        elif new:
            self._append(found.id, "alerts_firing", {"alerts": [r.record() for r in new]})
            for r in new:
                found.alerts[r.fingerprint] = r
            receipt.updated.append(found.id)
        for r in records:
            self.owner[r.fingerprint] = found.id

    # by hand -------------------------------------------------------------------------------
    def close(self, incident_id: str, reason: str, operator: str) -> Incident:
        """Close an open incident by hand, journaled with who and why (see the module
        docstring). Raises `ValueError` for an incident that is not open or an empty reason."""
        incident = self.incidents.get(incident_id)
        if incident is None or incident.status != OPEN:
            status = incident.status if incident is not None else "unknown"
            raise ValueError(f"incident {incident_id} is {status}, not open: nothing to close")
        if not reason.strip():
            raise ValueError("a reason is required to close an incident (it is journaled)")
        firing = {r.fingerprint: r.starts_at for r in incident.firing}
        self._append(incident_id, "incident_closed", {"reason": reason.strip(),
                                                      "operator": operator,
                                                      "firing": sorted(firing)})
        self.journal.set_status(incident_id, CLOSED)
        incident.status, incident.resolved_at = CLOSED, time.time()
        incident.closed_by, incident.close_reason = operator, reason.strip()
        for fp, starts_at in firing.items():
            self.owner.pop(fp, None)
            self.active.pop(fp, None)
            self.held[fp] = (incident_id, starts_at)
        return incident

    # silences -------------------------------------------------------------------------------
    def record(self, incident_id: str, kind: str, data: dict[str, Any]) -> None:
        """Journal an operator's action on an incident (`silence_applied` ...)."""
        self._append(incident_id, kind, data)
        incident = self.incidents.get(incident_id)
        if incident is not None and kind == "silence_applied":
            incident.silences.append(data)


def _label_text(labels: dict[str, str]) -> str:
    shown = [f'{k}="{v}"' for k, v in sorted(labels.items())
             if k not in ("alertname", "severity") and not k.startswith("fabtui_")]
    return "{" + ", ".join(shown[:6]) + "}"


def fold(incident_id: str, started: float, events: Iterable[Any]) -> Incident | None:
    """An incident from its journal events (None when the session is not an incident)."""
    incident: Incident | None = None
    for event in events:
        data = event.data.model_dump(mode="json")
        if event.kind == "incident_opened":
            records = [AlertRecord.from_record(r) for r in data.get("alerts", [])]
            incident = Incident(incident_id, event.at, data["suspect"], data["kind"],
                                data.get("reason", ""),
                                alerts={r.fingerprint: r for r in records},
                                context=Context(**data.get("context", {})),
                                alertmanager=data.get("alertmanager", ""))
        elif incident is None:
            continue
        elif event.kind in ("alerts_firing", "incident_reopened"):
            if event.kind == "incident_reopened":
                incident.status, incident.resolved_at = OPEN, None
            for r in data.get("alerts", []):
                record = AlertRecord.from_record(r)
                incident.alerts[record.fingerprint] = record
        elif event.kind == "alerts_resolved":
            for fp in data.get("fingerprints", []):
                if fp in incident.alerts:
                    incident.alerts[fp].status = "resolved"
        elif event.kind == "suspect_changed":
            incident.suspect, incident.kind = data["suspect"], data["kind"]
            incident.reason = data.get("reason", "")
            incident.context = Context(**data.get("context", {}))
        elif event.kind == "incident_resolved":
            incident.status, incident.resolved_at = RESOLVED, event.at
        elif event.kind == "incident_closed":
            incident.status, incident.resolved_at = CLOSED, event.at
            incident.closed_by = data.get("operator", "")
            incident.close_reason = data.get("reason", "")
        elif event.kind == "incident_merged":
            incident.status, incident.resolved_at = MERGED, event.at
            incident.merged_into = data.get("incident")
        elif event.kind == "silence_applied":
            incident.silences.append(data)
        if incident is not None:
            incident.seen_at = event.at
    if incident is not None and incident.opened_at == 0:
        incident.opened_at = started
    return incident
