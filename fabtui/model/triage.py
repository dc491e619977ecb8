"""What `fabtui triage nccl` concludes from a hung job's logs: the JSON schema of docs/triage.md.

A report names suspects (most likely first) with the lines that point at them, the collective
the job hung in where the logs identify one, a verdict, and what to run next. Ranks are always
global ranks; a process-group rank a message prints is kept apart (`pg_rank`) and never mixed in.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fabtui.model.chain import EvidenceChain

Verdict = Literal["culprit found", "network path", "application desync", "cannot tell"]
SuspectKind = Literal["lagging", "dead", "missing log", "link", "peer", "desync",
                      "local rank", "stuck", "switch", "nic", "no timeout"]
Confidence = Literal["high", "medium", "low"]
RankNumbering = Literal["global", "group-local", "none"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Evidence(_Model):
    """One input line that supports a conclusion."""

    file: str
    """The input file as the user named it (a folder's files by their path below it)."""
    line: int | None
    """1-based line number; null for facts of a whole file (a dump, a rank with no log)."""
    text: str
    """The line as read (launcher prefix kept, at most 300 characters), or the fact in words."""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.text}"


class Suspect(_Model):
    """A rank, NIC or link the logs point at, located in the fabric where the topology knows it."""

    kind: SuspectKind
    """`lagging` (never arrived at the collective the others wait in), `dead` (process gone or
    unreachable), `missing log` (every rank with a log waits and this rank left none), `link`
    (an IB completion error naming the path from this rank's NIC to a peer), `peer` (the far end
    of such a path, or a refused / closed connection's peer), `desync` (issued a different
    collective, size or dtype at one sequence number), `local rank` (named by `Connection closed
    by localRank N`), `stuck` (no rank named: the ranks inside the collective, for the network
    between them), `switch` (failed paths chained over three or more NICs with no NIC in all
    of them: the switch they all cross, in `switch` where the topology names it, or PFC on it;
    `ranks` lists the ranks whose NICs failed), `nic` (a host's NIC that reported an IB
    asynchronous error event of its own: local access violation, catastrophic error, port
    error; its peers' completion errors are the symptom), `no timeout` (a rank of the job whose
    watchdog never fired while the others wait: it never reached the collective)."""
    rank: int | None
    """Global rank, or null where the logs do not name one."""
    ranks: list[int] = Field(default_factory=list)
    """For a suspect standing for several ranks (`stuck`, `switch`, the unnamed side of a RAS
    report, an even `desync` split): their global ranks."""
    node: str | None = None
    """Host name: from the topology's rank placement, else from the log's line prefix, else
    (a rank with no log, in a regular layout) inferred from the ranks beside it, which `reason`
    says. Never an address: one neither the logs nor the topology name leaves it null."""
    gpu: int | None = None
    """GPU index on the node."""
    nic: str | None = None
    """RDMA device (`mlx5_3`)."""
    rail: int | None = None
    """Rail of the NIC, from the topology."""
    port: str | None = None
    """Leaf switch port the NIC is cabled to (`leaf-g00-r3:Ethernet12`), from the topology."""
    optic: str | None = None
    """Optic on that cable, from the topology."""
    switch: str | None = None
    """For a `switch` suspect: the switch every NIC of its failed paths is cabled to (in a
    rail-optimised fabric, the rail's leaf), from the topology; null where they share none or
    there is no topology."""
    peer: str | None = None
    """The far end as the log names it: IP address, GID, or host."""
    peer_node: str | None = None
    """Host of the peer, from the topology's NIC addresses."""
    peer_port: str | None = None
    """Leaf port of the peer's NIC, from the topology."""
    pg_rank: int | None = None
    """Process-group rank a message printed for this suspect, where it differs from a global rank
    (kept apart: PyTorch's `Rank M` is the rank in the process group and can be stale; RAS's
    `Rank M` of a sub-communicator is the rank in that communicator)."""
    confidence: Confidence = "medium"
    """How sure triage is of this suspect: `high` (the logs say so directly: the rank is the odd
    one out of three or more, the NIC reported its own error, RAS or the Flight Recorder names
    it with the whole world known), `medium` (inferred: a rank absent from the ranks that
    waited, a RAS side it did not print), `low` (one of two that cannot be told apart, a peer
    or symptom of another suspect)."""
    fault: int = 1
    """Which independent fault this suspect belongs to (1, 2, ...): two faults at once are listed
    as two groups of suspects."""
    reason: str
    """Why this suspect, in one sentence."""
    evidence: list[Evidence] = Field(default_factory=list)
    """The lines that say so (a few; the first is the strongest)."""


class Collective(_Model):
    """The collective the job hung in."""

    op: str | None
    """Operation as printed (`ALLREDUCE`, `all_reduce`)."""
    seq: int | None
    """Sequence number in the process group (PyTorch SeqNum / collective_seq_id; RAS: the count of
    launched operations)."""
    pg: str | None = None
    """Process group as printed (`0 (default_pg)`), null when the logs do not say."""
    numel: int | None = None
    """Elements (NumelIn) where printed."""
    last_enqueued: int | None = None
    """The highest sequence number any waiting rank had enqueued in that process group: work is
    enqueued ahead of the one that hangs, so this is later than `seq`, not the hung one."""


class RankState(_Model):
    """How far one rank got in one process group, as its logs, dumps or RAS tell."""

    rank: int
    """Global rank."""
    pg: str
    """Process group (`default` when the logs print none)."""
    last_enqueued: int | None = None
    """Last collective sequence number the rank enqueued (launched)."""
    last_started: int | None = None
    """Last sequence number seen started (Flight Recorder with timing enabled)."""
    last_completed: int | None = None
    """Last sequence number completed."""
    timed_out: int | None = None
    """Sequence number the rank's watchdog timed out on."""
    op: str | None = None
    """Operation of the rank's last (timed-out or enqueued) collective."""
    numel_in: int | None = None
    """Input elements of that collective."""
    numel_out: int | None = None
    """Output elements of that collective."""
    dtype: str | None = None
    """Input dtype of that collective (Flight Recorder)."""
    state: Literal["ahead", "in wavefront", "stopped", "lagging", "completed", "unknown"] = \
        "unknown"
    """Against the wavefront (the sequence most ranks enqueued last): `lagging` (never arrived),
    `stopped` (arrived, did not complete), `ahead`, `completed`, `unknown`."""


class WarnEvent(_Model):
    """An NCCL WARN or network failure one rank reported."""

    rank: int | None
    """Global rank, where known."""
    node: str | None
    """Host from the line prefix."""
    type: str
    """Event type of the NCCL log parser (`ib_completion_error`, `connection_closed`, ...)."""
    status: int | None = None
    """IB completion status (ibv_wc_status) or errno."""
    status_name: str | None = None
    """`IBV_WC_RETRY_EXC_ERR`, ..."""
    meaning: str | None = None
    """What the status means for triage."""
    role: Literal["signal", "teardown", "other"] = "other"
    """`signal` (the first failure: status 12, a closed connection's first report), `teardown`
    (flushed work requests and cascades after it), `other`."""
    peer: str | None = None
    """Peer address as printed."""
    local_gid: str | None = None
    """Local GID (RoCE) as printed."""
    remote_gid: str | None = None
    """Remote GID as printed."""
    hca: str | None = None
    """RDMA device named."""
    evidence: Evidence
    """The line."""


class NextStep(_Model):
    """A runbook to run next, with the inputs this triage found."""

    runbook: str
    """Runbook name (`fabtui runbook run NAME`)."""
    inputs: dict[str, str] = Field(default_factory=dict)
    """Input name -> value."""
    why: str
    """Why this runbook."""


class SourceFile(_Model):
    """One input file and how it was read."""

    file: str
    """As the user named it."""
    kind: Literal["log", "flight-recorder", "fr-analyzer", "ras", "unreadable"]
    """How it was read."""
    ranks: list[int] = Field(default_factory=list)
    """Global ranks it holds lines of."""
    lines: int = 0
    """Lines read (0 for binary dumps)."""
    note: str | None = None
    """Why it was unreadable, or what the file name said."""


class TriageReport(_Model):
    """The whole answer."""

    verdict: Verdict
    """`culprit found` (a rank that never arrived, died, left no log or never timed out while
    the rest wait, the rank whose NIC reported the first IB failure, or the host and NIC whose
    own IB async error event started the failure), `network path` (the logs name no rank:
    all ranks arrived and none completed, or an IB failure from a rank no log names; the network
    between the ranks involved), `application desync` (ranks issued different collectives, sizes
    or dtypes at one sequence number, or two threads used one communicator: not a network
    fault), `cannot tell` (the logs do not say)."""
    summary: str
    """The verdict in one or two sentences."""
    suspects: list[Suspect] = Field(default_factory=list)
    """Most likely first."""
    collective: Collective | None = None
    """The collective the job hung in, where identified."""
    world_size: int | None = None
    """Ranks in the job, where the logs say (communicator size, pg_config, RAS)."""
    world_size_source: str | None = None
    """Where `world_size` was read (`NCCL init nranks`, `RAS job summary`, `RAS communicators`,
    `Flight Recorder analyzer`, `Flight Recorder pg_config`, `torchrun rendezvous` (its
    `global_world_sizes=[N, ...]`), `--world-size`), or, with
    `world_size` null, `at least N: ranks 0..N-1 exist because rank N-1 logged` (a lower
    bound)."""
    world_size_at_least: int | None = None
    """A lower bound on the ranks in the job where its size is not printed: one more than the
    highest global rank seen (every rank below it exists)."""
    hung_seq: int | None = None
    """The sequence number the job hangs in: the one the watchdogs timed out on (the Flight
    Recorder's, RAS's next operation), not the last one enqueued."""
    rank_numbering: RankNumbering = "global"
    """`global` (ranks are global ranks: a launcher prefix, file name, NCCL init or the default
    process group says so), `group-local` (the logs print only ranks within a process group,
    `[Rank M]` of several groups with no launcher prefix: no global rank could be read, so none
    is blamed), `none` (no rank printed at all)."""
    collect: list[str] = Field(default_factory=list)
    """When the logs cannot tell (or tell only part): what to collect next to decide."""
    ranks_seen: list[int] = Field(default_factory=list)
    """Global ranks any input spoke for."""
    ranks: list[RankState] = Field(default_factory=list)
    """Per process group and rank: how far it got."""
    warnings: list[WarnEvent] = Field(default_factory=list)
    """NCCL WARN and network failures per rank (the first few hundred)."""
    notes: list[str] = Field(default_factory=list)
    """What a naive reading would get wrong here (the first watchdog is a victim, RAS named the
    ranks ahead, ...) and what the logs cannot say."""
    next: list[NextStep] = Field(default_factory=list)
    """Runbooks to run next."""
    similar_cases: list[str] = Field(default_factory=list)
    """Ids of past cases like this hang, best first (from the case library)."""
    chain: EvidenceChain | None = None
    """With `--chain`: the evidence chain probed for the first located suspect."""
    sources: list[SourceFile] = Field(default_factory=list)
    """The inputs read."""
