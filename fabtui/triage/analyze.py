"""From facts to a verdict: who the job waits for, and why, without trusting naive readings.

Rules (docs/triage.md, fabric diagnostics reference section 7):
- Per process group, the wavefront is the sequence number most ranks enqueued last. Ranks below
  it never arrived (`lagging`: the culprits); ranks at it that did not complete it `stopped`
  (victims, unless every rank did: then the collective itself is stuck).
- Whose watchdog fired first, or whom torchrun reports as the first failure, says nothing: every
  rank waiting for a culprit times out. Ranks are never ranked by that.
- RAS prints the outlier group, which can be the ranks ahead: the suspects are always the ranks
  with the lowest launch count, named or not.
- An IB status 12 is the signal; the status 5 (flushed) lines after it are teardown. When the
  logs say whose NIC reported it, that rank is the culprit (its NIC, port and optic), the far
  end its peer. The first `Connection closed by localRank N` names the process that went away;
  the rest are the cascade.
- A rank whose watchdog fired on the collective it is at waits inside it: never a laggard.
- Different collectives, sizes or dtypes at one sequence number are an application desync.
- Every rank launched, none completed, RAS healthy: the logs do not name a rank; the network
  between the ranks involved is the suspect.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Literal

from fabtui.model.triage import (
    Collective,
    Evidence,
    RankState,
    Suspect,
    TriageReport,
    Verdict,
)
from fabtui.topology.ranks import compact_ranges
from fabtui.triage.absent import absent_findings, waiting_ranks
from fabtui.triage.collect import what_to_collect
from fabtui.triage.findings import Context, Finding, Progress, by_pg, max_of, rank_at, wavefront
from fabtui.triage.ingest import DEFAULT_PG, Facts, LineEvent
from fabtui.triage.mismatch_findings import coll_findings, fingerprint_findings
from fabtui.triage.network import (
    async_findings,
    link_findings,
    local_rank_findings,
    warnings_of,
)
from fabtui.triage.ras import RasComm, RasRank

_C10_STAMP = re.compile(r"\[[EWIF](\d{3,4}) (\d\d:\d\d:\d\d(?:\.\d+)?)")
_HANG_EVENTS = ("watchdog_timeout", "pg_status", "desync", "heartbeat_timeout")
_MISMATCH_ERRORS = ("COLLECTIVE_TYPE_MISMATCH", "SIZE_OR_SYNTAX_MISMATCH",
                    "COLLECTIVE_DTYPE_MISMATCH")


def analyze(facts: Facts) -> TriageReport:
    """The report for `facts` (suspects not yet placed on the fabric: see `locate`)."""
    ctx = Context(facts=facts)
    _group_local(ctx)
    _world(ctx)
    _from_events(ctx)
    _from_dumps(ctx)
    warnings = warnings_of(ctx)
    findings: list[Finding] = []
    findings += _desync(ctx)
    findings += fingerprint_findings(ctx)
    findings += coll_findings(ctx)
    findings += _fr_findings(ctx)
    findings += _ras(ctx)
    findings += _laggards(ctx, findings)
    findings += local_rank_findings(ctx, warnings)
    findings += async_findings(ctx, warnings)
    findings += link_findings(ctx, warnings, findings)
    findings += _inside(ctx, findings)
    if not findings:
        findings += _stuck(ctx)
    findings = _merge(_explained(ctx, findings))
    # A finding that names nothing (a failure no host or rank places) is a note beside others.
    unplaced = [f for f in findings if not f.suspects]
    findings = [f for f in findings if f.suspects]
    if findings:
        ctx.notes.extend(f.summary for f in unplaced)
    ranks = _rank_states(ctx)
    _victim_notes(ctx, findings)
    if not findings:
        verdict: Verdict = "cannot tell"
        summary = unplaced[0].summary if unplaced else _cannot_tell(ctx)
        suspects: list[Suspect] = []
        collective = _common_collective(ctx)
    else:
        verdict, summary = findings[0].verdict, findings[0].summary
        if len(findings) > 1:
            summary += f" A second, independent fault: {findings[1].summary}"
            ctx.notes.append(f"{len(findings)} independent faults: their suspects are listed "
                             "by fault (`fault` 1, 2, ...)")
        leads: list[Suspect] = []
        rest: list[Suspect] = []
        for number, finding in enumerate(findings, start=1):
            for index, suspect in enumerate(finding.suspects):
                suspect.fault = number
                (leads if index == 0 else rest).append(suspect)
        # Each fault's likeliest suspect before the others' peers and symptoms.
        suspects = leads + rest
        collective = findings[0].collective
        if collective is None or collective.op is None:
            # RAS counts operations per communicator: the process group the first suspect is
            # behind in says which collective that is.
            collective = _collective_of(ctx, suspects[0].rank) or collective \
                or _common_collective(ctx)
    if collective is not None and collective.pg is not None:
        enqueued = [s.enqueued for s in by_pg(ctx).get(collective.pg, [])
                    if s.enqueued is not None]
        collective.last_enqueued = max(enqueued) if enqueued else None
    report = TriageReport(
        verdict=verdict, summary=summary, suspects=suspects, collective=collective,
        world_size=ctx.world, world_size_source=ctx.world_source,
        world_size_at_least=None if ctx.world is not None or not ctx.seen
        else max(ctx.seen) + 1,
        hung_seq=collective.seq if collective is not None else _only_seq(ctx),
        rank_numbering="group-local" if ctx.group_local else "global" if ctx.seen or any(
            s.rank is not None for s in suspects) else "none",
        ranks_seen=sorted(ctx.seen), ranks=ranks, warnings=warnings, notes=ctx.notes,
        sources=facts.sources)
    if report.world_size_at_least is not None:
        report.world_size_source = (f"at least {report.world_size_at_least}: ranks 0-"
                                    f"{report.world_size_at_least - 1} exist because rank "
                                    f"{report.world_size_at_least - 1} logged")
    report.collect = what_to_collect(ctx, report)
    return report


# ---- facts into per-rank states ---------------------------------------------------------------

def _world(ctx: Context) -> None:
    facts = ctx.facts
    sizes: list[tuple[int, str]] = [(init.nranks, "NCCL init nranks") for init in facts.inits]
    for dump, _, _ in facts.dumps:
        for config in dump.pg_config.values():
            if config.desc == "default_pg" and config.ranks:
                sizes.append((len(config.ranks), "Flight Recorder pg_config"))
    for fr_mismatch, _ in facts.fr_findings:
        if fr_mismatch.expected_rank_count:
            sizes.append((fr_mismatch.expected_rank_count, "Flight Recorder analyzer"))
        elif fr_mismatch.expected_ranks:
            sizes.append((len(fr_mismatch.expected_ranks), "Flight Recorder analyzer"))
    for report, _ in facts.ras:
        if report.processes:
            sizes.append((report.processes, "RAS job summary"))
        if report.ranks_per_comm:
            sizes.append((report.ranks_per_comm, "RAS communicators"))
        for comm in report.comms:
            sizes.extend([(comm.size, "RAS communicators")] if comm.size else [])
    if facts.launcher_world:
        sizes.append((facts.launcher_world, "torchrun rendezvous"))
    if facts.job_world is not None:
        sizes.append(facts.job_world)
    if sizes:
        # The largest communicator is the world; the first source that printed it names it.
        ctx.world = max(size for size, _ in sizes)
        ctx.world_source = next(source for size, source in sizes if size == ctx.world)
    for init in facts.inits:
        if init.nranks == ctx.world:
            if init.host:
                facts.hosts.setdefault(init.rank, init.host)
            if init.device is not None:
                facts.devices.setdefault(init.rank, init.device)
    ctx.seen.update(facts.files_by_rank)
    for source in facts.sources:
        ctx.seen.update(source.ranks)
    ctx.seen.update(facts.gave_up)


def _sub_group_only(ctx: Context) -> None:
    """Watchdog lines that print only `[PG x Rank M]` of a sub-group, and no line any global
    rank: rank M of group x is some global rank the logs do not say."""
    watchdogs = [e for e in ctx.facts.events if e.event.type == "watchdog_timeout"]
    local = [e for e in watchdogs if e.rank is None and e.pg_rank is not None]
    if not local or any(e.rank is not None for e in watchdogs):
        return
    ctx.group_local = True
    names = sorted({f"[PG {e.pg} Rank {e.pg_rank}]" for e in local})
    ctx.notes.append(f"{', '.join(names[:4])}: the rank within that process group, not a global "
                     "rank; no line here prints a global rank")


def _group_local(ctx: Context) -> None:
    """PyTorch before 2.2 prints `[Rank M]` without its process group. With no launcher prefix
    or file naming the rank, one `[Rank M]` timing out at several sequence numbers is the rank
    of several process groups: none of these numbers is a global rank, so none is used as one."""
    guessed = [e for e in ctx.facts.events if e.rank_from_message and e.rank is not None]
    seqs: dict[int, set[int]] = defaultdict(set)
    for item in guessed:
        if item.event.type == "watchdog_timeout" and item.event.seq is not None:
            seqs[item.rank or 0].add(item.event.seq)
    if not any(len(found) > 1 for found in seqs.values()):
        _sub_group_only(ctx)
        return
    ctx.group_local = True
    facts = ctx.facts
    guessed_ranks = {item.rank for item in guessed if item.rank is not None} - facts.named_ranks
    for item in guessed:
        item.rank, item.pg_rank = None, item.rank
    for source in facts.sources:
        source.ranks = [r for r in source.ranks if r not in guessed_ranks]
    for rank in guessed_ranks:
        facts.files_by_rank.pop(rank, None)
    ranks = sorted({item.pg_rank for item in guessed if item.pg_rank is not None})
    ctx.notes.append(f"the lines print only process-group ranks ([Rank {compact_ranges(ranks)}] "
                     "with no launcher prefix), one of them timing out at several sequence "
                     "numbers: these are ranks of several process groups, not global ranks, so "
                     "no rank is named from them")


@dataclass(frozen=True)
class _NamedGroups:
    """What the hang lines that name their process group say, indexed once per analysis (a
    scan of every event for each watchdog line grew with ranks x lines: 1,024 ranks x 1 MB of
    logs triaged in 38.9 s, 11.4 s without it; `benchmarks/triage_scale.py`)."""

    by_rank_seq: dict[tuple[int, int | None], set[str]]
    """(rank, sequence number) -> the groups its watchdog and status lines name there."""
    groups: set[str]
    """Every group a watchdog or status line names."""

    @classmethod
    def of(cls, events: list[LineEvent]) -> _NamedGroups:
        by_rank_seq: dict[tuple[int, int | None], set[str]] = {}
        groups: set[str] = set()
        for e in events:
            if e.event.pg is not None and e.rank is not None \
                    and e.event.type in ("watchdog_timeout", "pg_status"):
                by_rank_seq.setdefault((e.rank, e.event.seq), set()).add(e.pg)
                groups.add(e.pg)
        return cls(by_rank_seq, groups)


def _pg_of(named: _NamedGroups, item: LineEvent) \
        -> tuple[str, Literal["said", "inferred"] | None]:
    """The process group of a rank's hang line: the one it names; for a watchdog line that names
    none (`[Rank N] Watchdog caught ...`, PyTorch 2.2+ prints the group on the next line), the
    group the same rank's status line names at the same sequence number, else the one group
    every line that names one names (the job's lines are of one group)."""
    if item.event.pg is not None:
        return item.pg, "said"
    if item.event.type != "watchdog_timeout":
        return item.pg, None
    if item.pg_rank is not None and item.rank is not None and item.pg_rank != item.rank:
        # `[rank97]:... [Rank 6] Watchdog caught ...`: rank 6 of some sub-group, not the
        # default group (whose rank would be 97). Which sub-group the line does not say.
        return f"? (rank {item.rank} is Rank {item.pg_rank} of a group the line does not name)", \
            None
    own = named.by_rank_seq.get((item.rank, item.event.seq), set()) \
        if item.rank is not None else set()
    if len(own) == 1:
        return next(iter(own)), "said"
    if len(named.groups) == 1 and (only := next(iter(named.groups))) != DEFAULT_PG:
        return only, "inferred"
    return item.pg, None


def _from_events(ctx: Context) -> None:
    inferred: set[int] = set()
    named = _NamedGroups.of(ctx.facts.events)
    for item in ctx.facts.events:
        event = item.event
        if item.rank is not None:
            ctx.seen.add(item.rank)
        if item.rank is None or event.type not in ("watchdog_timeout", "pg_status"):
            continue
        pg, known = _pg_of(named, item)
        state = ctx.state(pg, item.rank)
        if known == "said" or state.pg_known is None:
            state.pg_known = known
        if known == "inferred":
            inferred.add(item.rank)
        if event.type == "watchdog_timeout":
            if event.seq is not None:
                state.timed_out = event.seq
            state.op = event.op or state.op
            state.numel_in = event.numel_in if event.numel_in is not None else state.numel_in
            state.numel_out = event.numel_out if event.numel_out is not None \
                else state.numel_out
        state.enqueued = max_of(state.enqueued, event.last_enqueued)
        completed = event.last_completed
        if completed is not None and event.last_enqueued is not None \
                and completed > event.last_enqueued:
            # No rank completes work it never enqueued: an unset counter printed as a number
            # (vllm-project/vllm#6042: `last completed NCCL work: 93459313471793` at work 1).
            ctx.notes.append(f"{item.evidence.file}:{item.evidence.line}: rank {item.rank}'s "
                             f"last completed work {completed} is above its last enqueued "
                             f"{event.last_enqueued}: not a real count, ignored")
            completed = None
        state.completed = max_of(state.completed, completed)
        state.evidence.append(item.evidence)
    if inferred:
        groups = sorted({s.pg for s in ctx.states.values() if s.pg_known == "inferred"})
        ctx.notes.append(f"rank(s) {compact_ranges(sorted(inferred))}: the watchdog line names "
                         f"no process group; every line that names one names {groups[0]}, so "
                         "it is read as that group's")


def _from_dumps(ctx: Context) -> None:
    for dump, rank, evidence in ctx.facts.dumps:
        if rank is None:
            continue
        ctx.seen.add(rank)
        names = {key: _pg_label(key, cfg.desc) for key, cfg in dump.pg_config.items()}
        for key, status in dump.pg_status.items():
            state = ctx.state(names.get(key, _pg_label(key, None)), rank)
            state.enqueued = max_of(state.enqueued, status.last_enqueued_collective)
            if status.last_started_collective is not None \
                    and status.last_started_collective >= 0:
                state.started = max_of(state.started, status.last_started_collective)
            state.completed = max_of(state.completed, status.last_completed_collective)
            state.evidence.append(evidence)
        for entry in dump.entries:
            if entry.collective_seq_id is None or entry.is_p2p:
                continue
            pg = _pg_label(entry.pg_name or "0", entry.pg_desc)
            ctx.entries.setdefault((pg, entry.collective_seq_id), {})
            by_rank = ctx.entries[(pg, entry.collective_seq_id)]
            if rank in by_rank and by_rank[rank].op != entry.op:
                ctx.two_threads.append((rank, pg, entry.collective_seq_id))
            by_rank[rank] = entry
            state = ctx.state(pg, rank)
            if state.enqueued is None or entry.collective_seq_id >= state.enqueued:
                state.op = entry.op
                state.dtype = entry.input_dtypes[0] if entry.input_dtypes else None
                sizes = entry.input_sizes or []
                state.numel_in = sum(_numel(s) for s in sizes) if sizes else state.numel_in
            if entry.state == "completed":
                state.completed = max_of(state.completed, entry.collective_seq_id)
            state.enqueued = max_of(state.enqueued, entry.collective_seq_id)


def _numel(shape: list[int]) -> int:
    total = 1
    for dim in shape:
        total *= dim
    return total


def _pg_label(key: str, desc: str | None) -> str:
    if desc == "default_pg" or (key == "0" and desc is None):
        return "0 (default_pg)"
    return f"{key} ({desc})" if desc else key


def _rank_states(ctx: Context) -> list[RankState]:
    out: list[RankState] = []
    for pg, states in sorted(by_pg(ctx).items()):
        front = wavefront(states)
        for state in sorted(states, key=lambda s: s.rank):
            arrived = state.arrived()
            label: Literal["ahead", "in wavefront", "stopped", "lagging", "completed",
                           "unknown"] = "unknown"
            if front is not None and arrived is not None:
                if arrived < front:
                    label = "lagging"
                elif arrived > front:
                    label = "ahead"
                elif state.completed is not None and state.completed >= front:
                    label = "completed"
                elif state.timed_out is not None or state.completed is not None:
                    label = "stopped"
                else:
                    label = "in wavefront"
            out.append(RankState(rank=state.rank, pg=pg, last_enqueued=state.enqueued,
                                 last_started=state.started, last_completed=state.completed,
                                 timed_out=state.timed_out, op=state.op,
                                 numel_in=state.numel_in, numel_out=state.numel_out,
                                 dtype=state.dtype, state=label))
    return out


# ---- findings ---------------------------------------------------------------------------------

def _desync(ctx: Context) -> list[Finding]:
    """Different op / size / dtype at one sequence number: from watchdogs and dumps."""
    found: list[Finding] = []
    # Two threads on one communicator first: the mismatch at that sequence number follows.
    for rank, pg, seq in ctx.two_threads:
        what = (f"rank {rank} recorded two different collectives with sequence number {seq} "
                f"in process group {pg}: two threads issued collectives on one communicator")
        found.append(Finding(
            verdict="application desync",
            summary=f"Application desync: {what}. Not a network fault.",
            suspects=[Suspect(confidence="high", kind="desync", rank=rank, reason=what)],
            collective=Collective(op=None, seq=seq, pg=pg)))
    by_seq: dict[tuple[str, int], list[tuple[int, tuple[object, ...], Evidence | None]]] = \
        defaultdict(list)
    for state in ctx.states.values():
        if state.timed_out is not None and state.op is not None:
            by_seq[(state.pg, state.timed_out)].append(
                (state.rank, (state.op.upper(), state.numel_in),
                 state.evidence[0] if state.evidence else None))
    for (pg, seq), by_rank in ctx.entries.items():
        if (pg, seq) in by_seq:
            continue
        for rank, entry in by_rank.items():
            by_seq[(pg, seq)].append(
                (rank, ((entry.op or "").upper(), str(entry.input_sizes),
                        str(entry.input_dtypes)), None))
    for (pg, seq), items in sorted(by_seq.items()):
        shapes = Counter(shape for _, shape, _ in items)
        if len(shapes) < 2:
            continue
        (common, most), (_, second) = shapes.most_common(2)
        if most == second:
            found.append(_split_desync(pg, seq, items, shapes))
            continue
        odd = [(rank, shape, ev) for rank, shape, ev in items if shape != common]
        suspects = [Suspect(confidence="high" if most >= 2 else "medium", kind="desync", rank=rank,
                            reason=f"issued {_shape_text(shape)} at sequence number {seq} of "
                                   f"process group {pg} where the others issued "
                                   f"{_shape_text(common)}",
                            evidence=[ev] if ev else [])
                    for rank, shape, ev in sorted(odd, key=lambda x: x[0])]
        found.append(Finding(
            verdict="application desync",
            summary=f"Application desync at sequence number {seq} of process group {pg}: "
                    f"rank(s) {compact_ranges([r for r, _, _ in odd])} issued a different "
                    "collective, size or dtype than the others. Not a network fault: fix the "
                    "code path that issues collectives in a different order on some ranks.",
            suspects=suspects, collective=Collective(op=str(common[0]) or None, seq=seq, pg=pg)))
    return found


def _split_desync(pg: str, seq: int,
                  items: list[tuple[int, tuple[object, ...], Evidence | None]],
                  shapes: Counter[tuple[object, ...]]) -> Finding:
    """Ranks split evenly between collectives at one sequence number: no side is the odd one,
    so no rank is named (`rank` null; `ranks` lists them all)."""
    ranks = sorted(rank for rank, _, _ in items)
    sides = "; ".join(f"{_shape_text(shape)}: rank(s) "
                      f"{compact_ranges(sorted(r for r, s, _ in items if s == shape))}"
                      for shape, _ in shapes.most_common())
    evidence = []  # one line from each side
    for shape in list(shapes)[:2]:
        line = next((ev for _, s, ev in items if s == shape and ev is not None), None)
        evidence += [line] if line is not None else []
    return Finding(
        verdict="application desync",
        summary=f"Application desync at sequence number {seq} of process group {pg}: the ranks "
                f"issued different collectives, split evenly ({sides}), as when two threads "
                "issue collectives on one communicator. No rank is the odd one out. Not a "
                "network fault: fix the code path that issues collectives in a different "
                "order.",
        suspects=[Suspect(confidence="low", kind="desync", rank=None, ranks=ranks,
                          reason=f"at sequence number {seq} of process group {pg}: {sides}",
                          evidence=evidence)],
        collective=Collective(op=None, seq=seq, pg=pg))


def _shape_text(shape: tuple[object, ...]) -> str:
    parts = [str(p) for p in shape if p not in (None, "None", "")]
    return " ".join(parts) or "?"


def _fr_findings(ctx: Context) -> list[Finding]:
    found: list[Finding] = []
    for mismatch, evidence in ctx.facts.fr_findings:
        op = (mismatch.profiling_name or "").split(":", 1)[-1] or None
        collective = Collective(op=op, seq=mismatch.collective_seq_id, pg=mismatch.pg)
        culprits = [c for c in mismatch.culprits if c.rank is not None]
        if any(c.error_type in _MISMATCH_ERRORS for c in culprits):
            found.append(Finding(
                verdict="application desync",
                summary=f"The Flight Recorder analyzer found mismatched collectives at sequence "
                        f"number {mismatch.collective_seq_id}: an application desync, not a "
                        "network fault.",
                suspects=[Suspect(confidence="high", kind="desync", rank=c.rank,
                                  reason=f"Flight Recorder: {c.error_type}"
                                         f"{': ' + c.detail if c.detail else ''}",
                                  evidence=[evidence]) for c in culprits],
                collective=collective))
        elif mismatch.missing_ranks:
            found.append(Finding(
                verdict="culprit found",
                summary=f"Rank(s) {compact_ranges(mismatch.missing_ranks)} never joined "
                        f"collective {mismatch.collective_seq_id} ({op or '?'}) that the other "
                        "ranks wait in (Flight Recorder analyzer).",
                suspects=[Suspect(kind="lagging", rank=r,
                                  confidence="high" if ctx.world is not None else "medium",
                                  reason=f"did not join collective {mismatch.collective_seq_id}"
                                         f" ({op or '?'}) that the others entered",
                                  evidence=[evidence]) for r in mismatch.missing_ranks],
                collective=collective))
    return found


def _ras(ctx: Context) -> list[Finding]:
    found: list[Finding] = []
    for report, label in ctx.facts.ras:
        problems = False
        for comm in report.comms:
            evidence = Evidence(file=label, line=comm.line, text=comm.text)
            if comm.missing and not _world_comm(ctx, comm):
                problems = True
                ctx.notes.append(f"RAS has no data from rank(s) {compact_ranges(comm.missing)} "
                                 f"of communicator {comm.ident} ({comm.size} ranks): ranks of "
                                 "that communicator, not global ranks")
            elif comm.missing:
                problems = True
                found.append(Finding(
                    verdict="culprit found",
                    summary=f"RAS has no data from rank(s) {compact_ranges(comm.missing)} of "
                            f"communicator {comm.ident}: the process is unresponsive or dead.",
                    suspects=[Suspect(confidence="high", kind="dead", rank=r,
                                      reason=f"RAS: missing communicator data from rank {r} "
                                             "(unresponsive or dead process)",
                                      evidence=[evidence]) for r in comm.missing]))
            if len(comm.groups) >= 2:
                problems = True
                mismatch = _ras_mismatch(ctx, comm, label)
                found.extend([mismatch] if mismatch is not None else [])
            elif comm.no_data:
                problems = True
                quiet = ", ".join(f"rank {r.rank} (process {r.pid} on {r.node})"
                                  for r in comm.no_data[:4])
                ctx.notes.append(f"{label}:{comm.line}: RAS could not collect communicator "
                                 f"{comm.ident}'s data from {quiet}: that process did not answer "
                                 "RAS. With no timeout or launch-count split in the inputs this "
                                 "shows no hang; check that the process is alive and responsive")
            elif comm.state in ("MISMATCH", "INCOMPLETE") and not comm.missing:
                problems = True
                ctx.notes.append(f"{label}:{comm.line}: RAS marks communicator {comm.ident} "
                                 f"{comm.state} but prints no launch counts or ranks for it: no "
                                 "rank is taken from it")
        for dead in report.dead:
            problems = True
            ev = Evidence(file=label, line=dead.line,
                          text=f"Process {dead.pid} on node {dead.node} managing GPU {dead.gpu}")
            host = ctx.host(dead.node)
            rank = dead.rank if dead.rank >= 0 else rank_at(ctx, host, dead.gpu, infer=True)
            found.append(Finding(
                verdict="culprit found",
                summary=f"RAS considers process {dead.pid} on {host or dead.node} (GPU "
                        f"{dead.gpu}) dead.",
                suspects=[Suspect(kind="dead", rank=rank, node=host, gpu=dead.gpu,
                                  confidence="high",
                                  reason="RAS: process unreachable for 60 s (considered dead)"
                                         + ("" if host else f" on host {dead.node}, an address "
                                            "neither the logs nor the topology name"),
                                  evidence=[ev])]))
        if not problems and report.rows_ok:
            ctx.ras_healthy = True
    return found


def _world_comm(ctx: Context, comm: RasComm) -> bool:
    """Whether `comm`'s ranks are global ranks: a communicator of the whole job."""
    return comm.size is None or ctx.world is None or comm.size >= ctx.world


def _ras_global(ctx: Context, comm: RasComm, rank: RasRank) -> tuple[int | None, str | None]:
    """(global rank, host) of a rank RAS printed: RAS numbers ranks within the communicator,
    so the host and GPU it printed say which process it is; the number itself is global only
    in a communicator of the whole job."""
    host = ctx.host(rank.node)
    placed = rank_at(ctx, host, rank.gpu, infer=True)
    if placed is not None:
        return placed, host
    return (rank.rank if _world_comm(ctx, comm) else None), host


def _ras_mismatch(ctx: Context, comm: RasComm, label: str) -> Finding | None:
    groups = sorted(comm.groups, key=lambda g: g.count)
    low = groups[0]
    named = {r.rank for g in groups for r in g.named}
    evidence = [Evidence(file=label, line=g.line, text=g.text) for g in groups]
    if low.named:
        suspects = []
        for r in low.named:
            rank, host = _ras_global(ctx, comm, r)
            suspects.append(Suspect(confidence="high",
                kind="lagging", rank=rank, node=host, gpu=r.gpu,
                pg_rank=r.rank if rank != r.rank else None,
                reason=f"RAS: launched up to operation {low.count} while "
                       f"{sum(g.size for g in groups[1:])} rank(s) launched {groups[-1].count}"
                       + (f" (rank {r.rank} of communicator {comm.ident}, {comm.size} ranks)"
                          if rank != r.rank else "")
                       + ("" if host else f" on host {r.node}, an address neither the logs "
                          "nor the topology name"),
                evidence=[Evidence(file=label, line=r.line,
                                   text=f"Rank {r.rank} -- GPU {r.gpu} managed by process "
                                        f"{r.pid} on node {r.node}"), *evidence]))
        ranks = [s.rank for s in suspects if s.rank is not None]
    elif not _world_comm(ctx, comm):
        # The unnamed side of a sub-communicator: its ranks are not global ranks, and RAS
        # printed nothing that says which processes they are.
        ctx.notes.append(f"RAS: {low.size} rank(s) of communicator {comm.ident} ({comm.size} "
                         f"ranks) are behind at operation {low.count}; RAS did not name them")
        return None
    else:
        size = comm.size or sum(g.size for g in groups)
        ranks = [r for r in range(size) if r not in named]
        ahead = sorted(named)
        ctx.notes.append(f"RAS named rank(s) {compact_ranges(ahead)} of communicator "
                         f"{comm.ident}: they are ahead (operation {groups[-1].count}); the "
                         f"culprits are the {low.size} rank(s) it did not name, behind at "
                         f"operation {low.count}")
        suspects = [Suspect(kind="lagging", rank=r,
                            reason=f"RAS: behind at operation {low.count} (RAS printed the "
                                   f"{len(ahead)} rank(s) ahead, not this one)",
                            evidence=evidence) for r in ranks]
    return Finding(verdict="culprit found",
                    summary=f"RAS: rank(s) {compact_ranges(ranks)} of communicator {comm.ident} "
                            f"stopped launching at operation {low.count} while others reached "
                            f"{groups[-1].count}.",
                    suspects=suspects,
                    collective=Collective(op=None, seq=low.count + 1, pg=f"comm {comm.hash}"))


def _laggards(ctx: Context, earlier: list[Finding]) -> list[Finding]:
    """Ranks below the wavefront, desync-report laggards, and ranks that left no log."""
    named = {s.rank for f in earlier for s in f.suspects if s.rank is not None}
    found: list[Finding] = []
    for pg, states in sorted(by_pg(ctx).items()):
        front = wavefront(states)
        if front is None:
            continue
        # A rank of unknown progress (a line naming it without a sequence number) is no laggard.
        below = [s for s in states if (arrived := s.arrived()) is not None and arrived < front
                 and s.rank not in named]
        # A rank whose watchdog fired waits inside a collective: it arrived. Below the others
        # of the same group it can only be in another communicator (PyTorch 2.1 prints no
        # process group), never one that did not arrive.
        behind = [s for s in below if not s.waiting()]
        got_past = _got_past(states, below, front, named)
        if got_past is not None:
            found.append(got_past)
            named.update(s.rank for s in got_past.suspects if s.rank is not None)
            below = [s for s in below if s.rank not in named]
        inside = {s.rank: s.timed_out for s in below if s.timed_out is not None and s.waiting()}
        if inside:
            seqs = compact_ranges(sorted(set(inside.values())))
            ctx.notes.append(f"rank(s) {compact_ranges(sorted(inside))} timed out inside "
                             f"sequence number(s) {seqs}, below the wavefront {front} of "
                             f"process group {pg}: waiting in another communicator, not "
                             "lagging")
        if behind:
            ops = Counter(s.op for s in states if s.arrived() == front and s.op)
            op = ops.most_common(1)[0][0] if ops else None
            found.append(Finding(
                verdict="culprit found",
                summary=f"Rank(s) {compact_ranges([s.rank for s in behind])} never arrived at "
                        f"sequence number {front} of process group {pg}, where the other "
                        f"{len(states) - len(behind)} rank(s) wait.",
                suspects=[Suspect(kind="lagging", rank=s.rank,
                                  confidence="high" if ctx.world is not None
                                  and len(states) >= ctx.world else "medium",
                                  reason=f"last enqueued {s.arrived()}, below the wavefront "
                                         f"{front} of process group {pg} (never arrived)",
                                  evidence=s.evidence[:3]) for s in behind],
                collective=Collective(op=op, seq=front, pg=pg)))
            named.update(s.rank for s in behind)
    for item in ctx.facts.events:
        if item.event.type != "desync" or item.pg_rank is None:
            continue
        lagging = item.pg_rank if item.pg == DEFAULT_PG else None
        event = item.event
        if "didn't finish" in event.message:
            ctx.inside.setdefault(item.pg_rank, item.evidence)
            continue
        if lagging is not None and lagging in named:
            continue
        seq = event.seq
        found.append(Finding(
            verdict="culprit found",
            summary=f"The desync report names rank {item.pg_rank}: it finished collective "
                    f"#{event.last_completed} but did not join #{seq}.",
            suspects=[Suspect(confidence="high", kind="lagging", rank=lagging,
                              pg_rank=None if lagging is not None else item.pg_rank,
                              reason=f"desync report: finished collective "
                                     f"#{event.last_completed}, did not join #{seq} (count "
                                     "from 1)", evidence=[item.evidence])]))
        if lagging is not None:
            named.add(lagging)
    if not found and not named:
        found += absent_findings(ctx)
    return found


def _got_past(states: list[Progress], below: list[Progress], front: int,
              named: set[int]) -> Finding | None:
    """Ranks stuck in a collective that other ranks of the same process group completed: those
    wait in the next one, `front`, and their watchdogs fired there. A rank whose collective
    never completed while its peers got past it is behind them (its GPU stream, or what it
    runs before the next collective: it enqueued nothing after), not a victim of theirs. Only
    where the lines name the group of both (PyTorch 2.1 prints none: ranks at different
    numbers may then be in different communicators)."""
    past = sorted(s.rank for s in states if s.waiting() and s.timed_out == front
                  and s.pg_known is not None)
    stuck = [s for s in below if s.waiting() and s.pg_known is not None and s.rank not in named]
    if not past or not stuck:
        return None
    pg = stuck[0].pg
    suspects = []
    for state in sorted(stuck, key=lambda s: s.rank):
        seq = state.timed_out
        stopped = state.enqueued is not None and state.enqueued == seq
        sure = stopped and state.pg_known == "said" and all(
            s.pg_known == "said" for s in states if s.rank in past)
        suspects.append(Suspect(
            kind="lagging", rank=state.rank, confidence="medium" if sure else "low",
            reason=f"its collective {seq} of process group {pg} never completed"
                   + (f" and it enqueued nothing after it (last enqueued {state.enqueued})"
                      if stopped else "")
                   + f", while rank(s) {compact_ranges(past)} completed {seq} and wait in "
                     f"{front}: behind them, not waiting for them",
            evidence=state.evidence[:2]))
    ranks = [s.rank for s in suspects if s.rank is not None]
    return Finding(
        verdict="culprit found",
        summary=f"Rank(s) {compact_ranges(ranks)} did not get past sequence number "
                f"{min(s.timed_out or front for s in stuck)} of process group {pg}, which rank(s) "
                f"{compact_ranges(past)} completed before waiting in {front}: the former are "
                "behind (what runs on their GPU or before their next collective), the latter "
                "wait for them.",
        suspects=suspects, collective=Collective(op=None, seq=front, pg=pg))


def _inside(ctx: Context, earlier: list[Finding]) -> list[Finding]:
    """Ranks the desync report says joined but did not finish: inside the collective."""
    if not ctx.inside:
        return []
    named = {s.rank for f in earlier for s in f.suspects if s.rank is not None}
    for finding in earlier:
        for suspect in finding.suspects:
            if suspect.rank in ctx.inside:
                suspect.evidence.append(ctx.inside[suspect.rank])
    left = sorted(r for r in ctx.inside if r not in named)
    ctx.notes.append(f"the desync report names rank(s) {compact_ranges(sorted(ctx.inside))} as "
                     "joined but did not finish: inside the collective, not missing from it")
    if not left:
        return []
    return [Finding(
        verdict="network path",
        summary=f"The desync report names rank(s) {compact_ranges(left)}: they joined the "
                "collective and did not finish it; the logs name no failure of theirs. Suspect "
                "the network path of these ranks.",
        suspects=[Suspect(kind="stuck", rank=r, reason="desync report: joined but did not "
                          "finish the collective", evidence=[ctx.inside[r]]) for r in left])]


def _stuck(ctx: Context) -> list[Finding]:
    """All ranks arrived at the wavefront and none completed it."""
    out: list[Finding] = []
    for pg, states in sorted(by_pg(ctx).items()):
        front = wavefront(states)
        if front is None or len(states) < 2:
            continue
        inside = [s for s in states if s.arrived() == front]
        done = [s for s in inside if s.completed is not None and s.completed >= front]
        complete_world = ctx.world is not None and len(states) >= ctx.world
        if done or len(inside) != len(states) or not (complete_world or ctx.ras_healthy):
            continue
        ranks = sorted(s.rank for s in inside)
        ops = Counter(s.op for s in inside if s.op)
        why = "RAS reports every rank healthy" if ctx.ras_healthy else \
            "every rank of the job has a log"
        out.append(Finding(
            verdict="network path",
            summary=f"All {len(ranks)} ranks launched sequence number {front} of process group "
                    f"{pg} and none completed it ({why}): the logs do not name a rank. Suspect "
                    "the network between these ranks.",
            suspects=[Suspect(kind="stuck", rank=None, ranks=ranks,
                              reason=f"ranks {compact_ranges(ranks)} are all inside sequence "
                                     f"number {front}; none completed",
                              evidence=[e for s in inside[:3] for e in s.evidence[:1]])],
            collective=Collective(op=ops.most_common(1)[0][0] if ops else None, seq=front,
                                  pg=pg)))
    return out


def _explained(ctx: Context, findings: list[Finding]) -> list[Finding]:
    """Drop a culprit finding whose ranks are a narrower finding's ranks plus ranks that wait
    inside a collective (their watchdog fired): those wait for the narrower culprit. RAS lists
    every member of a stuck sub-group as behind in the world communicator, for one."""
    waiting = {s.rank for s in ctx.states.values() if s.waiting()}
    culprits = [(f, {s.rank for s in f.suspects if s.rank is not None}) for f in findings
                if f.verdict == "culprit found"]
    out: list[Finding] = []
    for finding in findings:
        ranks = next((r for f, r in culprits if f is finding), set())
        narrower = next((r for _, r in culprits if r and r < ranks and ranks - r <= waiting),
                        None)
        if narrower is None:
            out.append(finding)
            continue
        note = (f"rank(s) {compact_ranges(sorted(ranks - narrower))} look behind "
                f"({finding.summary.rstrip('.')}) but wait inside a collective: they wait for "
                f"rank(s) {compact_ranges(sorted(narrower))}")
        if note not in ctx.notes:
            ctx.notes.append(note)
    return out


def _merge(findings: list[Finding]) -> list[Finding]:
    """Culprits first, then desyncs, then network paths; one finding per distinct rank set."""
    order = {"culprit found": 0, "application desync": 1, "network path": 2, "cannot tell": 3}
    seen: set[tuple[object, ...]] = set()
    out: list[Finding] = []
    for finding in sorted(findings, key=lambda f: order[f.verdict]):
        key = tuple(sorted((s.kind, s.rank if s.rank is not None else -1, s.node or "")
                           for s in finding.suspects))
        ranks = {s.rank for s in finding.suspects if s.rank is not None}
        if key in seen:
            continue
        if ranks and any(ranks <= {s.rank for s in f.suspects} for f in out
                         if f.verdict == finding.verdict):
            continue
        seen.add(key)
        out.append(finding)
    # A culprit explains the ranks waiting on it; desyncs are real on their own.
    if out and out[0].verdict == "application desync":
        out = [f for f in out if f.verdict != "culprit found"] + \
            [f for f in out if f.verdict == "culprit found"]
    return out


def _victim_notes(ctx: Context, findings: list[Finding]) -> None:
    culprits = {s.rank for f in findings for s in f.suspects if s.rank is not None}
    watchdogs = [e for e in ctx.facts.events if e.event.type == "watchdog_timeout"
                 and e.rank is not None]
    # First by the c10 time stamp where every line has one (per-rank files are read in name
    # order), else in reading order.
    timed = [(_stamp_key(found), index) for index, e in enumerate(watchdogs)
             if (found := _C10_STAMP.search(e.evidence.text)) is not None]
    if watchdogs and len(timed) == len(watchdogs):
        watchdogs = [watchdogs[index] for _, index in sorted(timed)]
    if watchdogs and culprits and watchdogs[0].rank not in culprits:
        first = watchdogs[0]
        ctx.notes.append(f"rank {first.rank}'s watchdog fired first ({first.evidence.file}:"
                         f"{first.evidence.line}): a victim waiting for the culprit, not the "
                         "culprit")
    failures = [e for e in ctx.facts.events if e.event.type == "child_failed"
                and e.rank is not None]
    if failures and culprits and failures[0].rank not in culprits:
        ctx.notes.append(f"torchrun reports rank {failures[0].rank} as the first failure: the "
                         "first process to exit, a victim of the hang, not its cause")
    for item in ctx.facts.events:
        if item.event.type == "watchdog_timeout" and item.rank is not None \
                and item.pg_rank is not None and item.pg_rank != item.rank \
                and item.pg == DEFAULT_PG:
            ctx.notes.append(f"{item.evidence.file}:{item.evidence.line}: the line is rank "
                             f"{item.rank}'s (prefix) but the message says Rank {item.pg_rank}: "
                             "the prefix (global rank) is used, the message's rank is the "
                             "process-group rank and can be stale")
            break


def _only_seq(ctx: Context) -> int | None:
    """The one sequence number every watchdog line timed out on, where no rank state holds it
    (lines with only process-group ranks)."""
    seqs = {e.event.seq for e in ctx.facts.events
            if e.event.type == "watchdog_timeout" and e.event.seq is not None}
    return seqs.pop() if len(seqs) == 1 else None


def _stamp_key(found: re.Match[str]) -> tuple[str, str]:
    """A c10 log stamp (`E1003 18:37:01.83`, month unpadded: `E321`) as a sortable key."""
    return found.group(1).zfill(4), found.group(2)


def _collective_of(ctx: Context, rank: int | None) -> Collective | None:
    """The collective of the process group in which `rank` is below the wavefront."""
    for pg, states in sorted(by_pg(ctx).items()):
        front = wavefront(states)
        mine = next((s for s in states if s.rank == rank), None)
        if front is None or mine is None or (mine.arrived() or 0) >= front:
            continue
        ops = Counter(s.op for s in states if s.arrived() == front and s.op)
        numel = next((s.numel_in for s in states
                      if s.arrived() == front and s.numel_in is not None), None)
        return Collective(op=ops.most_common(1)[0][0] if ops else None, seq=front, pg=pg,
                          numel=numel)
    return None


def _hung_at(states: list[Progress]) -> int | None:
    """The sequence number the ranks hang in: the one their watchdogs timed out on (work is
    enqueued ahead of it, so the last enqueued is later), else the wavefront."""
    timed = Counter(s.timed_out for s in states if s.timed_out is not None)
    return timed.most_common(1)[0][0] if timed else wavefront(states)


def _common_collective(ctx: Context) -> Collective | None:
    # A group some rank timed out in first: a group whose ranks only report their counters
    # (a dump signal from another rank) says nothing of where the job hangs.
    groups = sorted(by_pg(ctx).items(),
                    key=lambda item: (all(s.timed_out is None for s in item[1]), item[0]))
    for pg, states in groups:
        front = _hung_at(states)
        if front is not None:
            ops = Counter(s.op for s in states if s.op and
                          (s.timed_out == front or s.arrived() == front))
            numel = next((s.numel_in for s in states if s.numel_in is not None), None)
            return Collective(op=ops.most_common(1)[0][0] if ops else None, seq=front, pg=pg,
                              numel=numel)
    return None


def _cannot_tell(ctx: Context) -> str:
    hang = [e for e in ctx.facts.events if e.event.type in _HANG_EVENTS]
    states = list(ctx.states.values())
    if ctx.group_local:
        seqs = sorted({e.event.seq for e in hang if e.event.seq is not None})
        return ("The lines print only process-group ranks (`[PG x Rank M]` of a sub-group, or "
                "`[Rank M]` of several groups, with no launcher prefix), timing out at sequence "
                "number(s) "
                f"{compact_ranges(seqs) if seqs else '?'}: no global rank can be read, so the "
                "logs cannot say which rank the job waits for.")
    if not hang and not states and not ctx.facts.gave_up:
        if any(report.rows_ok is False for report, _ in ctx.facts.ras):
            return ("RAS reports errors (see the notes) but no launch-count split, and the "
                    "inputs hold no watchdog timeout, desync report or Flight Recorder state: "
                    "they do not show which rank, if any, the job waits for.")
        return "The inputs hold no hang evidence (no watchdog timeout, desync report, Flight " \
               "Recorder state or RAS mismatch): the logs do not say which rank stopped."
    waiting = sorted(waiting_ranks(ctx))
    front = _hung_at(states)
    text = (f"Only rank(s) {compact_ranges(waiting) if waiting else '?'} left hang evidence "
            f"(waiting in sequence number {front})")
    if ctx.ras_healthy:
        return (text + f"; RAS reports all {ctx.world or '?'} ranks launched the same "
                "operations, so no rank is behind in NCCL: the collective is launched "
                "everywhere and does not complete, and these logs cannot say why.")
    if ctx.unheard:
        return (text + f"; rank(s) {compact_ranges(ctx.unheard)} of the job left none, but "
                "without the job's size these lines may be an excerpt: their logs decide.")
    return (text + "; without the other ranks' logs, dumps or RAS output the logs cannot say "
            "which rank or link the job waits for.")
