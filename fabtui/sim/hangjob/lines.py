"""The lines a simulated rank prints, in the NCCL 2.18-2.27 and PyTorch 2.1 / 2.4 / 2.6 formats.

NCCL_DEBUG=INFO init, Megatron-style iterations, NCCL WARN and INFO lines (the IB completion error
and its chain), PyTorch c10 lines (the watchdog timeout, the abort on an NCCL error, the desync
report), each worded as the job's releases word it. Failure lines are added to the rank's
`events`; init and iterations are returned.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from fabtui.sim.hangjob.spec import TIMEOUT_MS, Job, Rank, ring
from fabtui.topology.graph import FabricGraph

_IB_WARN_LINE = {18: 1295, 19: 1333, 20: 1696, 21: 1909, 22: 1984, 23: 2121, 24: 2244,
                 25: 2244, 26: 2358, 27: 2451}
"""transport/net_ib.cc line of the completion-error WARN in each release."""
_MS = [f"{4000.0 + k * 0.5:.1f}" for k in range(97)]
"""Iteration times (ms) a rank prints: a healthy job's few-percent spread, no straggler."""


def _stamp(job: Job, t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(job.epoch + t))


def _nccl_prefix(r: Rank, tid_offset: int = 0) -> str:
    return f"{r.node}:{r.pid}:{r.pid + tid_offset}"


def mgmt_ip(r: Rank) -> str:
    return f"10.40.{r.node_index // 250}.{r.node_index % 250 + 1}"


def _warn(job: Job, r: Rank, t: float, where: str, message: str) -> list[tuple[float, str]]:
    """An NCCL WARN line: a blank line before it up to 2.25, a timestamp from 2.26 on."""
    head = f"{_nccl_prefix(r, 57)} [{r.gpu}] {where} NCCL WARN {message}"
    if job.minor >= 26:
        return [(t, f"[{_stamp(job, t)}] {head}")]
    return [(t, ""), (t, head)]


def info(r: Rank, t: float, message: str, tid_offset: int = 0) -> tuple[float, str]:
    return (t, f"{_nccl_prefix(r, tid_offset)} [{r.gpu}] NCCL INFO {message}")


def ib_error(job: Job, r: Rank, peer: Rank, t: float, status: int, direction: str,
              ) -> list[tuple[float, str]]:
    """The completion-error WARN of `r`'s NIC naming `peer`, with its error chain."""
    port = 50_000 + (peer.pid * 7 + r.rank) % 15_000
    where, text = completion_warn(job.minor, mgmt_ip(peer), port, status, direction, r.ip,
                                  peer.ip, r.nic)
    lines = _warn(job, r, t, where, text)
    lines += [info(r, t + 1e-4, "transport/net.cc:1227 -> 6", 57),
              info(r, t + 2e-4, "proxy.cc:696 -> 6", 57),
              info(r, t + 3e-4, "proxy.cc:874 -> 6 [Proxy Thread]", 57)]
    return lines


def completion_warn(minor: int, peer_oob: str, port: int, status: int, direction: str,
                    local_ip: str, remote_ip: str, hca: str | None) -> tuple[str, str]:
    """(source location, message) of the completion-error WARN as NCCL 2.`minor` prints it.

    The peer is the address of the connection's socket (`ncclSocketGetAddr(&comm->sock)` in
    net_ib): the far host's OOB interface, the one its init line prints as `OOB bond0:IP`, not
    its rail NIC. The NICs of the failed path are the GIDs after it (RoCE: IPv4-mapped), as in
    the real lines of NVIDIA/nccl #1698 and #1814 (tests/triage_fixtures/real)."""
    vendor = 129 if status == 12 else 249
    peer = f"{peer_oob}<{port}>"
    if minor < 20:
        text = (f"NET/IB : Got completion from peer {peer} with error {status}, opcode 0, len 0, "
                f"vendor err {vendor} ({direction}) localGid ::ffff:{local_ip} "
                f"remoteGid ::ffff:{remote_ip}")
    elif minor < 22:
        text = (f"NET/IB : Got completion from peer {peer} with status={status} opcode=0 len=0 "
                f"vendor err {vendor} ({direction}) localGid ::ffff:{local_ip} "
                f"remoteGids::ffff:{remote_ip}")
    else:
        text = (f"NET/IB: Got completion from peer {peer} with status={status} opcode=0 len=0 "
                f"vendor err {vendor} ({direction}) localGid ::ffff:{local_ip} "
                f"remoteGids::ffff:{remote_ip} hca {hca}")
    return f"transport/net_ib.cc:{_IB_WARN_LINE[minor]}", text


def _c10(job: Job, r: Rank, t: float, line: int, message: str, level: str = "E") -> str:
    """A PyTorch c10 log line: `[rankN]:` and nanosecond stamps from 2.2 on, `[E file:line]`
    before."""
    if job.torch < "2.2":
        return f"[{level} ProcessGroupNCCL.cpp:{line}] {message}"
    when = time.gmtime(job.epoch + t)
    nanos = int((job.epoch + t) % 1 * 1e9)
    stamp = f"{level}{when.tm_mon}{when.tm_mday:02d} {time.strftime('%H:%M:%S', when)}.{nanos:09d}"
    return f"[rank{r.rank}]:[{stamp} ProcessGroupNCCL.cpp:{line}] {message}"


def c10_day(job: Job, t: float) -> str:
    when = time.gmtime(job.epoch + t)
    micros = int((job.epoch + t) % 1 * 1e6)
    return f"{when.tm_mon}{when.tm_mday:02d} {time.strftime('%H:%M:%S', when)}.{micros:06d}000"


def _pg_prefix(job: Job, r: Rank, pg: str, desc: str) -> str:
    rank = job.pg_rank(r.rank) if pg == job.pg else r.rank
    if job.torch < "2.2":
        return f"[Rank {rank}]"
    if job.torch < "2.5":
        return f"[PG {pg} ({desc}) Rank {rank}]"
    return f"[PG ID {pg} PG GUID {pg}({desc}) Rank {rank}]"


def watchdog(job: Job, r: Rank, t: float, seq: int, *, pg: str | None = None,
             desc: str | None = None) -> None:
    """What a rank stuck in collective `seq` prints when its watchdog fires, and its abort."""
    pg = pg or job.pg
    desc = desc or job.pg_desc
    op = r.op_at_seq.get(seq, job.op)
    numel = r.numel_at_seq.get(seq, job.numel)
    ran = TIMEOUT_MS + 1 + (r.rank * 37 + seq) % 90
    pg_rank = job.pg_rank(r.rank) if pg == job.pg else r.rank
    caught = (f"[Rank {pg_rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum="
              f"{seq}, OpType={op}, NumelIn={numel}, NumelOut={numel}, Timeout(ms)="
              f"{TIMEOUT_MS}) ran for {ran} milliseconds before timing out.")
    prefix = _pg_prefix(job, r, pg, desc)
    lines: list[str]
    if job.torch < "2.2":
        lines = [_c10(job, r, t, 475, caught),
                 _c10(job, r, t, 489, "Some NCCL operations have failed or timed out. Due to "
                      "the asynchronous nature of CUDA kernels, subsequent GPU operations might "
                      "run on corrupted/incomplete data."),
                 _c10(job, r, t, 495, "To avoid data inconsistency, we are taking the entire "
                      "process down.")]
    elif job.torch < "2.5":
        lines = [_c10(job, r, t, 607, caught),
                 _c10(job, r, t, 1664, f"{prefix} Exception (either an error or timeout) "
                      f"detected by watchdog at work: {seq}, last enqueued NCCL work: "
                      f"{r.enqueued}, last completed NCCL work: {r.completed}."),
                 _c10(job, r, t, 1709, f"{prefix} Timeout at NCCL work: {seq}, last enqueued "
                      f"NCCL work: {r.enqueued}, last completed NCCL work: {r.completed}."),
                 _c10(job, r, t, 621, f"[Rank {pg_rank}] Some NCCL operations have failed or "
                      "timed out. Due to the asynchronous nature of CUDA kernels, subsequent "
                      "GPU operations might run on corrupted/incomplete data."),
                 _c10(job, r, t, 627, f"[Rank {pg_rank}] To avoid data inconsistency, we are "
                      "taking the entire process down."),
                 _c10(job, r, t, 1515, f"{prefix} Process group watchdog thread terminated "
                      f"with exception: {caught}")]
    else:
        lines = [_c10(job, r, t, 629, caught),
                 _c10(job, r, t, 2168, f"{prefix}  failure detected by watchdog at work "
                      f"sequence id: {seq} PG status: last enqueued work: {r.enqueued}, last "
                      f"completed work: {r.completed}"),
                 _c10(job, r, t, 667, "Stack trace of the failed collective not found, "
                      "potentially because FlightRecorder is disabled. You can enable it by "
                      "setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value."),
                 _c10(job, r, t, 1595, f"{prefix} Process group watchdog thread terminated "
                      f"with exception: {caught}")]
    r.events += [(t + i * 1e-4, line) for i, line in enumerate(lines)]
    r.exit = (t + 0.5, -6, f"Signal 6 (SIGABRT) received by PID {r.pid}")


def network_abort(job: Job, r: Rank, t: float) -> None:
    """A rank whose NCCL call failed (completion error): the watchdog reports the NCCL error."""
    prefix = _pg_prefix(job, r, job.pg, job.pg_desc)
    message = (f"{prefix} Process group watchdog thread terminated with exception: NCCL error: "
               f"remote process exited or there was a network error, NCCL version {job.nccl}")
    r.events.append((t, _c10(job, r, t, 1515 if job.torch < "2.5" else 1595, message)))
    r.exit = (t + 0.5, -6, f"Signal 6 (SIGABRT) received by PID {r.pid}")


def desync_report(job: Job, reporter: Rank, t: float, lines: list[str]) -> None:
    """TORCH_NCCL_DESYNC_DEBUG's report, printed by the lowest rank still reporting."""
    report = [f" - [{job.pg_rank(reporter.rank)}] Timeout at collective: {job.op}, #{job.seq}",
              " - To our best knowledge, the lagging/dead/mismatched ranks that caused the "
              "desync are:", *lines]
    prefix = f"[rank{reporter.rank}]:" if job.torch >= "2.2" else ""
    reporter.events += [(t + 0.3 + i * 1e-4, prefix + line) for i, line in enumerate(report)]


def init_lines(job: Job, r: Rank, graph: FabricGraph) -> Iterator[str]:
    """NCCL_DEBUG=INFO init, as this release prints it."""
    node = graph.nodes[r.node]
    nranks = len(job.ranks)
    nnodes = len({r.node for r in job.ranks})
    pointer = f"0x55d0c{r.rank:07x}"
    p = f"{_nccl_prefix(r)} [{r.gpu}] NCCL INFO "
    sep = "Bootstrap : Using" if job.minor < 24 else "Bootstrap: Using"
    yield f"{p}{sep} bond0:{mgmt_ip(r)}<0>"
    if r.rank == 0 or job.minor >= 24:
        yield f"{p}NCCL version {job.nccl}+cuda12.4"
    yield f"{p}NCCL_IB_GID_INDEX set by environment to 3."
    yield f"{p}NCCL_IB_TC set by environment to 106."
    using = " ".join(f"[{i}]{n.name}:1/RoCE" for i, n in enumerate(node.nics))
    yield f"{p}NET/IB : Using {using} [RO]; OOB bond0:{mgmt_ip(r)}<0>"
    yield f"{p}Using network IB"
    head = "ncclCommInitRank " if job.minor >= 21 else ""
    tail = (f"comm {pointer} rank {r.rank} nranks {nranks} cudaDev {r.gpu} nvmlDev {r.gpu} "
            f"busId {r.bus} commId 0x{job.comm_hash:x}")
    yield f"{p}{head}{tail} - Init START"
    if job.minor >= 20:
        yield (f"{p}comm {pointer} rank {r.rank} nRanks {nranks} nNodes {nnodes} localRanks 8 "
               f"localRank {r.local} MNNVL 0")
    if nnodes > 1 and r.nic is not None:
        index = next(i for i, n in enumerate(node.nics) if n.name == r.nic)
        prev, nxt = ring(job, r.rank, -8), ring(job, r.rank, 8)
        for channel in (0, 1):
            yield (f"{p}Channel {channel:02d}/0 : {prev.rank}[{prev.gpu}] -> {r.rank}[{r.gpu}] "
                   f"[receive] via NET/IB/{index}/GDRDMA")
            yield (f"{p}Channel {channel:02d}/0 : {r.rank}[{r.gpu}] -> {nxt.rank}[{nxt.gpu}] "
                   f"[send] via NET/IB/{index}/GDRDMA")
        yield f"{p}Connected all rings, use ring PXN 0 GDR 1"
    yield (f"{p}2 coll channels, 2 collnet channels, 0 nvls channels, 2 p2p channels, 2 p2p "
           "channels per peer")
    yield f"{p}{head}{tail} - Init COMPLETE"


def _heads(job: Job) -> tuple[list[str], list[str]]:
    """Each iteration line's text before and after its time, shared by every rank."""
    if not job.step_heads:
        total = iteration_count(job)
        for step in range(1, total + 1):
            loss = 2.9 - 0.6 * step / (step + 4000)
            job.step_heads[step] = (
                f"[{_stamp(job, -4.0 * (total - step) - 30)}] iteration {step:>8d}/  500000 | "
                f"consumed samples: {step * 1024:>12d} | elapsed time per iteration (ms): ",
                f" | learning rate: 2.998E-04 | global batch size:  1024 | lm loss: "
                f"{loss:.6E} | loss scale: 1.0 | grad norm: {0.41 + (step % 13) / 100:.3f} | "
                "number of skipped iterations:   0 | number of nan iterations:   0 |")
    steps = sorted(job.step_heads)
    return [job.step_heads[s][0] for s in steps], [job.step_heads[s][1] for s in steps]


def iteration(job: Job, r: Rank, step: int) -> str:
    """One Megatron-style iteration line (every rank logs them in this job)."""
    before, after = _heads(job)
    return f"{before[step - 1]}{_MS[(r.rank * 131 + step * 17) % 97]}{after[step - 1]}"


def iteration_count(job: Job) -> int:
    return max(4, job.spec.bytes_per_rank // 330) if job.spec.bytes_per_rank else 4


def iterations(job: Job, r: Rank) -> str:
    """The iterations before the hang, as one block (several collectives each, so not numbered
    by seq); built in one comprehension: at 1 MB a rank this is most of the work."""
    before, after = _heads(job)
    base = r.rank * 131
    return "\n".join([f"{b}{_MS[(base + 17 * step) % 97]}{a}"
                      for step, (b, a) in enumerate(zip(before, after, strict=True), start=1)])
