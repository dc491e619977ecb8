"""The evidence chain for a located suspect: from the job's symptom down to the optic.

    job step time -> NCCL busbw -> rail imbalance -> leaf PFC pause -> port FEC / BER -> optic DOM

Each link runs one probe through whatever runs probes (the workspace: `run_probe`), all links at
once, and is marked `confirmed` (the fault shows at that layer), `contradicted` (the probe looked
and it does not) or `unknown` (it could not look: no such component, a dead or slow device, no
job log given), with the values that decided it and the probe that read them. A device that
does not answer within `timeout` is an `unknown` link with that reason, never a hang.

Probes (probes/*.toml): `logs.nccl` on the suspect node's job log; `nccl.mpirun` (ring
all_reduce) on the suspect node beside a reference node; `switch.counters` on the leaf of every
rail of the suspect node (the suspect port's traffic against its siblings'); `switch.pfc` and
`switch.fec` on the suspect leaf (and `nic.mlxlink` at the NIC end when the leaf receives
clean); `switch.dom` on the suspect port.
"""

from __future__ import annotations

import asyncio
import dataclasses
import statistics
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from fabtui.model.chain import LAYERS, ChainLink, EvidenceChain, Layer
from fabtui.model.probe import Metric, ProbeResult, Verdict
from fabtui.model.stragglers import STRAGGLER_BELOW
from fabtui.topology.graph import FabricGraph
from fabtui.triage.probing import CANNOT_TELL, is_bug

_BAD = (Verdict.FAIL, Verdict.WARN)
_JOB_EVENTS = ("event.watchdog_timeout", "event.ib_completion_error", "event.nccl_error",
               "event.desync", "event.connection_closed", "event.child_failed")


class ProbeRunning(Protocol):
    """What runs one probe: `Workspace.run_probe`."""

    def run_probe(self, name: str, target: str | None, params: Mapping[str, str],
                  topology: Path | None = None) -> Awaitable[ProbeResult]: ...


@dataclass(frozen=True)
class SuspectLocation:
    """Where triage located the suspect, in topology terms (any part may be unknown)."""

    node: str
    nic: str | None = None
    leaf_port: str | None = None
    """`leaf:port` the NIC's cable lands on."""
    optic: str | None = None
    rank: int | None = None
    job_log: str | None = None
    """Path of the job's log on the node (for the `job` link); None: that link is unknown
    unless `step_ratio` is given."""
    step_ratio: float | None = None
    """Fastest step time / this rank's (a straggler score), if known from the step logs."""
    reference_node: str | None = None
    """A node to run the pair test with (default: the first other node of the topology)."""

    @classmethod
    def of_rank(cls, graph: FabricGraph, rank: int, *, job_log: str | None = None,
                step_ratio: float | None = None, reference_node: str | None = None,
                ) -> SuspectLocation:
        """The suspect where `rank` runs (its first NIC, that NIC's leaf port and optic).
        Raises `UnknownRank` for a rank outside the job."""
        place = graph.placement(rank)
        nic = place.nics[0] if place.nics else None
        port = f"{nic.leaf}:{nic.leaf_port}" if nic and nic.leaf and nic.leaf_port else None
        return cls(node=place.node, nic=nic.nic if nic else None, leaf_port=port,
                   optic=nic.optic if nic else None, rank=rank, job_log=job_log,
                   step_ratio=step_ratio, reference_node=reference_node)


def _on(metrics: list[Metric], component: str) -> list[Metric]:
    """Metrics about `component` or its lanes / queues."""
    return [m for m in metrics if m.component == component or
            m.component.startswith(component + "/")]


def _values(metrics: list[Metric], *, bad_only: bool = False) -> dict[str, float | int | str |
                                                                        bool | None]:
    picked = [m for m in metrics if not bad_only or m.verdict in _BAD]
    return {f"{m.name}@{m.component}" if "/" in m.component else m.name: m.value
            for m in picked[:12]}


async def _run(runner: ProbeRunning, name: str, target: str, params: Mapping[str, str],
               timeout: float) -> ProbeResult | str:
    """The probe's result, or why there is none (one line)."""
    try:
        result = await asyncio.wait_for(runner.run_probe(name, target, params), timeout)
    except TimeoutError:
        return f"{target} did not answer in {timeout:g} s"
    except CANNOT_TELL as exc:  # a refused request or a dead device: a reason, not a crash
        if is_bug(exc):
            raise  # a bug is not a fact about the fabric
        return f"{name} on {target}: {exc or type(exc).__name__}"
    if result.error:
        return f"{target}: {result.error}"
    return result


def _unknown(layer: Layer, question: str, reason: str, probe: str | None = None,
             target: str | None = None) -> ChainLink:
    return ChainLink(layer=layer, question=question, status="unknown", reason=reason,
                     probe=probe, target=target)


def _slowdown(text: str, window: int = 10) -> tuple[float, float] | None:
    """(median of the first steps, median of the last) the log states, in seconds."""
    from fabtui.triage.stragglers import step_seconds

    times = [t for line in text.splitlines() if (t := step_seconds(line)) is not None]
    if len(times) < 2 * window:
        return None
    return statistics.median(times[:window]), statistics.median(times[-window:])


async def _job(s: SuspectLocation, runner: ProbeRunning, timeout: float) -> ChainLink:
    question = "did the job stall or slow down on this node?"
    probe = "logs.nccl"
    if s.step_ratio is not None and s.job_log is None:
        status = "confirmed" if s.step_ratio < STRAGGLER_BELOW else "contradicted"
        return ChainLink(layer="job", question=question, status=status,
                         reason=f"step-time score {s.step_ratio:.2f} (straggler below "
                                f"{STRAGGLER_BELOW})", values={"step_ratio": s.step_ratio})
    if s.job_log is None:
        return _unknown("job", question, "no job log or step times given")
    got = await _run(runner, probe, s.node, {"path": s.job_log}, timeout)
    if isinstance(got, str):
        return _unknown("job", question, got, probe, s.node)
    events = [m for m in got.metrics if m.name in _JOB_EVENTS and m.verdict in _BAD]
    values: dict[str, float | int | str | bool | None] = {
        m.name: str(m.value)[:120] for m in events[:6]}
    slowdown = _slowdown(got.raw[-1].output if got.raw else "")
    if slowdown is not None:
        values.update(first_steps_s=slowdown[0], last_steps_s=slowdown[1])
        ratio = slowdown[0] / slowdown[1] if slowdown[1] > 0 else 1.0
        if s.step_ratio is None or ratio < s.step_ratio:
            s = dataclasses.replace(s, step_ratio=round(ratio, 3))
    if s.step_ratio is not None:
        values["step_ratio"] = s.step_ratio
    if events:
        return ChainLink(layer="job", question=question, status="confirmed", probe=probe,
                         target=s.node, values=values,
                         reason=f"{len(events)} failure event(s) in the job log, first: "
                                f"{str(events[0].value)[:100]}")
    if s.step_ratio is not None and s.step_ratio < STRAGGLER_BELOW:
        return ChainLink(layer="job", question=question, status="confirmed", probe=probe,
                         target=s.node, values=values,
                         reason=f"no failure in the log, but the steps slowed: score "
                                f"{s.step_ratio:.2f} (fastest / own step time)")
    return ChainLink(layer="job", question=question, status="contradicted", probe=probe,
                     target=s.node, values=values, reason="the job log shows no stall, "
                                                          "timeout or network error")


async def _busbw(s: SuspectLocation, graph: FabricGraph, runner: ProbeRunning,
                 timeout: float) -> ChainLink:
    question = "is NCCL busbw low with this node in the ring?"
    probe = "nccl.mpirun"
    other = s.reference_node or next((n for n in graph.nodes if n != s.node), None)
    if other is None or s.node not in graph.nodes:
        return _unknown("busbw", question, f"no node to pair {s.node} with")
    gpus = min(len(graph.nodes[s.node].gpus), len(graph.nodes[other].gpus)) or 1
    params = {"hosts": f"{s.node}:{gpus},{other}:{gpus}", "ranks": str(2 * gpus),
              "nccl_env": "NCCL_ALGO=Ring"}
    got = await _run(runner, probe, s.node, params, timeout)
    if isinstance(got, str):
        return _unknown("busbw", question, got, probe, s.node)
    busbw = next((m for m in got.metrics if m.name == "busbw_max"), None)
    expected = next((m.value for m in got.metrics if m.name == "busbw_expected"), None)
    failures = [m for m in got.metrics if m.name.startswith("failure.") and m.verdict in _BAD]
    values: dict[str, float | int | str | bool | None] = {"with": other}
    if busbw is not None:
        values.update(busbw_gbps=busbw.value, expected_gbps=expected)
    if failures:
        values["failure"] = str(failures[0].value)[:120]
        return ChainLink(layer="busbw", question=question, status="confirmed", probe=probe,
                         target=s.node, values=values,
                         reason=f"the pair test with {other} failed: {values['failure']}")
    if busbw is None:
        return _unknown("busbw", question, "the pair test printed no busbw", probe, s.node)
    status = "confirmed" if busbw.verdict in _BAD else "contradicted"
    return ChainLink(layer="busbw", question=question, status=status, probe=probe,
                     target=s.node, values=values,
                     reason=f"{busbw.value} GB/s with {other} (expected {expected} GB/s)")


async def _rail(s: SuspectLocation, graph: FabricGraph, runner: ProbeRunning,
                timeout: float) -> tuple[ChainLink, bool | None]:
    """The suspect port's traffic against the node's other rails; also whether it is down."""
    question = "does the suspect rail carry less than the node's other rails?"
    probe = "switch.counters"
    if s.leaf_port is None or s.node not in graph.nodes:
        return _unknown("rail", question, "no leaf port known for the suspect"), None
    ports = {f"{a.switch}:{a.port}" for (host, _), a in graph.attachments.items()
             if host == s.node}
    leaves = sorted({p.split(":")[0] for p in ports})
    got = await asyncio.gather(*(_run(runner, probe, leaf, {}, timeout) for leaf in leaves))
    rates: dict[str, float] = {}
    down: dict[str, bool] = {}
    errors = []
    for result in got:
        if isinstance(result, str):
            errors.append(result)
            continue
        for m in result.metrics:
            if m.component in ports and m.name in ("rate.rx_ok", "rate.tx_ok") and \
                    isinstance(m.value, (int, float)):
                rates[m.component] = rates.get(m.component, 0.0) + float(m.value)
            if m.component in ports and m.name == "state_down":
                down[m.component] = bool(m.value)
    if s.leaf_port not in rates and s.leaf_port not in down:
        reason = errors[0] if errors else f"{s.leaf_port}: no counters read"
        return _unknown("rail", question, reason, probe, s.leaf_port.split(":")[0]), None
    is_down = down.get(s.leaf_port, False)
    own = rates.get(s.leaf_port, 0.0)
    siblings = [v for p, v in rates.items() if p != s.leaf_port]
    base = statistics.median(siblings) if siblings else 0.0
    values: dict[str, float | int | str | bool | None] = {
        "port_pps": round(own, 1), "siblings_median_pps": round(base, 1), "port_down": is_down,
        "rails_read": len(rates)}
    if errors:
        values["unread"] = len(errors)
    target = s.leaf_port.split(":")[0]
    if is_down:
        return ChainLink(layer="rail", question=question, status="confirmed", probe=probe,
                         target=target, values=values,
                         reason=f"{s.leaf_port} is down: this rail carries nothing"), True
    if base <= 0:
        return _unknown("rail", question, "no traffic on any rail of the node (is the job "
                        "running?)", probe, target), False
    ratio = own / base
    values["ratio"] = round(ratio, 3)
    status = "confirmed" if ratio < STRAGGLER_BELOW else "contradicted"
    return ChainLink(layer="rail", question=question, status=status, probe=probe, target=target,
                     values=values, reason=f"{s.leaf_port} carries {ratio:.2f} of the node's "
                                           "other rails"), False


async def _port_probe(layer: Layer, question: str, probe: str, target: str, port: str,
                      runner: ProbeRunning, timeout: float, healthy: str) -> ChainLink:
    got = await _run(runner, probe, target, {}, timeout)
    if isinstance(got, str):
        return _unknown(layer, question, got, probe, target)
    mine = _on(got.metrics, port)
    if not mine:
        return _unknown(layer, question, f"{probe} read nothing for {port}", probe, target)
    bad = [m for m in mine if m.verdict in _BAD]
    if bad:
        first = bad[0]
        unit = f" {first.unit}" if first.unit else ""
        return ChainLink(layer=layer, question=question, status="confirmed", probe=probe,
                         target=target, values=_values(mine, bad_only=True),
                         reason=f"{first.name} = {first.value}{unit}"
                                f" on {first.component}"
                                + (f" (limit {first.limit:g}{unit})" if first.limit is not None
                                   else ""))
    return ChainLink(layer=layer, question=question, status="contradicted", probe=probe,
                     target=target, values=_values(mine), reason=healthy)


_NIC_FEC_METRICS = ("raw_ber", "effective_ber", "fec", "symbol", "uncorr", "corrected")


async def _nic_fec(s: SuspectLocation, runner: ProbeRunning, timeout: float) -> ChainLink | None:
    """The FEC / BER the suspect NIC reads on its receive side (`nic.mlxlink`): a confirming
    link when it is out of range, else None (the leaf's reading stands)."""
    probe, target = "nic.mlxlink", f"{s.node}:{s.nic}"
    got = await _run(runner, probe, target, {}, timeout)
    if isinstance(got, str):
        return None
    bad = [m for m in got.metrics if m.verdict in _BAD
           and any(key in m.name for key in _NIC_FEC_METRICS)]
    if not bad:
        return None
    first = bad[0]
    return ChainLink(layer="fec", question="does either end of the suspect link see FEC errors "
                     "or a high pre-FEC BER?", status="confirmed", probe=probe, target=target,
                     values=_values(bad, bad_only=True),
                     reason=f"{first.name} = {first.value} on {first.component} (the NIC end; "
                            "the leaf end receives clean)")


async def build_chain(suspect: SuspectLocation, graph: FabricGraph, runner: ProbeRunning, *,
                      timeout: float = 120.0) -> EvidenceChain:
    """Run every link's probe at once and judge each (see the module docstring)."""
    port = suspect.leaf_port
    leaf = port.split(":")[0] if port else None

    async def absent(layer: Layer, question: str) -> ChainLink:
        return _unknown(layer, question, "no leaf port known for the suspect")

    pfc_q = "is the leaf port pausing (PFC)?"
    fec_q = "does the leaf port see FEC errors or a high pre-FEC BER?"
    dom_q = "is the optic's light (DOM) out of range?"
    jobs: list[Callable[[], Awaitable[ChainLink]]] = [
        lambda: _job(suspect, runner, timeout),
        lambda: _busbw(suspect, graph, runner, timeout)]
    if port and leaf:
        jobs += [lambda: _port_probe("pfc", pfc_q, "switch.pfc", leaf, port, runner, timeout,
                                     "no pause frames beyond the limits on the port"),
                 lambda: _port_probe("fec", fec_q, "switch.fec", leaf, port, runner, timeout,
                                     "FEC counters and BER within limits"),
                 lambda: _port_probe("optic", dom_q, "switch.dom", port, port, runner, timeout,
                                     "every lane's power and bias within range")]
    else:
        jobs += [lambda: absent("pfc", pfc_q), lambda: absent("fec", fec_q),
                 lambda: absent("optic", dom_q)]
    (job, busbw, pfc, fec, optic), (rail, down) = await asyncio.gather(
        asyncio.gather(*(j() for j in jobs)), _rail(suspect, graph, runner, timeout))
    if fec.status == "contradicted" and suspect.nic:
        # The leaf receives clean: the NIC end of the same cable may not (a failing leaf
        # transmitter, a dirty connector at the leaf): errors show where light is received.
        nic_fec = await _nic_fec(suspect, runner, timeout)
        if nic_fec is not None:
            fec = nic_fec
    if down and fec.status == "contradicted":
        fec = fec.model_copy(update={"status": "unknown", "reason": f"{port} is down: FEC "
                                     "counts nothing on a dark link"})
    links = [job, busbw, rail, pfc, fec, optic]
    confirmed = [link.layer for link in links if link.status == "confirmed"]
    deepest = max(confirmed, key=LAYERS.index) if confirmed else None
    unknown = [link.layer for link in links if link.status == "unknown"]
    summary = (f"confirmed at {', '.join(confirmed)}; the deepest is {deepest}" if confirmed
               else "no layer confirms a fault") + \
        (f"; unknown: {', '.join(unknown)}" if unknown else "")
    return EvidenceChain(node=suspect.node, nic=suspect.nic, port=port, optic=suspect.optic,
                         rank=suspect.rank, links=links, confirmed=confirmed, deepest=deepest,
                         summary=summary)


def render_chain(chain: EvidenceChain) -> str:
    """The chain for a terminal or a markdown report (one line per layer)."""
    head = f"Evidence chain for {chain.node}" + (f" {chain.nic}" if chain.nic else "") + \
        (f" -> {chain.port}" if chain.port else "") + \
        (f" (optic {chain.optic})" if chain.optic else "")
    lines = [head]
    for link in chain.links:
        via = f" [{link.probe} {link.target}]" if link.probe else ""
        lines.append(f"  {link.layer:<6} {link.status:<12} {link.reason}{via}")
    lines.append(f"  => {chain.summary}")
    return "\n".join(lines)
