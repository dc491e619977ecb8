"""What Grafana 11 does with a dashboard's queries before they reach Prometheus, for the tests
that run every generated panel: template variables substituted the way the Prometheus data
source interpolates them (`interpolateQueryExpr` in Grafana's `public/app/plugins/datasource/
prometheus/datasource.ts`: a variable that is neither multi-valued nor has "All" goes in as it
is; otherwise each value is regex-escaped and several are joined as `(a|b)`; "All" with an
`allValue` goes in as that value), and `label_values(metric{...}, label)` variable queries
answered from the series API as Grafana's Prometheus variable support does.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from typing import Any

RATE_INTERVAL = "1m"
"""What `$__rate_interval` becomes: at least four scrape intervals of Grafana's default 15 s."""
_SPECIALS = re.compile(r"[$^*{}\[\]'+?.()|\\]")
_VARIABLE = re.compile(r"\$\{(\w+)(?::(\w+))?\}|\$(\w+)")
_LABEL_VALUES = re.compile(r"^label_values\((.*),\s*(\w+)\)$", re.S)


def variables(dashboard: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The dashboard's template variables by name."""
    return {v["name"]: v for v in dashboard.get("templating", {}).get("list", [])}


def targets(dashboard: Mapping[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(panel, target) for every query of every panel, rows' nested panels included."""
    for panel in dashboard.get("panels", []):
        for inner in [panel, *panel.get("panels", [])]:
            for target in inner.get("targets", []) or []:
                yield inner, target


def _escape(value: str) -> str:
    return _SPECIALS.sub(lambda m: "\\\\" + m.group(0), value)


def interpolate(expr: str, chosen: Mapping[str, str | list[str]],
                defined: Mapping[str, Mapping[str, Any]]) -> str:
    """`expr` with its variables replaced by `chosen` values (a list: several selected)."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        if name == "__rate_interval":
            return RATE_INTERVAL
        if name.isdigit():  # label_replace's "$1": no variable, Grafana leaves it
            return match.group(0)
        if name not in chosen:
            raise KeyError(f"no value chosen for ${name} in {expr}")
        value = chosen[name]
        variable = defined.get(name, {})
        if not variable.get("multi") and not variable.get("includeAll"):
            return value if isinstance(value, str) else value[0]
        values = [value] if isinstance(value, str) else value
        escaped = [_escape(v) for v in values]
        return escaped[0] if len(escaped) == 1 else "(" + "|".join(escaped) + ")"

    return _VARIABLE.sub(one, expr)


def label_values(url: str, query: str, regex: str = "") -> list[str]:
    """The values a `label_values(selector, label)` variable query offers (its `regex`, as
    Grafana applies it: `/.../`, the first group when it has one)."""
    match = _LABEL_VALUES.match(query.strip())
    if match is None:
        raise ValueError(f"not a label_values() query: {query}")
    selector, label = match.groups()
    params = urllib.parse.urlencode({"match[]": selector})
    with urllib.request.urlopen(f"{url}/api/v1/series?{params}", timeout=30) as answer:
        series = json.load(answer)["data"]
    values = sorted({s[label] for s in series if s.get(label)})
    if regex:
        pattern = re.compile(regex.strip("/"))
        found = []
        for value in values:
            hit = pattern.search(value)
            if hit:
                found.append(hit.group(1) if hit.groups() else hit.group(0))
        values = sorted(set(found))
    return values


def instant(url: str, promql: str) -> dict[str, Any]:
    """Prometheus's whole answer to an instant query (errors included, not raised)."""
    params = urllib.parse.urlencode({"query": promql})
    try:
        with urllib.request.urlopen(f"{url}/api/v1/query?{params}", timeout=30) as answer:
            return dict(json.load(answer))
    except urllib.error.HTTPError as exc:  # 400: the query is invalid
        return dict(json.load(exc))


def panel_values(url: str, dashboard: Mapping[str, Any], title: str,
                 chosen: Mapping[str, str | list[str]]) -> dict[str, float]:
    """A panel's latest value per line, keyed by its legend as Grafana renders it, its queries'
    variables set from `chosen`."""
    defined = variables(dashboard)
    values: dict[str, float] = {}
    for panel, target in targets(dashboard):
        if panel["title"] != title:
            continue
        answer = instant(url, interpolate(target["expr"], chosen, defined))
        assert answer["status"] == "success", answer
        for series in answer["data"]["result"]:
            legend = target.get("legendFormat", "")
            for label, value in series["metric"].items():
                legend = legend.replace("{{" + label + "}}", value)
            values[legend] = float(series["value"][1])
    assert values, f"no panel {title!r}, or no data for it"
    return values
