"""Application desyncs from collective-mismatch reports (see `mismatch`): who issued the odd
collective, and how sure that is.

A side is the odd one out only when three or more were compared and the others agree: it is
then named with `high` confidence. Two sides (or an even split) cannot be told apart from the
reports alone: both are listed with `low` confidence and none is claimed as the culprit.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable
from dataclasses import dataclass

from fabtui.model.triage import Collective, Evidence, Suspect
from fabtui.topology.ranks import compact_ranges
from fabtui.triage.findings import Context, Finding
from fabtui.triage.mismatch import CollCall

_NOT_NETWORK = ("Not a network fault: fix the code path that issues collectives in a different "
                "order or with different sizes on some ranks.")


@dataclass
class _Side:
    """What one rank or process ran at the compared collective."""

    rank: int | None
    pg_rank: int | None
    node: str | None
    gpu: int | None
    key: tuple[Hashable, ...]
    text: str
    evidence: Evidence

    @property
    def name(self) -> str:
        if self.rank is not None:
            return f"rank {self.rank}"
        if self.pg_rank is not None:
            return f"process-group rank {self.pg_rank}"
        return f"{self.node} GPU {self.gpu}"


def fingerprint_findings(ctx: Context) -> list[Finding]:
    """PyTorch `Detected mismatch between collectives` reports, per sequence number. The ranks
    are those of the process group the check ran on: taken as global unless a launcher prefix
    says the reporting process is another global rank."""
    by_seq: dict[int | None, dict[int, _Side]] = defaultdict(dict)
    for report in ctx.facts.mismatches:
        own = report.sides[0].rank
        is_global = report.reporter is None or report.reporter == own
        for side in report.sides:
            by_seq[side.seq].setdefault(side.rank, _Side(
                rank=side.rank if is_global else None,
                pg_rank=None if is_global else side.rank, node=None, gpu=None,
                key=side.key(), text=side.shape_text(), evidence=report.evidence))
    out: list[Finding] = []
    for seq, sides in sorted(by_seq.items(), key=lambda item: -1 if item[0] is None else item[0]):
        where = f"sequence number {seq}" if seq is not None else "one collective"
        finding = _odd_one_out(list(sides.values()), where,
                               "PyTorch's collective check (`Detected mismatch between "
                               "collectives`)")
        if finding is not None:
            finding.collective = Collective(op=None, seq=seq, pg=None)
            out.append(finding)
    return out


def coll_findings(ctx: Context) -> list[Finding]:
    """NCCL COLL lines: processes of one communicator size in different calls at one opCount."""
    by_count: dict[tuple[int, int], dict[str, tuple[CollCall, Evidence]]] = defaultdict(dict)
    for call, evidence in ctx.facts.coll_calls:
        by_count[(call.nranks, call.op_count)].setdefault(call.process, (call, evidence))
    out: list[Finding] = []
    reported: set[frozenset[str]] = set()
    for (nranks, count), calls in sorted(by_count.items()):
        if len(calls) < 2 or len({c.key() for c, _ in calls.values()}) < 2:
            continue
        if frozenset(calls) in reported:
            continue  # the same processes at the next count: one desync, reported once
        reported.add(frozenset(calls))
        sides = [_Side(rank=None, pg_rank=None, node=call.host, gpu=call.device, key=call.key(),
                       text=call.shape_text(), evidence=evidence)
                 for call, evidence in calls.values()]
        finding = _odd_one_out(sides, f"opCount {count:x} of a {nranks}-rank communicator",
                               "NCCL's COLL log (`NCCL_DEBUG_SUBSYS=COLL`)")
        if finding is not None:
            out.append(finding)
    return out


def _odd_one_out(sides: list[_Side], where: str, source: str) -> Finding | None:
    """The desync finding for `sides`, or None if they all ran the same."""
    shapes = Counter(side.key for side in sides)
    if len(shapes) < 2:
        return None
    (common, most), (_, second) = shapes.most_common(2)
    usual = next(side.text for side in sides if side.key == common)
    if most > second and most >= 2:
        odd = [side for side in sides if side.key != common]
        return Finding(
            verdict="application desync",
            summary=f"Application desync at {where}: {_names(odd)} issued a different "
                    f"collective, size or dtype than the {most} others ({source}). "
                    + _NOT_NETWORK,
            suspects=[_suspect(side, "high", f"{source}: issued {side.text} at {where} where "
                                             f"{most} others issued {usual}") for side in odd])
    listing = "; ".join(f"{side.name}: {side.text}" for side in sides)
    return Finding(
        verdict="application desync",
        summary=f"Application desync at {where}: {listing} ({source}). With {len(sides)} "
                "sides and no majority the logs cannot tell which one took the other code "
                "path. " + _NOT_NETWORK,
        suspects=[_suspect(side, "low", f"{source}: at {where} {listing}; no majority, so "
                                        "not known to be the one that took the wrong path")
                  for side in sides])


def _names(sides: list[_Side]) -> str:
    ranks = [side.rank for side in sides if side.rank is not None]
    if len(ranks) == len(sides):
        return f"rank(s) {compact_ranges(sorted(ranks))}"
    return ", ".join(side.name for side in sides)


def _suspect(side: _Side, confidence: str, reason: str) -> Suspect:
    return Suspect(kind="desync", rank=side.rank, pg_rank=side.pg_rank, node=side.node,
                   gpu=side.gpu, confidence="high" if confidence == "high" else "low",
                   reason=reason, evidence=[side.evidence])
