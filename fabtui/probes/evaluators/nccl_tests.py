"""nccl-tests results.

busbw at the largest message is what the hardware bottleneck moves; #wrong > 0 and a failed
'# Out of bounds values' line are data corruption whatever the bandwidth; an average of 0 after
an init failure means "did not run", not "slow" (NVIDIA/nccl-tests #267, #294).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.model.topology import Node
from fabtui.probes.evaluators._nccl_events import event_metrics
from fabtui.probes.evaluators.base import EvalContext, evaluator
from fabtui.topology.expected import Expected, expected_busbw, node_shape
from fabtui.topology.hca import hca_in_command, selected_nics


@evaluator("nccl-tests")
def nccl_tests(_before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """busbw (largest size and peak), correctness, and whether the test ran at all."""
    where = ctx.component()
    # The failures the test printed come first: they say why it did not run, and the first
    # finding is the one a summary shows (`status = did_not_run` alone hides the cause).
    metrics = [Metric(name=f"failure.{failure.category}", value=failure.message[:160],
                      component=failure.host if failure.host else where, verdict=Verdict.FAIL)
               for failure in after.failures]
    # What NCCL printed is the cause (an IB completion error, a peer that went away): the same
    # event metrics as for an NCCL log, so a failed run names its NIC and peer.
    metrics += event_metrics(after.events, {r.rank: r.host for r in after.ranks}, ctx)
    metrics.append(Metric(name="status", value=after.status, component=where,
                          verdict=Verdict.OK if after.status in ("ok", "incomplete") else
                          Verdict.ERROR if after.status == "did_not_run" else Verdict.FAIL))
    if after.rows:
        largest = max(after.rows, key=lambda r: r.size_bytes)
        busbw = largest.out_of_place.busbw
        if busbw is not None:
            # alltoall moves less per byte of bus than the ring collectives: its own name, so a
            # runbook never compares the two figures by mistake.
            name = "alltoall_busbw_max" if after.collective == "alltoall" else "busbw_max"
            expected = _expected(after, ctx)
            metrics.append(_judged(name, busbw, expected, where))
            if expected is not None:
                metrics.append(Metric(name="busbw_expected", value=expected.value, unit="GB/s",
                                      component=where, source=expected.basis))
        wrong = sum((r.out_of_place.wrong or 0) + (r.in_place.wrong or 0) for r in after.rows)
        metrics.append(Metric(name="wrong_total", value=wrong, component=where))
        metrics.append(Metric(name="message_bytes", value=largest.size_bytes, component=where))
    if after.peak_busbw is not None:
        metrics.append(Metric(name="busbw_peak", value=after.peak_busbw, unit="GB/s",
                              component=where))
    if after.avg_busbw is not None:
        metrics.append(Metric(name="avg_busbw", value=after.avg_busbw, unit="GB/s",
                              component=where))
    if after.out_of_bounds is not None:
        metrics.append(Metric(name="out_of_bounds", value=after.out_of_bounds, component=where))
    return metrics


def _expected(after: Any, ctx: EvalContext) -> Expected | None:
    """The healthy busbw of this run: its collective over the nodes its ranks ran on."""
    hosts = sorted({r.host for r in after.ranks})
    nodes: list[Node] = []
    if ctx.graph is not None:
        nodes = [ctx.graph.nodes[h] for h in hosts if h in ctx.graph.nodes]
    if not nodes and ctx.target.node is not None:
        nodes = [ctx.target.node]
    shape = node_shape(nodes)
    if shape is None or after.collective is None:
        return None
    if "NCCL_MNNVL_ENABLE=0" in ctx.command:  # multi-node NVLink off: the run measures the NICs
        shape = replace(shape, nvlink_domain_gpus=0)
    hca = hca_in_command(ctx.command)
    if hca is not None and len(hosts) > 1:
        # NCCL_IB_HCA pins the run to some NICs (a rail-pinned pair: one NIC a node): the
        # network part is what the fewest selected NICs of a node move, not every rail's.
        selected = min(len(selected_nics(n, hca)) for n in nodes)
        if selected == 0:
            return None  # no NIC selected: NCCL falls back to sockets or fails; no figure
        if selected < shape.nics:
            shape = replace(shape, nics=selected)
    return expected_busbw(after.collective, max(len(hosts), 1), shape)


def _judged(name: str, value: float, expected: Expected | None, where: str) -> Metric:
    """busbw against the topology's expected figure (fabtui.topology.expected); with no
    figure (no published or measured baseline for this platform and size) it is recorded, not
    judged."""
    if expected is None:
        return Metric(name=name, value=value, unit="GB/s", component=where,
                      source="no figure: no published or measured baseline for this platform "
                             "and rank count (docs/thresholds.md)")
    verdict, limit = Verdict.OK, expected.warn
    if value < expected.fail:
        verdict, limit = Verdict.FAIL, expected.fail
    elif value < expected.warn:
        verdict = Verdict.WARN
    return Metric(name=name, value=value, unit="GB/s", component=where, verdict=verdict,
                  limit=limit, source=f"expected {expected.value:g} GB/s: {expected.basis} "
                                      f"({expected.source})")
