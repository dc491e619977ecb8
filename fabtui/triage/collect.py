"""What to collect next when the logs cannot tell (or tell only part): each item says what is
missing from these inputs and how to get it on the next hang."""

from __future__ import annotations

from fabtui.model.triage import TriageReport
from fabtui.topology.ranks import compact_ranges
from fabtui.triage.findings import Context

WORLD = ("the job's size: the launcher's command line (torchrun --nnodes/--nproc_per_node, srun "
         "-n), a rank file or --world-size, or NCCL_DEBUG=INFO init lines (`rank R nranks N`), "
         "so ranks that left no line can be named")
EVERY_RANK = ("the log of every rank, each line with its global rank (torchrun --tee 3 "
              "--log-dir DIR, srun -l, or one file per rank)")
FLIGHT_RECORDER = ("Flight Recorder dumps of every rank (TORCH_NCCL_TRACE_BUFFER_SIZE=2000 and "
                   "TORCH_NCCL_DUMP_ON_TIMEOUT=1), read with torchfrtrace: which rank never "
                   "entered the collective, and its stack")
RAS = ("NCCL RAS status while the job hangs (NCCL 2.24+: `ncclras`, or `echo STATUS | nc "
       "localhost 28028` on a node of the job): which ranks launched which operation, and "
       "which processes are gone")
STACKS = ("stacks of the ranks while they hang (py-spy dump --native --pid PID, or gdb -p PID "
          "-ex 'thread apply all bt'): a rank in host code, a data loader or a checkpoint is "
          "the one the others wait for")
NET_DEBUG = ("NCCL_DEBUG=INFO with NCCL_DEBUG_SUBSYS=INIT,NET, every line with its host "
             "prefix: NCCL 2.19+ prints the local and remote GID and the HCA of a failed "
             "completion, which name the path; then the NIC and switch-port counters of both "
             "ends")
GLOBAL_RANKS = ("lines that carry the global rank: the launcher's prefix (torchrun --tee 3 "
                "prints `[rankN]:`, srun -l, mpirun --tag-output) or per-rank log files; "
                "PyTorch's `[PG x Rank M]` is only the rank within process group x")
WHICH_SIDE = ("Flight Recorder dumps (TORCH_NCCL_TRACE_BUFFER_SIZE) or TORCH_DISTRIBUTED_DEBUG="
              "DETAIL stacks of the ranks on each side: which code path issued each collective")


def what_to_collect(ctx: Context, report: TriageReport) -> list[str]:
    """The items for `report` (empty when the logs named the culprit with confidence)."""
    out: list[str] = []
    unsure = report.verdict == "cannot tell" or (
        report.suspects and all(s.confidence == "low" for s in report.suspects if s.fault == 1))
    if not unsure:
        return out
    has_fr = any(source.kind in ("flight-recorder", "fr-analyzer") for source in report.sources)
    has_ras = any(source.kind == "ras" for source in report.sources)
    unplaced = any(w.node is None and w.rank is None for w in report.warnings
                   if w.type == "ib_completion_error")
    if ctx.group_local:
        out.append(GLOBAL_RANKS)
    if report.verdict == "application desync":
        out.append(WHICH_SIDE)
        return out
    if unplaced:
        out.append(NET_DEBUG)
    if ctx.world is None and (report.ranks_seen or ctx.unheard):
        out.append(WORLD)
    if ctx.unheard:
        out.append(f"the logs of rank(s) {compact_ranges(ctx.unheard)}: in the job, but no "
                   "timeout of theirs is among these lines")
    elif report.ranks_seen and (ctx.world is None or len(report.ranks_seen) < ctx.world):
        out.append(EVERY_RANK)
    if not has_fr and (report.ranks_seen or ctx.group_local):
        out.append(FLIGHT_RECORDER)
    if ctx.ras_healthy:
        out.append("RAS shows every rank launched the same operations: the collective is "
                   "launched everywhere and does not complete. " + STACKS + "; and " + NET_DEBUG)
    elif not has_ras and not unplaced:
        out.append(RAS)
    if not out:
        out.append(STACKS)
    return out
