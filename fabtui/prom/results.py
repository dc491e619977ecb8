"""Prometheus values -> probe results, judged by the probes' own evaluators and thresholds.

A counter read as `rate(x[window])` is handed to the probe's evaluator as two samples one probe
interval apart (0, then rate x interval): the evaluator computes the same `delta.*`, `rate.*`,
`pause_ratio.*`, `pause_share.*` and BER it computes from two real reads, over the window the
catalog's thresholds are written for (`probe interval`), and `judge` applies those thresholds.
So a PFC storm read from Prometheus fails on the same `pause_share.rx.PFC3` limit as
`switch.pfc` does. Gauges (temperature, BER, DOM) are handed over as one reading.

Values no probe evaluator reads (DCGM's Xid, PCIe replays, NVLink errors; an IB port's state)
become metrics here, with the rule their probe applies elsewhere (the kernel-log Xid list, the
ibstat "not Active fails" rule) cited in docs/prometheus.md.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from fabtui.model.element import split_key
from fabtui.model.probe import Metric, ProbeDef, ProbeResult, Verdict
from fabtui.probes.evaluate import (
    EvalContext,
    NoEvaluator,
    evaluate,
    findings,
    hardware_classes,
    judge,
)
from fabtui.probes.evaluators.kernel_log import FAILING_XIDS
from fabtui.probes.targets import ProbeTarget
from fabtui.prom.catalog import LANE, MAPPED, Mapped
from fabtui.topology.graph import FabricGraph

Extra = tuple[tuple[str, str], ...]
"""Labels kept besides the element's (a DOM lane), sorted."""


@dataclass
class Readings:
    """What one poll read: per mapped metric, per element key, (extra labels, value)."""

    values: dict[str, dict[str, list[tuple[Extra, float]]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    sampled: dict[str, float] = field(default_factory=dict)
    """Device (node or switch) -> epoch seconds of its newest scraped sample."""

    def add(self, mapped: Mapped, key: str, extra: Extra, value: float) -> None:
        self.values[mapped.key][key].append((extra, value))


class Assembler:
    """Builds probe results from `Readings` for one fabric (targets cached for its life)."""

    def __init__(self, graph: FabricGraph, catalog: Mapping[str, ProbeDef],
                 mapped: tuple[Mapped, ...] = MAPPED) -> None:
        self.graph = graph
        self.catalog = catalog
        self.mapped = mapped
        self._targets: dict[str, ProbeTarget] = {}

    # targets --------------------------------------------------------------------------------
    def target(self, name: str) -> ProbeTarget:
        found = self._targets.get(name)
        if found is None:
            device, part = split_key(name)
            if device in self.graph.switches:
                found = ProbeTarget("switch", device, switch=self.graph.switches[device])
            else:
                node = self.graph.nodes[device]
                nic = next((n for n in node.nics if n.name == part), None) if part else None
                found = ProbeTarget("nic" if nic else "node", name, node=node, nic=nic)
            self._targets[name] = found
        return found

    def _context(self, probe: ProbeDef, target: ProbeTarget) -> EvalContext:
        return EvalContext(probe=probe, target=target, interval=probe.interval,
                           hardware=hardware_classes(target), graph=self.graph)

    # results --------------------------------------------------------------------------------
    def results(self, readings: Readings, queries: Mapping[str, str]) -> Iterator[ProbeResult]:
        """One result per (probe, target) that has values, as the probe itself would give."""
        by_probe: dict[str, list[Mapped]] = defaultdict(list)
        for mapped in self.mapped:
            by_probe[mapped.probe].append(mapped)
        builders = {"nic.ethtool": self._ethtool, "nic.rdma_statistic": self._rdma,
                    "nic.perfquery": self._perfquery, "gpu.nvml": self._gpu,
                    "switch.pfc": self._pfc, "switch.fec": self._fec,
                    "switch.counters": self._counters, "switch.dom_all": self._dom}
        for probe_name, members in by_probe.items():
            probe = self.catalog.get(probe_name)
            if probe is None:
                continue
            grouped: dict[str, dict[str, list[tuple[Extra, float]]]] = defaultdict(dict)
            for mapped in members:
                for key, items in readings.values.get(mapped.key, {}).items():
                    owner = self._owner(mapped, key)
                    grouped[owner].setdefault(mapped.key, []).extend(
                        ((*extra, ("element", key)), v) for extra, v in items)
            command = "promql: " + "; ".join(queries[m.key] for m in members if m.key in queries)
            build = builders[probe_name]
            for owner, values in grouped.items():
                at = readings.sampled.get(owner.partition(":")[0])
                if at is None:  # no scrape of its device is dated: nothing says it is current
                    continue
                target = self.target(owner)
                ended = datetime.fromtimestamp(at, UTC)
                try:
                    metrics = build(probe, target, values)
                except NoEvaluator as exc:  # no metrics would read as `ok`: say so instead
                    yield ProbeResult(probe=probe.name, target=owner, command=command,
                                      started_at=ended, ended_at=ended, verdict=Verdict.ERROR,
                                      error=str(exc))
                    continue
                yield ProbeResult(probe=probe.name, target=owner, command=command,
                                  started_at=ended, ended_at=ended,
                                  verdict=Verdict.worst([m.verdict for m in metrics]),
                                  metrics=metrics, findings=findings(probe, metrics))

    @staticmethod
    def _owner(mapped: Mapped, key: str) -> str:
        """The probe target a value belongs to: the NIC, the GPU's node, the port's switch."""
        if mapped.element in ("nic", "ibport"):
            return key
        return key.partition(":")[0]

    # one builder per probe ------------------------------------------------------------------
    def _windowed(self, probe: ProbeDef, values: dict[str, list[tuple[Extra, float]]],
                  field_of: Mapping[str, str]) -> tuple[dict[str, int], dict[str, int]]:
        """(before, after) counters one probe interval apart from rates."""
        after = {field_of[k]: round(v * probe.interval)
                 for k, items in values.items() if k in field_of for _, v in items[:1]}
        return dict.fromkeys(after, 0), after

    def _fields(self, probe: str, counter: bool = True) -> dict[str, str]:
        return {m.key: m.field for m in self.mapped if m.probe == probe and m.counter is counter}

    def _ethtool(self, probe: ProbeDef, target: ProbeTarget,
                 values: dict[str, list[tuple[Extra, float]]]) -> list[Metric]:
        before, after = self._windowed(probe, values, self._fields(probe.name))
        return evaluate("ethtool-stats", SimpleNamespace(counters=before),
                        SimpleNamespace(counters=after), self._context(probe, target))

    def _rdma(self, probe: ProbeDef, target: ProbeTarget,
              values: dict[str, list[tuple[Extra, float]]]) -> list[Metric]:
        before, after = self._windowed(probe, values, self._fields(probe.name))
        link = f"{target.nic.name if target.nic else 'unknown'}/1"
        return evaluate("rdma-statistic", SimpleNamespace(links={link: before}),
                        SimpleNamespace(links={link: after}), self._context(probe, target))

    def _perfquery(self, probe: ProbeDef, target: ProbeTarget,
                   values: dict[str, list[tuple[Extra, float]]]) -> list[Metric]:
        before, after = self._windowed(probe, values, self._fields(probe.name))
        ctx = self._context(probe, target)

        def port(counters: dict[str, int]) -> SimpleNamespace:
            return SimpleNamespace(lid=0, port=1, counter_set="", counters=counters)

        metrics = evaluate("perfquery", SimpleNamespace(ports=[port(before)]),
                           SimpleNamespace(ports=[port(after)]), ctx) if after else []
        for _, state in values.get("infiniband.state_id", [])[:1]:
            # nic.ibstat's rule: a port that is not Active (state 4) fails.
            metrics.append(Metric(name="port_state", value=int(state),
                                  component=ctx.component(),
                                  verdict=Verdict.OK if int(state) == 4 else Verdict.FAIL,
                                  source="IB PortState 4 = Active (node_infiniband_state_id)"))
        return metrics

    def _gpu(self, probe: ProbeDef, target: ProbeTarget,
             values: dict[str, list[tuple[Extra, float]]]) -> list[Metric]:
        gpus: dict[int, dict[str, Any]] = {}
        extra: list[Metric] = []
        ctx = self._context(probe, target)
        fields = {m.key: m for m in self.mapped if m.probe == probe.name}
        for key, items in values.items():
            mapped = fields[key]
            for labels, value in items:
                element = dict(labels)["element"]
                index = int(element.rpartition(":gpu")[2])
                gpu = gpus.setdefault(index, {"index": index})
                where = ctx.component(f"GPU{index}")
                name = mapped.field
                if name == "xid":
                    code = int(value)
                    verdict = Verdict.FAIL if code in FAILING_XIDS else \
                        Verdict.WARN if code else Verdict.OK
                    extra.append(Metric(name="xid", value=code, component=where,
                                        verdict=verdict,
                                        source="kernel-log Xid rule (Azure azure_gpu_xid.nhc "
                                               "node-failing list, 95)"))
                elif mapped.counter:
                    extra.append(Metric(name=f"rate.{name}", value=round(value, 3), unit="/s",
                                        component=where))
                elif name.startswith("remapped_rows."):
                    rows = gpu.setdefault("remapped_rows", {"pending": False, "failure": False,
                                                            "uncorrectable": None})
                    part = name.partition(".")[2]
                    rows[part] = bool(value) if part != "uncorrectable" else int(value)
                elif name.startswith("ecc."):
                    gpu.setdefault("ecc", {})[name.partition(".")[2]] = int(value)
                else:
                    gpu[name] = round(value, 2) if name == "power_draw_w" else int(value)
        metrics = evaluate("nvml", None, {"gpus": [gpus[i] for i in sorted(gpus)]}, ctx)
        return metrics + judge(extra, probe.thresholds, ctx.hardware)

    def _per_port(self, values: dict[str, list[tuple[Extra, float]]]
                  ) -> dict[str, dict[str, list[tuple[Extra, float]]]]:
        ports: dict[str, dict[str, list[tuple[Extra, float]]]] = defaultdict(dict)
        for key, items in values.items():
            for labels, value in items:
                element = dict(labels)["element"]
                ports[element.partition(":")[2]].setdefault(key, []).append((labels, value))
        return ports

    def _pfc(self, probe: ProbeDef, target: ProbeTarget,
             values: dict[str, list[tuple[Extra, float]]]) -> list[Metric]:
        fields = self._fields(probe.name)
        before: dict[str, dict[str, dict[str, int]]] = {"rx": {}, "tx": {}}
        after: dict[str, dict[str, dict[str, int]]] = {"rx": {}, "tx": {}}
        for port, port_values in self._per_port(values).items():
            old, new = self._windowed(probe, port_values, fields)
            for name, count in new.items():
                direction, _, priority = name.partition(".")
                after[direction].setdefault(port, {})[priority] = count
                before[direction].setdefault(port, {})[priority] = old[name]
        return evaluate("pfc-counters", SimpleNamespace(**before, history={}),
                        SimpleNamespace(**after, history={}), self._context(probe, target))

    def _fec(self, probe: ProbeDef, target: ProbeTarget,
             values: dict[str, list[tuple[Extra, float]]]) -> list[Metric]:
        counters = self._fields(probe.name)
        gauges = self._fields(probe.name, counter=False)
        before, after = {}, {}
        for port, port_values in self._per_port(values).items():
            old, new = self._windowed(probe, port_values, counters)
            ber = next((v for k, items in port_values.items() if k in gauges
                        for _, v in items[:1]), None)
            names = ("fec_corr", "fec_uncorr", "fec_symbol_err")
            before[port] = SimpleNamespace(fec_pre_ber=None, **{n: old.get(n) for n in names})
            after[port] = SimpleNamespace(fec_pre_ber=ber, **{n: new.get(n) for n in names})
        return evaluate("fec-stats", SimpleNamespace(interfaces=before),
                        SimpleNamespace(interfaces=after), self._context(probe, target))

    def _counters(self, probe: ProbeDef, target: ProbeTarget,
                  values: dict[str, list[tuple[Extra, float]]]) -> list[Metric]:
        from fabtui.probes.evaluators.switch_counters import _ERRORS, _FLOWS

        counters = self._fields(probe.name)
        empty = dict.fromkeys((*_ERRORS, *_FLOWS))
        before, after = {}, {}
        for port, port_values in self._per_port(values).items():
            old, new = self._windowed(probe, port_values, counters)
            status = next((v for _, v in port_values.get("sonic.oper_status", [])[:1]), None)
            state = None if status is None else "up" if status >= 1 else "down"
            before[port] = SimpleNamespace(**{**empty, **old}, state=state, admin_state=None)
            after[port] = SimpleNamespace(**{**empty, **new}, state=state, admin_state=None)
        return evaluate("switch-counters", SimpleNamespace(interfaces=before),
                        SimpleNamespace(interfaces=after), self._context(probe, target))

    def _dom(self, probe: ProbeDef, target: ProbeTarget,
             values: dict[str, list[tuple[Extra, float]]]) -> list[Metric]:
        interfaces = {}
        for port, port_values in self._per_port(values).items():
            lanes: dict[str, dict[str, float | None]] = defaultdict(dict)
            temperature = None
            for key, items in port_values.items():
                for labels, value in items:
                    if key == "sonic.temperature":
                        temperature = value
                        continue
                    lane = dict(labels).get(LANE) or "1"
                    lanes[key][lane] = None if value == float("-inf") else value
            rx = lanes.get("sonic.rx_power", {})
            interfaces[port] = SimpleNamespace(
                media_type=None, part_number=None, identifier=None, details={}, thresholds={},
                rx_power_dbm=rx, tx_power_dbm=lanes.get("sonic.tx_power", {}),
                tx_bias_ma=lanes.get("sonic.tx_bias", {}),
                los_lanes=[lane for lane, v in rx.items() if v is None],
                temperature_c=temperature, alarms=[], serial=None)
        return evaluate("transceiver-dom", None, SimpleNamespace(interfaces=interfaces),
                        self._context(probe, target))
