"""A case as the search index sees it: the fields of one `IndexDoc`.

The index (fabtui/cases/index/) weighs title, symptom, root cause and resolution on their own
and everything else a case says as one `body`; components, tags and error codes are exact
identifiers, rails and nodes filters. This module only says what goes where; it never touches
the index, so the store and the index stay apart.
"""

from __future__ import annotations

from typing import Any

from fabtui.cases.components import Locate, placement
from fabtui.model.case import Case


def body_text(case: Case) -> str:
    """Every section of `case` but title, symptom, root cause and resolution, as one text."""
    env = case.environment.model_dump(exclude_none=True)
    parts = [case.summary, case.impact, case.trigger, case.detection, case.localization,
             " ".join(f"{k} {v}" for k, v in env.items()), case.environment_notes,
             "\n".join(f"{r.component} {r.metric} {r.value} {r.source}" for r in case.evidence),
             case.evidence_notes,
             "\n".join(f"{e.at} {e.text}".strip() for e in case.timeline), case.timeline_notes,
             "\n".join(f"{t.change} {t.metric} {t.before} {t.after}" for t in case.tuning),
             case.tuning_notes, case.reusable_config, case.risks,
             "\n".join(a.text for a in case.action_items), case.action_notes, case.lessons,
             *(f"{heading}\n{text}" for heading, text in case.sections.items())]
    return "\n\n".join(p for p in parts if p.strip())


def index_fields(case: Case, locate: Locate | None = None) -> dict[str, Any]:
    """The keyword arguments of `IndexDoc` for `case`."""
    places = [placement(c, locate) for c in case.components]
    return {
        "id": case.id, "title": case.title, "symptom": case.symptom,
        "root_cause": case.root_cause, "resolution": case.resolution, "body": body_text(case),
        "components": list(case.components), "tags": list(case.tags),
        "error_codes": list(case.error_codes), "symptom_class": case.symptom_class.value,
        "severity": case.severity.value if case.severity else None,
        "status": case.status.value, "lang": case.lang, "opened": case.opened,
        "rails": sorted({r for p in places for r in p.rails}),
        "nodes": sorted({p.node for p in places if p.node}),
    }
