"""nccl-tests on a simulated node, at the rates the simulation gives: `*_perf`, alone or under
`mpirun -H` / `srun --nodelist`."""

from __future__ import annotations

import re
from collections.abc import Callable

from fabtui.hostlist import HostlistError, expand
from fabtui.model.topology import Node
from fabtui.sim import misconfig
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result, gpu_product, parse_options
from fabtui.sim.scenario import FaultKind

_FACTORS: dict[str, Callable[[int], float]] = {
    "all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n,
    "sendrecv": lambda n: 1.0, "broadcast": lambda n: 1.0, "reduce": lambda n: 1.0}
"""busbw / algbw per collective for n ranks (nccl-tests doc/PERFORMANCE.md)."""


def _size(text: str) -> int:
    match = re.fullmatch(r"(\d+)([KMG]?)", text.upper())
    if match is None:
        raise ValueError(text)
    return int(match.group(1)) * {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[match.group(2)]


def nccl_tests(sim: Sim, node: Node, argv: list[str], t: float) -> Result:
    """Single node, or `mpirun ... -H a:8,b:8 ... X_perf` / `srun ... --nodelist=... X_perf`."""
    launcher = argv[0].rsplit("/", 1)[-1]
    nodes = [node.hostname]
    prefix = ""
    launch_argv = list(argv)
    pxn = "NCCL_PXN_DISABLE=1" not in argv  # mpirun -x NCCL_PXN_DISABLE=1
    mnnvl = "NCCL_MNNVL_ENABLE=0" not in argv  # multi-node NVLink off: the network only
    if launcher in ("mpirun", "srun"):
        nodes = _launch_nodes(sim, argv) or [node.hostname]
        prefix = "[1,0]<stdout>:" if launcher == "mpirun" else "0: "
        binary_at = next((i for i, a in enumerate(argv) if a.endswith("_perf")), None)
        if binary_at is None:
            return "", f"{launcher}: no program to run\n", 1
        argv = argv[binary_at:]
    binary = argv[0].rsplit("/", 1)[-1]
    collective = binary.removesuffix("_perf")
    if collective not in _FACTORS:
        return "", f"bash: {argv[0]}: command not found\n", 127
    options = parse_options(argv[1:])
    try:
        low, high = _size(options.get("-b", "8")), _size(options.get("-e", "128M"))
    except ValueError:
        return "", "Invalid size\n", 1
    gpus_per_proc = int(options.get("-g", "1"))
    # One rank per GPU of each node under a launcher; one process driving -g GPUs alone.
    slots = [(host, gpu) for host in nodes for gpu in sorted(
        sim.graph.nodes[host].gpus, key=lambda g: g.index)] \
        if launcher in ("mpirun", "srun") else \
        [(node.hostname, gpu) for gpu in sorted(node.gpus, key=lambda g: g.index)]
    if launcher not in ("mpirun", "srun"):
        if gpus_per_proc > len(slots):
            return "", (f"{node.hostname}: Test CUDA failure common.cu:1010 'invalid device "
                        "ordinal'\n"), 2
        slots = slots[:gpus_per_proc]
    ranks = len(slots)
    # A dead link behind a hang, or a NIC whose leaf's PFC watchdog drops its traffic: the
    # QPs toward it exhaust their retries and the run fails.
    cut_off = sorted(sim.cut_off(t) & set(nodes))
    hung = bool(sim.active(FaultKind.NCCL_HANG, t) or cut_off) and len(nodes) > 1
    lines = ["# nccl-tests version 2.17.1 nccl-headers=22705 nccl-library=22705",
             f"# Collective test starting: {binary}",
             f"# nThread 1 nGpus {gpus_per_proc} minBytes {low} maxBytes {high} step: 2(factor)"
             f" warmup iters: 5 iters: {options.get('-n', '20')} agg iters: 1 validation: "
             f"{options.get('-c', '1')} graph: 0", "#", "# Using devices"]
    for rank, (host, gpu) in enumerate(slots):
        pid = 40000 + rank * 7
        lines.append(f"#  Rank {rank:2d} Group  0 Pid {pid:6d} on {host:>10} device "
                     f"{gpu.index:2d} [{gpu.pci[:-2]}] {gpu_product(gpu.model).name}")
    lines += ["#",
              "#                                                              out-of-place"
              "                       in-place          ",
              "#       size         count      type   redop    root     time   algbw   busbw"
              " #wrong     time   algbw   busbw #wrong",
              "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
              "            (us)  (GB/s)  (GB/s)       "]
    factor = _FACTORS[collective](max(ranks, 2))
    size, busbws = low, []
    while size <= high:
        if hung:
            break
        count = size // 4 if collective not in ("all_gather", "alltoall", "reduce_scatter") \
            else size // 4 // max(ranks, 1)
        busbw = sim.busbw(nodes, t, size, collective=collective, pxn=pxn, mnnvl=mnnvl)
        if len(nodes) > 1:  # fewer NICs under NCCL_IB_HCA: the network part shrinks with them
            busbw *= misconfig.hca_share(sim, nodes, launch_argv, t)
            # a ring waits on its slowest channel: a lossy host link among the NICs it uses
            # (an ageing optic) costs it the go-back-N share, the others' optics do not
            busbw *= sim.nic_path_share(misconfig.run_nics(sim, nodes, launch_argv, t), t)
        algbw = busbw / factor if factor else busbw
        time_us = size / (algbw * 1e3) if algbw else 0.0
        redop = "sum" if collective in ("all_reduce", "reduce_scatter", "reduce") else "none"
        root = "0" if collective in ("broadcast", "reduce") else "-1"
        cells = f"{size:12d}  {count:12d}     float    {redop:>4}  {root:>6}"
        place = f"{time_us:8.2f} {algbw:7.2f} {busbw:7.2f}  {0:5d}"
        lines.append(f"{cells}  {place}  {place}")
        busbws.append(busbw)
        size *= 2
    if hung:
        stuck = next((f.host for f in sim.active(FaultKind.NCCL_HANG, t) if f.host in nodes),
                     cut_off[0] if cut_off else nodes[-1])
        pid = 40000 + 7 * next(i for i, (h, _) in enumerate(slots) if h == stuck)
        lines += [f"{stuck}: Test NCCL failure common.cu:1159 'remote process exited or"
                  " there was a network error / '", f" .. {stuck} pid {pid}: Test failure "
                  "common.cu:1044"]
        out = "\n".join(prefix + line for line in lines) + "\n"
        return out, "", 3
    average = sum(busbws) / len(busbws) if busbws else 0.0
    lines += ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {average:.4f} ", "#",
              f"# Collective test concluded: {binary}", "#"]
    return "\n".join(prefix + line for line in lines) + "\n", "", 0


def _launch_nodes(sim: Sim, argv: list[str]) -> list[str]:
    for i, arg in enumerate(argv):
        if arg in ("-H", "--host") and i + 1 < len(argv):
            return [h.split(":")[0] for h in argv[i + 1].split(",") if h]
        if arg.startswith("--nodelist="):
            return _expand_nodelist(arg.split("=", 1)[1], sim)
    return []


def _expand_nodelist(text: str, sim: Sim) -> list[str]:
    """`node[001-004]` or `node001,node002` (Slurm host lists), only the fabric's nodes."""
    try:
        names = expand(text)
    except HostlistError:
        return []
    return [h for h in names if h in sim.graph.nodes]
