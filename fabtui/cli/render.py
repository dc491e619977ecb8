"""Plain-text rendering of topology answers for the terminal (the `--json` forms need none)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from fabtui.model.table import Column, Table
from fabtui.render.table import render_table

if TYPE_CHECKING:
    from fabtui.model.cabling import CablingReport
    from fabtui.model.findings import Finding
    from fabtui.topology.blast import BlastRadius
    from fabtui.topology.export import TopologySummary
    from fabtui.topology.graph import RankPlacement
    from fabtui.topology.routes import RouteSet


def table(headers: Sequence[str], rows: Iterable[Sequence[object]],
          width: int | None = None) -> str:
    """Columns separated by two spaces; a column of numbers only is right-aligned.

    Drawn by the one table renderer (`fabtui.render.table`), so wide characters line up.
    """
    text_rows = [[str(cell) for cell in row] for row in rows]
    columns = [Column(h, h, "right" if text_rows and all(_is_number(r[i]) for r in text_rows)
                      else "left") for i, h in enumerate(headers)]
    return render_table(Table.build(columns, text_rows), width)


def terminal_width() -> int | None:
    """The terminal's width when standard output is one (a table is fitted to it, cut text
    ending in `…`); None for a pipe or a file (nothing is cut)."""
    import shutil
    import sys

    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


def _is_number(text: str) -> bool:
    return text.replace(".", "", 1).replace("%", "").replace("-", "", 1).isdigit()


def percent(fraction: float) -> str:
    """0.125 -> `12.5%`."""
    value = fraction * 100
    return f"{value:.0f}%" if value == int(value) else f"{value:.1f}%"


def _ranges(numbers: Sequence[int]) -> str:
    from fabtui.topology.ranks import compact_ranges  # `fabtui parse --table` needs no topology

    return compact_ranges(numbers).replace(", ", ",") if numbers else "none"


def findings_report(source: str, findings: Sequence[Finding]) -> str:
    """What `topo check` prints: one line per finding, then a count."""
    from fabtui.model.findings import Severity

    lines = [str(f) for f in findings]
    counts = {s: sum(1 for f in findings if f.severity is s) for s in Severity}
    if not findings:
        lines.append(f"{source}: ok, no findings")
    else:
        lines.append(f"{source}: {counts[Severity.ERROR]} errors, "
                     f"{counts[Severity.WARNING]} warnings, {counts[Severity.INFO]} notes")
    return "\n".join(lines)


def summary(s: TopologySummary, with_leaves: bool = True,
            check: str = "fabtui topo check") -> str:
    """What `topo show` (and bare `fabtui`, until the TUI lands) prints; `check` is the command
    that lists the findings of this very file (it names the file when it is not the configured
    one)."""
    models = ", ".join(f"{n}x {m}" for m, n in s.gpu_models.items()) or "no GPUs"
    speeds = ", ".join(f"{n}x {sp}" for sp, n in s.nic_speeds.items()) or "none"
    switches = ", ".join(f"{n} {role}" for role, n in s.switches.items()) or "none"
    flavors = ", ".join(f"{n} {f}" for f, n in s.flavors.items())
    lines = [
        f"{s.cluster}" + (f" - {s.description}" if s.description else ""),
        f"  source      {s.source}" + (f" (template {s.template})" if s.template else ""),
        f"  fabric      {s.fabric}, rails {_ranges(s.rails)}"
        + (f", planes {', '.join(s.planes)}" if s.planes else ""),
        f"  nodes       {s.nodes} nodes, {s.gpus} GPUs ({models})",
        f"  NICs        {s.nics} ({speeds})",
        f"  switches    {switches}" + (f" ({flavors})" if flavors else ""),
        f"  links       {s.host_links} host, {s.fabric_links} switch-to-switch"
        + (f", {s.dangling_links} dangling" if s.dangling_links else ""),
    ]
    if s.oversubscription:
        ratios = ", ".join(f"{ratio} on {n} leaves" for ratio, n in s.oversubscription.items())
        lines.append(f"  leaf ratio  {ratios} (downlink:uplink)")
    f = s.findings
    lines.append(f"  findings    {f['error']} errors, {f['warning']} warnings "
                 f"(details: {check})")
    if with_leaves and s.leaves:
        rows = [(leaf.name, _ranges(leaf.rails), leaf.hosts, f"{leaf.down_gbps}G",
                 f"{leaf.up_gbps}G", leaf.spines) for leaf in s.leaves[:40]]
        lines += ["", table(("leaf", "rails", "hosts", "down", "up", "spines"), rows)]
        if len(s.leaves) > 40:
            lines.append(f"... and {len(s.leaves) - 40} more leaves (--json lists all)")
    return "\n".join(lines)


def placement(p: RankPlacement) -> str:
    """One rank from GPU to spines, in one paragraph."""
    head = f"rank {p.rank}: {p.node} GPU{p.gpu}"
    if p.gpu_pci:
        head += f" ({p.gpu_pci}, NUMA {p.numa})"
    lines = [head]
    for nic in p.nics:
        leaf = f"{nic.leaf}:{nic.leaf_port}" if nic.leaf else "no cable"
        plane = f" {nic.plane}" if nic.plane else ""
        spines = ", ".join(nic.spines) if nic.spines else "none"
        lines.append(f"  via {nic.nic} ({nic.netdev or '-'}, rail {nic.rail}{plane}, "
                     f"{nic.speed}G) -> {leaf}" + (f" optic {nic.optic}" if nic.optic else ""))
        lines.append(f"      spines reachable: {spines}")
    if not p.nics:
        lines.append("  no NIC serves this GPU")
    return "\n".join(lines)


def routes(r: RouteSet, limit: int = 16) -> str:
    """Both placements, the kind of path, and the ECMP set."""
    lines = [placement(r.src), placement(r.dst), ""]
    if r.kind in ("same-gpu", "nvlink"):
        lines.append("path: " + ("the same GPU" if r.kind == "same-gpu" else "NVLink (same node)"))
    elif r.kind == "unreachable":
        lines.append("path: none - the two ranks cannot reach each other through the fabric")
    else:
        where = "one leaf" if r.kind == "same-leaf" else "through the spine layer"
        lines.append(f"path: {where}, {r.ecmp_width} equal-cost path"
                     f"{'s' if r.ecmp_width != 1 else ''}")
        for i, path in enumerate(r.paths[:limit], start=1):
            plane = f" [{path.plane}]" if path.plane else ""
            lines.append(f"  {i:>3}.{plane} " + "  ->  ".join(str(h) for h in path.hops))
        if len(r.paths) > limit:
            lines.append(f"  ... {len(r.paths) - limit} more listed with --json")
    lines += [f"note: {n}" for n in r.notes]
    return "\n".join(lines)


def blast(b: BlastRadius, limit: int = 50) -> str:
    """Who loses what, most affected first."""
    lines = [f"blast radius of {b.kind} {b.component}: {len(b.links_down)} links down"
             + (f", switches down: {', '.join(b.switches_down)}" if b.switches_down else "")]
    if not b.nodes:
        lines.append("no node loses bandwidth")
    else:
        lines.append(f"\nnodes affected: {len(b.nodes)}")
        rows = [(n.node, ",".join(n.nics_down) or "-", percent(n.injection_lost),
                 percent(n.cross_leaf_lost)) for n in b.nodes[:limit]]
        lines.append(table(("node", "NICs down", "injection lost", "cross-leaf lost"), rows))
        if len(b.nodes) > limit:
            lines.append(f"... and {len(b.nodes) - limit} more nodes (--json lists all)")
    if b.rails:
        lines.append("\nrails affected:")
        rail_rows = [(r.rail, r.plane or "-", r.nodes_affected, percent(r.injection_lost),
                      percent(r.uplink_lost)) for r in b.rails]
        lines.append(table(("rail", "plane", "nodes", "host capacity lost",
                            "uplink capacity lost"), rail_rows))
    if b.ranks:
        lines.append(f"\nranks affected: {len(b.ranks)}")
        rank_rows = [(r.rank, r.node, f"GPU{r.gpu}", _ranges(r.rails),
                      percent(r.injection_lost), percent(r.cross_leaf_lost))
                     for r in b.ranks[:limit]]
        lines.append(table(("rank", "node", "gpu", "rails", "injection lost", "cross-leaf lost"),
                           rank_rows))
        if len(b.ranks) > limit:
            lines.append(f"... and {len(b.ranks) - limit} more ranks (--json lists all)")
    lines += [f"note: {n}" for n in b.notes]
    return "\n".join(lines)


def cabling(report: CablingReport) -> str:
    """The design-against-cabling report: what was read, then each difference and its fix."""
    from fabtui.errors import printable  # what switches and nodes report is shown escaped

    lines = [f"{report.cluster}: {'; '.join(report.sources) or 'nothing read'}; "
             f"{report.ports_matched} of {report.ports_checked} switch ports as designed"]
    for finding in report.findings:
        lines += [f"{finding.rule}: {printable(finding.message)}",
                  f"  fix: {printable(finding.fix)}", f"  seen by: {finding.evidence}"]
        if finding.ranks:
            lines.append(f"  ranks sending through it: {_ranges(finding.ranks)}")
    lines += [f"not read: {printable(item)}" for item in report.unread]
    if report.ok:
        lines.append("the cabling matches the design: no finding")
    elif report.findings:
        lines.append(f"{len(report.findings)} finding(s)")
    return "\n".join(lines)
