"""An incident as text: the list row and the full account, shared by `fabtui alerts` and the
app (a face only lays these out). Pure."""

from __future__ import annotations

import time
from typing import Any

from fabtui.alerts.incidents import Incident
from fabtui.alerts.silence import suggest

HEADERS = ("incident", "status", "opened", "suspect", "alerts", "runbook")


def when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


def row(incident: Incident) -> tuple[str, ...]:
    """The incident's line in a list (`HEADERS`)."""
    firing = len(incident.firing)
    total = len(incident.alerts)
    return (incident.id, incident.status, when(incident.opened_at), incident.suspect,
            f"{firing}/{total} firing", incident.context.runbook or "-")


SCREEN_HEADERS = ("opened", "suspect", "firing", "runbook")
"""The app's list: narrow enough for 80 columns (the id is in the account below it)."""


def screen_row(incident: Incident) -> tuple[str, ...]:
    """The incident's line in the app's list (`SCREEN_HEADERS`)."""
    return (time.strftime("%H:%M:%S", time.localtime(incident.opened_at)), incident.suspect,
            f"{len(incident.firing)}/{len(incident.alerts)}", incident.context.runbook or "-")


def summary(incident: Incident) -> dict[str, Any]:
    """The incident as JSON data (`--json`, `GET /incidents`)."""
    return {"id": incident.id, "status": incident.status, "opened_at": incident.opened_at,
            "suspect": incident.suspect, "kind": incident.kind, "reason": incident.reason,
            "runbook": incident.context.runbook, "similar": incident.context.similar,
            "impact": incident.context.impact, "blast": incident.context.blast,
            "merged_into": incident.merged_into, "alertmanager": incident.alertmanager,
            "closed_by": incident.closed_by or None,
            "close_reason": incident.close_reason or None,
            "closed_at": incident.resolved_at if incident.status == "closed" else None,
            "silences": incident.silences,
            "alerts": [{"name": a.name, "status": a.status, "element": a.element,
                        "role": a.role, "severity": a.severity, "summary": a.summary,
                        "fingerprint": a.fingerprint, "threshold": a.threshold}
                       for a in incident.explains]}


def account(incident: Incident, alertmanager: str | None = None,
            max_alerts: int = 40) -> list[str]:
    """The full account, suspect first: why, blast radius, who is behind it, the runbook,
    similar cases, the alerts it explains, and the silences it suggests."""
    ctx = incident.context
    lines = [f"incident {incident.id} ({incident.status}, opened {when(incident.opened_at)})",
             f"suspect: {incident.suspect} ({incident.kind})", f"why: {incident.reason}"]
    if incident.merged_into:
        lines.append(f"merged into {incident.merged_into}")
    if incident.close_reason:
        done = "closed" if incident.status == "closed" else "was closed (fired again since)"
        at = f" at {when(incident.resolved_at)}" if incident.status == "closed" and \
            incident.resolved_at else ""
        lines.append(f"{done} by {incident.closed_by or '?'}{at}: {incident.close_reason}")
    blast = ctx.blast
    if blast:
        links = blast.get("links_down", [])
        rails = blast.get("rails", [])
        whole = f"fabtui topo blast {blast.get('component') or incident.suspect}"
        down = ", ".join(links[:4]) or "-"
        if len(links) > 4:
            down += f" and {len(links) - 4} more ({whole} --json lists them)"
        lines.append(f"blast radius: {blast.get('nodes_affected', 0)} node(s), "
                     f"{blast.get('ranks_affected', 0)} rank(s); links down if it fails: "
                     f"{down}")
        for rail in rails[:8]:
            lines.append(f"  rail {rail['rail']}: injection -{rail['injection_lost']:.0%}, "
                         f"uplinks -{rail['uplink_lost']:.0%}")
        if len(rails) > 8:
            lines.append(f"  ... and {len(rails) - 8} more rails ({whole} lists them)")
    for line in ctx.impact:
        lines.append(f"behind it: {line}")
    lines.append(f"runbook: {'fabtui runbook run ' + ctx.runbook if ctx.runbook else '-'}")
    lines.append(f"similar cases: {', '.join(ctx.similar) if ctx.similar else '-'}")
    explains = incident.explains
    lines.append(f"alerts it explains ({len(explains)}):")
    for a in explains[:max_alerts]:
        role = "" if a.role == "cause" else " [symptom]"
        lines.append(f"  {a.status:8} {a.name} {a.element}{role}: {a.summary}")
    if len(explains) > max_alerts:
        lines.append(f"  ... and {len(explains) - max_alerts} more (--json)")
    specs = suggest(incident) if incident.status == "open" else []
    if specs:
        url = alertmanager or incident.alertmanager or "http://ALERTMANAGER:9093"
        lines.append("silences it suggests (not applied: `fabtui alerts silence "
                     f"{incident.id} --confirm {incident.suspect}`):")
        lines += [f"  {spec.amtool(url)}" for spec in specs[:10]]
        if len(specs) > 10:
            lines.append(f"  ... and {len(specs) - 10} more")
    for applied in incident.silences:
        lines.append(f"silenced by {applied.get('operator', '?')}: "
                     f"{', '.join(applied.get('ids', []))}")
    return lines
