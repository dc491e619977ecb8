"""The logs a simulated training job and kernel write: NCCL init and failures, PyTorch watchdog.

The job runs one rank per GPU on every node of the fabric (8 per node, the topology's rank
order), launched with `srun -l`, so `job.log` carries a `rank: ` prefix on each line and
`rank-N.log` on the rank's node is the same lines without it. What the logs say follows the
scenario, in the wording NCCL 2.21 and PyTorch 2.5 use:

- init: `NET/IB : Using` with the node's NICs, one network channel per rank over its rail NIC,
  `/GDRDMA` unless GPUDirect RDMA is off on the node (then `GPU Direct RDMA Disabled for HCA`);
- steps: rank 0 logs each training step and its time (a slow node stretches it);
- an NCCL hang on `node:gpuN` at T: the NIC of that rank lost its link, so one retry window
  later (`Sim.retry_window_s`: 8.6 s on NCCL 2.21 with the default NCCL_IB_TIMEOUT 18) that
  rank and the rank sending to it over the rail report completion error 12, each naming its
  peer's host by its OOB address (`peer`, as NCCL prints the socket address) and the two rail
  NICs by their GIDs, and both abort; every other rank stalls in the all_reduce until the
  watchdog fires at T + timeout, and rank 0's desync report names the two ranks;
- a link flap longer than the retry window: the same completion error 12 on the rank of that
  NIC and its rail sender, and the job ends; a shorter flap costs the job nothing;
- dmesg: `mlx5_core ... Link down` / `Link up` for every down window of the node's NIC links,
  and the PFC stall-prevention event of a storming NIC when it stops pausing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from fabtui.model.topology import Nic
from fabtui.sim import ib, misconfig
from fabtui.sim.core import Sim, gpu_product
from fabtui.sim.hangjob.lines import completion_warn
from fabtui.sim.hangjob.spec import NCCL_RELEASES
from fabtui.sim.scenario import FaultKind

_BASE_STEPS = 1200
"""Training steps the job had done when the scenario started."""
_MAX_STEP_LINES = 600


@dataclass(frozen=True, order=True)
class _Line:
    t: float
    rank: int
    text: str


def wall(sim: Sim, t: float) -> time.struct_time:
    """The UTC wall-clock time of simulation time `t`."""
    return time.gmtime(sim.epoch + t)


def _stamp(sim: Sim, t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", wall(sim, t))


def _c10_stamp(sim: Sim, t: float, level: str = "E") -> str:
    micro = int((sim.epoch + t) % 1 * 1e6)
    return time.strftime(f"{level}%m%d %H:%M:%S", wall(sim, t)) + f".{micro:06d}000"


def _rank_table(sim: Sim) -> list[tuple[int, str, int]]:
    """(rank, host, gpu) for every rank of the job."""
    return [(slot.rank, slot.node, slot.gpu) for slot in sim.graph.ranks]


def _pid(rank: int) -> int:
    return 41000 + rank * 3


def steps_done(sim: Sim, t: float) -> int:
    """Training steps completed by time `t` (a stalled job does none; a straggler fewer)."""
    step_s = sim.scenario.workload.step_s
    return _BASE_STEPS + int(sim.integrate(lambda x: sim.job_factor(x) / step_s, t))


def _mnnvl(sim: Sim, nodes: list[str]) -> bool:
    """Whether NCCL uses multi-node NVLink for the job (its init line's `MNNVL 1`): every node
    of the job in one NVLink domain and registered in it when the job started, and the job did
    not set `NCCL_MNNVL_ENABLE=0` (NCCL env docs)."""
    members = [sim.graph.nodes[n] for n in nodes if n in sim.graph.nodes]
    domains = {n.nvlink_domain for n in members}
    if len(nodes) < 2 or len(domains) != 1 or None in domains:
        return False
    env = {**misconfig.nccl_conf(sim, nodes[0], 0.0), **sim.scenario.workload.nccl_env}
    return env.get("NCCL_MNNVL_ENABLE") != "0" and \
        all(sim.nvlink_registered(n, 0.0) for n in nodes)


def _init_lines(sim: Sim) -> list[_Line]:
    """NCCL_DEBUG=INFO init, as each rank prints it (just before the scenario's t=0)."""
    lines: list[_Line] = []
    ranks = _rank_table(sim)
    nranks = len(ranks)
    nodes = list(dict.fromkeys(host for _, host, _ in ranks))
    gdr_off = {f.host for f in sim.faults if f.kind is FaultKind.GDR_OFF and f.spec.at <= 0}
    comm = 0x9F1C2B3A4D5E6F70
    t0 = -95.0
    link_layer = "IB" if ib.is_ib(sim) else "RoCE"
    local_ranks = {host: sum(1 for _, h, _ in ranks if h == host) for host in nodes}
    mnnvl = _mnnvl(sim, nodes)
    for rank, host, gpu in ranks:
        node = sim.graph.nodes[host]
        prefix = f"{host}:{_pid(rank)}:{_pid(rank)} [{gpu}] NCCL INFO "
        nic = sim.nic_of_gpu(host, gpu)
        conf = misconfig.nccl_conf(sim, host, 0.0)
        nics = misconfig.usable_nics(node, conf.get("NCCL_IB_HCA"))
        using = " ".join(f"[{i}]{n.name}:1/{link_layer}" for i, n in enumerate(nics))
        pointer = f"0x55d0c{rank:07x}"
        bus = node.gpus[gpu].pci.split(":", 1)[-1].replace(":", "").split(".")[0] + "0"
        text = []
        if rank == 0:
            text.append(f"NCCL version {sim.scenario.workload.nccl_version}+cuda12.4")
        text += [f"Bootstrap : Using bond0:{_mgmt_ip(sim, host)}<0>",
                 *[f"{k} set by environment to {v}." for k, v in
                   {**conf, **sim.scenario.workload.nccl_env}.items()],
                 f"NET/IB : Using {using} [RO]; OOB bond0:{_mgmt_ip(sim, host)}<0>",
                 "Using network IB",
                 f"ncclCommInitRank comm {pointer} rank {rank} nranks {nranks} cudaDev {gpu} "
                 f"nvmlDev {gpu} busId {bus} commId 0x{comm:x} - Init START",
                 f"comm {pointer} rank {rank} nRanks {nranks} nNodes {len(nodes)} "
                 f"localRanks {local_ranks[host]} localRank {gpu} MNNVL {int(mnnvl)}"]
        if nic is not None and len(nodes) > 1:
            index = node.nics.index(nic)
            gdr = host not in gdr_off
            if not gdr:
                text.append(f"NET/IB : GPU Direct RDMA Disabled for HCA {index} '{nic.name}' "
                            f"(no module)")
            via = f"NET/IB/{index}" + ("/GDRDMA" if gdr else "")
            prev_rank = (rank - 8) % nranks
            next_rank = (rank + 8) % nranks
            for channel in (0, 1):
                text.append(f"Channel {channel:02d}/0 : {prev_rank}[{gpu}] -> {rank}[{gpu}] "
                            f"[receive] via {via}")
                text.append(f"Channel {channel:02d}/0 : {rank}[{gpu}] -> {next_rank}[{gpu}] "
                            f"[send] via {via}")
            text.append(f"Connected all rings, use ring PXN 0 GDR {1 if gdr else 0}")
        text += ["2 coll channels, 2 collnet channels, 0 nvls channels, 2 p2p channels, "
                 "2 p2p channels per peer",
                 f"ncclCommInitRank comm {pointer} rank {rank} nranks {nranks} cudaDev {gpu} "
                 f"nvmlDev {gpu} busId {bus} commId 0x{comm:x} - Init COMPLETE"]
        lines += [_Line(t0 + i * 0.01, rank, prefix + each) for i, each in enumerate(text)]
    return lines


def _mgmt_ip(sim: Sim, host: str) -> str:
    index = list(sim.graph.nodes).index(host)
    return f"10.40.{index // 250}.{index % 250 + 1}"


def _step_lines(sim: Sim, t: float) -> list[_Line]:
    """Rank 0's progress: a line per step (thinned on long runs) with the step's time."""
    step_s = sim.scenario.workload.step_s
    lines: list[_Line] = []
    total = steps_done(sim, t) - _BASE_STEPS
    every = max(1, total // _MAX_STEP_LINES)
    at, done = 0.0, 0
    while done < total:
        factor = sim.job_factor(at)
        if factor <= 0:
            break
        at += step_s / factor
        done += 1
        if done % every == 0:
            loss = 2.9 - 0.6 * (1 - 1 / (1 + (_BASE_STEPS + done) / 4000))
            lines.append(_Line(at, 0, f"[{_stamp(sim, at)}] step {_BASE_STEPS + done} "
                                      f"loss {loss:.3f} step_time {step_s / factor:.2f}s"))
    return lines


def _rail_peer(sim: Sim, rank: int, offset: int) -> tuple[int, str, int] | None:
    table = _rank_table(sim)
    if len(table) <= 8:
        return None
    return table[(rank + offset) % len(table)]


def _nic_ip(nic: Nic | None) -> str:
    return nic.ip if nic is not None and nic.ip else "0.0.0.0"


def _hang_lines(sim: Sim, t: float) -> list[_Line]:
    """What every rank prints when one rank's NIC link dies mid all_reduce."""
    lines: list[_Line] = []
    timeout_ms = sim.scenario.workload.timeout_ms
    for fault in sim.faults:
        if fault.kind is not FaultKind.NCCL_HANG or fault.spec.at > t or fault.host is None \
                or fault.gpu is None:
            continue
        start = fault.spec.at
        stuck = sim.rank_of(fault.host, fault.gpu)
        if stuck is None:
            continue
        sender = _rail_peer(sim, stuck, -8)
        receiver = _rail_peer(sim, stuck, 8)
        seq = steps_done(sim, start) + 1
        numel = 262_144_000
        own_nic = sim.nic_of_gpu(fault.host, fault.gpu)
        at = start + sim.retry_window_s()
        if at <= t and receiver is not None and sender is not None:
            recv_nic = sim.nic_of_gpu(receiver[1], receiver[2])
            send_nic = sim.nic_of_gpu(sender[1], sender[2])
            lines += _completion_error(sim, at, stuck, fault.host, fault.gpu, own_nic,
                                       receiver[1], recv_nic, "Send")
            lines += _completion_error(sim, at + 0.4, sender[0], sender[1], sender[2], send_nic,
                                       fault.host, own_nic, "Send")
            for rank in (stuck, sender[0]):
                lines.append(_Line(at + 1.2, rank, _c10(
                    sim, at + 1.2, rank, "ProcessGroupNCCL.cpp:1895",
                    f"[PG ID 0 PG GUID 0(default_pg) Rank {rank}] Process group watchdog thread "
                    f"terminated with exception: NCCL error: remote process exited or there was "
                    f"a network error, NCCL version {sim.scenario.workload.nccl_version}")))
        fired = start + timeout_ms / 1000
        if fired > t:
            continue
        table = _rank_table(sim)
        failed = {stuck, sender[0] if sender else stuck}
        for rank, _host, _gpu in table:
            if rank in failed:
                continue
            when = fired + 0.002 * rank
            ran = timeout_ms + 12 + rank % 50
            lines.append(_Line(when, rank, _c10(
                sim, when, rank, "ProcessGroupNCCL.cpp:616",
                f"[Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL("
                f"SeqNum={seq}, OpType=ALLREDUCE, NumelIn={numel}, NumelOut={numel}, "
                f"Timeout(ms)={timeout_ms}) ran for {ran} milliseconds before timing out.")))
            if rank == 0 or (rank == min(r for r, _, _ in table if r not in failed)):
                lines.append(_Line(when + 0.001, rank, _c10(
                    sim, when + 0.001, rank, "ProcessGroupNCCL.cpp:1785",
                    f"[PG ID 0 PG GUID 0(default_pg) Rank {rank}] failure detected by watchdog at"
                    f" work sequence id: {seq} PG status: last enqueued work: {seq}, last "
                    f"completed work: {seq - 1}")))
        first = min(r for r, _, _ in table if r not in failed)
        report = [f" - [{first}] Timeout at collective: ALLREDUCE, #{seq}",
                  " - To our best knowledge, the lagging/dead/mismatched ranks that caused the "
                  "desync are:"]
        report += [f"     [{rank}] joined but didn't finish collective #{seq} (count from 1)"
                   for rank in sorted(failed)]
        lines += [_Line(fired + 0.5 + i * 0.001, first, f"[rank{first}]:{each}")
                  for i, each in enumerate(report)]
    return lines


def _flap_lines(sim: Sim, t: float) -> list[_Line]:
    """A link down longer than the job's retry window: the rank on that NIC and the rank
    sending to it over the rail get completion error 12 and abort; srun ends the job."""
    failure = sim.job_failure()
    if failure is None or failure[0] > t:
        return []
    at, link = failure
    owner = next(((host, nic) for (host, nic), a in sim.graph.attachments.items()
                  if a.link_index == link), None)
    if owner is None:
        return []
    host, nic_name = owner
    node = sim.graph.nodes[host]
    from fabtui.topology.pairing import gpu_map

    lines: list[_Line] = []
    version = sim.scenario.workload.nccl_version
    own_nic = next((n for n in node.nics if n.name == nic_name), None)
    for gpu in gpu_map(node).get(nic_name, [])[:1]:
        rank = sim.rank_of(host, gpu)
        sender = _rail_peer(sim, rank, -8) if rank is not None else None
        receiver = _rail_peer(sim, rank, 8) if rank is not None else None
        if rank is None or sender is None or receiver is None:
            continue
        lines += _completion_error(sim, at, rank, host, gpu, own_nic, receiver[1],
                                   sim.nic_of_gpu(receiver[1], receiver[2]), "Send")
        lines += _completion_error(sim, at + 0.4, sender[0], sender[1], sender[2],
                                   sim.nic_of_gpu(sender[1], sender[2]), host, own_nic, "Send")
        for each in (rank, sender[0]):
            lines.append(_Line(at + 1.2, each, _c10(
                sim, at + 1.2, each, "ProcessGroupNCCL.cpp:1895",
                f"[PG ID 0 PG GUID 0(default_pg) Rank {each}] Process group watchdog thread "
                f"terminated with exception: NCCL error: remote process exited or there was "
                f"a network error, NCCL version {version}")))
    return lines


def _completion_error(sim: Sim, at: float, rank: int, host: str, gpu: int, nic: Nic | None,
                      peer_host: str, peer: Nic | None, request: str) -> list[_Line]:
    """Status 12 on `nic` toward `peer` on `peer_host`, worded as the job's NCCL release words it
    (`completion_warn`, shared with `sim hang-logs`): the peer printed is `peer_host`'s OOB
    address, the GIDs are the two NICs'."""
    pid = _pid(rank)
    minor = _nccl_minor(sim.scenario.workload.nccl_version)
    where, message = completion_warn(minor, _mgmt_ip(sim, peer_host), 50000 + rank, 12, request,
                                     _nic_ip(nic), _nic_ip(peer), nic.name if nic else None)
    head = f"{host}:{pid}:{pid + 57} [{gpu}] {where} NCCL WARN {message}"
    # NCCL_DEBUG_TIMESTAMP_LEVELS stamps WARN lines from 2.26; before, a blank line precedes one.
    text = [_Line(at, rank, f"[{_stamp(sim, at)}] {head}")] if minor >= 26 else \
        [_Line(at, rank, ""), _Line(at, rank, head)]
    follow = f"{host}:{pid}:{pid + 57} [{gpu}] NCCL INFO transport/net.cc:1227 -> 6"
    return [*text, _Line(at + 0.0001, rank, follow)]


def _nccl_minor(version: str) -> int:
    """The NCCL minor release of `version` (`2.21.5` -> 21), within the line formats known
    (2.18-2.27): an older release words its lines as 2.18, a newer one as 2.27."""
    try:
        minor = int(version.split(".")[1])
    except (IndexError, ValueError):
        return 21
    return min(max(minor, min(NCCL_RELEASES)), max(NCCL_RELEASES))


def _c10(sim: Sim, at: float, rank: int, where: str, message: str) -> str:
    return f"[rank{rank}]:[{_c10_stamp(sim, at)} {where}] {message}"


def _job_lines(sim: Sim, t: float) -> list[_Line]:
    return sorted([*_init_lines(sim), *_step_lines(sim, t), *_hang_lines(sim, t),
                   *_flap_lines(sim, t)])


def job_log(sim: Sim, t: float) -> str:
    """`job.log`: every rank's lines as `srun -l` collects them, up to time `t`."""
    return "".join(f"{line.rank}: {line.text}\n" for line in _job_lines(sim, t) if line.t <= t)


def rank_log(sim: Sim, rank: int, host: str, t: float) -> str | None:
    """`rank-N.log` on the node that runs rank N (None on any other node)."""
    if not any(slot.rank == rank for slot in sim.graph.ranks_by_node.get(host, [])):
        return None
    return "".join(f"{line.text}\n" for line in _job_lines(sim, t)
                   if line.rank == rank and line.t <= t)


def kernel_log(sim: Sim, host: str, t: float, *, human: bool = False) -> str:
    """`dmesg` of a node: boot lines, then NIC link down/up for every down window so far."""
    uptime0 = 3_624_000.0 + 1000 * sim.noise("boot", host)
    node = sim.graph.nodes[host]
    events: list[tuple[float, str]] = [
        (-uptime0 + 12.1, f"mlx5_core {nic.pci}: firmware version: "
                          f"{misconfig.firmware(sim, node, nic, 0.0)}")
        for nic in node.nics]
    for nic in node.nics:
        attachment = sim.graph.attachments.get((host, nic.name))
        if attachment is None:
            continue
        for start, end in sim.down_windows(attachment.link_index):
            if start <= t:
                events.append((start, f"mlx5_core {nic.pci} {nic.netdev or nic.name}: Link down"))
            if end <= t:
                events.append((end, f"mlx5_core {nic.pci} {nic.netdev or nic.name}: Link up"))
    events += _nvlink_xids(sim, host, t)
    # mlx5 prints nothing when its PFC stall prevention fires (events.c handles port,
    # temperature and module events): the storm is only counted, tx_pause_storm_*_events in
    # `ethtool -S`, and its timeout is read with `ethtool --get-tunable IF pfc-prevention-tout`.
    events.sort()
    out = []
    for at, message in events:
        if human:
            stamp = time.strftime("%a %b %d %H:%M:%S %Y", wall(sim, at))
        else:
            stamp = f"{uptime0 + at:12.6f}"
        out.append(f"[{stamp}] {message}\n")
    return "".join(out)


_XID74_ARCHITECTURES = ("Ampere", "Hopper")
"""Xid 74 (NVLINK_ERROR) applies to A100 and H100, not to B100/GB200 (NVIDIA Xid catalog, its
"Applies to" columns); Blackwell reports NVLink faults as Xids 144-150, not simulated."""


def _nvlink_xids(sim: Sim, host: str, t: float) -> list[tuple[float, str]]:
    """Xid 74 on every GPU whose NVLinks an `nvlink-down` fault took, when it started, in the
    driver's format (NVIDIA/NVSentinel Xid 74 design note: `NVRM: Xid (PCI:0003:00:00): 74,
    pid='<unknown>', name=<unknown>, NVLink: fatal error detected on link 14(0x0, 0x0, 0x10000,
    0x0, 0x0, 0x0, 0x0)`; tests/fixtures/kernel-log)."""
    node = sim.graph.nodes[host]
    lines = []
    for fault in sim.active(FaultKind.NVLINK_DOWN, t):
        if fault.host != host:
            continue
        for gpu in node.gpus:
            if fault.gpu is not None and fault.gpu != gpu.index:
                continue
            if gpu_product(gpu.model).architecture not in _XID74_ARCHITECTURES:
                continue
            bus = gpu.pci.rsplit(".", 1)[0] if gpu.pci.count(":") == 2 else gpu.pci
            lines.append((fault.spec.at + 0.01 * gpu.index,
                          f"NVRM: Xid (PCI:{bus}): 74, pid='<unknown>', name=<unknown>, NVLink: "
                          f"fatal error detected on link 0(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, "
                          f"0x0)"))
    return lines
