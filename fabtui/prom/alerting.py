"""Prometheus alerting rules for the fabric, generated from the topology and the catalog's limits.

`fabtui prom rules` writes these beside the recording rules: a PFC storm on a port or a NIC,
pause spreading to the uplinks, a link down, a link that flaps, FEC that cannot correct, a
pre-FEC BER or an optic's light out of its type's range, an optic running hot, out-of-sequence
packets and CNPs on a NIC, a GPU Xid, an exporter down. Every limit is one of
docs/thresholds.md: a catalog threshold (`probes/*.toml`, the same numbers a probe judges by,
read from the catalog here so the two cannot drift) or an evaluator's rule (an optic's type
spec), and each rule carries where it comes from in its `threshold_source` annotation.

The topology enters where PromQL alone cannot know: which switch ports face hosts and which are
uplinks (a storm source is a host port receiving pause; spreading is pause on the uplinks), and
the speed of every port (a pause frame holds a 400G port 83.9 us, a 100G one 336 us). Each
alert keeps the labels that name its element (`LabelMap.grouping`), so the receiver
(`fabtui.alerts`) maps it back to the topology with the same `Resolver` the live view uses, and
adds `fabtui_element` (which kind of element the labels name), `fabtui_role` (`cause`: the
alert points at a faulty element; `symptom`: it shows what a fault elsewhere does) and
`fabtui_fault` (what it is, for grouping and the runbook).

A rule fires at the catalog's fail limit (severity `critical`), or at its warn limit where the
catalog sets no fail limit (severity `warning`): one alert per element and condition.

Pure functions: rule data and YAML text, no I/O.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fabtui.model.element import device_of, split_key
from fabtui.model.probe import ProbeDef, Threshold
from fabtui.prom.catalog import BY_KEY, LANE, Element
from fabtui.prom.labels import LabelMap
from fabtui.prom.queries import alternatives, selector
from fabtui.topology.expected import pause_frame_hold_s
from fabtui.topology.graph import FabricGraph

GROUP = "fabtui-alerts"
TARGET = "target"
"""`fabtui_element` of an exporter-down alert: its labels name a scrape target."""

RUNBOOKS = {"pfc-storm": "pfc-storm", "pause-spreading": "pfc-storm", "link-down": "link-flap",
            "link-flap": "link-flap", "fec": "optic-replacement", "optic": "optic-replacement",
            "rdma-loss": "busbw-low", "congestion": "multi-job-interference",
            "gpu-xid": "nccl-hang-triage", "exporter-down": None}
"""The runbook of the library (runbooks/) an alert of each fault points at."""

DOM_DR4 = ("IEEE 802.3bs clause 124 (400GBASE-DR4): launch power -2.9..4.0 dBm and receive "
           "power -5.9..4.0 dBm per lane; Edgecore ET7502-DR4 datasheet (docs/thresholds.md "
           "section 2, transceiver-dom)")
RX_OVERLOAD_DBM = 4.0
TEMPERATURE_WARN_C = 70.0
TEMPERATURE_SOURCE = ("top of the 0-70 degC case range of 400G modules (Edgecore ET7502-DR4/-FR4 "
                      "datasheets; docs/thresholds.md section 2, transceiver-dom)")
XID_SOURCE = ("Azure/azurehpc-health-checks customTests/azure_gpu_xid.nhc (node-failing Xids); "
              "NVIDIA Xid catalog (docs/thresholds.md section 2, kernel-log): any Xid is "
              "shown, the kernel log's Xid rules judge it")
EXPORTER_SOURCE = ("Prometheus `up`: the last scrape of the target failed; its devices' "
                   "series go stale and nothing above can fire for them")


class MissingThreshold(LookupError):
    """The catalog has no threshold the rule pack is built on (a catalog edited without it)."""


@dataclass(frozen=True)
class AlertRule:
    """One alerting rule and what the receiver needs to know about it."""

    name: str
    expr: str
    severity: str
    element: str
    """Which kind of element the alert's labels name: a catalog `Element` or `target`."""
    role: str
    fault: str
    summary: str
    source: str
    """Where the limit comes from (docs/thresholds.md)."""
    threshold: str
    """The limit as docs/thresholds.md lists it (`switch.pfc pause_share.rx.PFC* fail 0.5`)."""
    for_: str = "0s"
    suspect: str = "self"
    """Which end the alert accuses: `self` (its element), `far-end` (the element at the other
    end of its cable: a port receiving pause accuses its host) or `link` (either end: a link
    down, errors on receive)."""

    def document(self) -> dict[str, Any]:
        """The rule as Prometheus reads it."""
        labels = {"severity": self.severity, "fabtui_element": self.element,
                  "fabtui_role": self.role, "fabtui_fault": self.fault,
                  "fabtui_suspect": self.suspect}
        annotations = {"summary": self.summary, "threshold": self.threshold,
                       "threshold_source": self.source}
        runbook = RUNBOOKS.get(self.fault)
        if runbook:
            annotations["runbook"] = runbook
        rule: dict[str, Any] = {"alert": self.name, "expr": self.expr}
        if self.for_ != "0s":
            rule["for"] = self.for_
        rule["labels"] = labels
        rule["annotations"] = annotations
        return rule


def threshold(catalog: Mapping[str, ProbeDef], probe: str, metric: str) -> Threshold:
    """The catalog threshold of `probe`'s `metric` (as the catalog spells it). Raises
    `MissingThreshold`."""
    definition = catalog.get(probe)
    found = next((t for t in definition.thresholds if t.metric == metric and
                  t.hardware == "*"), None) if definition else None
    if found is None:
        raise MissingThreshold(f"the catalog has no threshold {probe} {metric}: the alert "
                               "rules are built on it (docs/thresholds.md)")
    return found


def _limit(found: Threshold) -> tuple[float, str, str]:
    """(value, severity, text) of the limit a rule fires at: fail, else warn."""
    if found.fail is not None:
        return found.fail, "critical", f"fail {found.fail:g}"
    assert found.warn is not None, "a catalog threshold has a warn or a fail limit"
    return found.warn, "warning", f"warn {found.warn:g}"


@dataclass(frozen=True)
class PortClasses:
    """The fabric's switch ports by what they face, grouped by their speed."""

    host: dict[int, dict[str, set[str]]]
    """speed (Gb/s) -> switch -> its ports that face a host NIC."""
    uplink: dict[int, dict[str, set[str]]]
    """speed -> switch -> its ports that face a switch of a higher tier."""


def port_classes(graph: FabricGraph) -> PortClasses:
    """Every cabled switch port of `graph` sorted into host ports and uplinks (the topology)."""
    host: dict[int, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    uplink: dict[int, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for endpoint, index in graph.port_links.items():
        switch, port = split_key(endpoint)
        if switch not in graph.switches:
            continue
        far = graph.far_end(endpoint) or ""
        far_device = device_of(far) if far else ""
        speed = graph.link_speed(index)
        if far_device in graph.nodes:
            host[speed][switch].add(port)
        elif far_device in graph.switches and graph.tier(far_device) > graph.tier(switch):
            uplink[speed][switch].add(port)
    return PortClasses(host, uplink)


def _port_terms(labels: LabelMap, ports: Mapping[str, set[str]]) -> list[str]:
    """Matchers selecting exactly `ports` (switch -> port names): switches that share one port
    set share one matcher (a generated fabric's leaves all have the same host ports)."""
    by_set: dict[frozenset[str], list[str]] = defaultdict(list)
    for switch, names in ports.items():
        by_set[frozenset(names)].append(switch)
    terms = []
    for shared, switches in sorted(by_set.items(), key=lambda kv: sorted(kv[1])):
        terms.append(f'{labels.switch}=~"({alternatives(switches)})([:.].*)?", '
                     f'{labels.port}=~"{alternatives(shared)}"')
    return terms


class RuleBook:
    """Builds the rule pack for one fabric, label mapping, metric names and catalog."""

    def __init__(self, graph: FabricGraph, labels: LabelMap, names: Mapping[str, str],
                 catalog: Mapping[str, ProbeDef], window: str, flap_window: str = "15m") -> None:
        self.graph = graph
        self.labels = labels
        self.names = names
        self.catalog = catalog
        self.window = window
        self.flap_window = flap_window
        self.ports = port_classes(graph)

    def say(self, text: str) -> str:
        """An alert's summary template: `<switch>`, `<port>`, `<node>`, `<nic>`, `<gpu_node>`,
        `<gpu>` become the labels that hold them here, `<flap_window>` the flap window."""
        m = self.labels
        for token, label in (("<switch>", m.switch), ("<port>", m.port), ("<node>", m.node),
                             ("<nic>", m.nic), ("<gpu_node>", m.gpu_node), ("<gpu>", m.gpu)):
            text = text.replace(token, "{{ $labels.%s }}" % label)  # noqa: UP031 (Go braces)
        return text.replace("<flap_window>", self.flap_window)

    def sel(self, key: str, only: str = "") -> str:
        return selector(self.names.get(key, BY_KEY[key].metric), BY_KEY[key], only)

    def by(self, element: Element, *extra: str) -> str:
        return ", ".join((*self.labels.grouping(element), *extra))

    def _pause_share(self, key: str, ports: dict[int, dict[str, set[str]]]) -> str:
        """The share of the window the selected ports are held paused (frames/s at each port's
        speed times one frame's hold time), per port; '' when there are no such ports."""
        terms = []
        for speed, by_switch in sorted(ports.items()):
            hold = pause_frame_hold_s(speed)
            terms += [f"rate({self.sel(key, only)}[{self.window}]) * {hold:.6g}"
                      for only in _port_terms(self.labels, by_switch)]
        if not terms:
            return ""
        # Capped at 1, as `pause_share` is (docs/thresholds.md section 1).
        return f"clamp_max(max by ({self.by('port')}) ({' or '.join(terms)}), 1)"

    def rules(self) -> list[AlertRule]:
        """Every rule of the pack, in a stable order."""
        return [*self._pfc(), *self._links(), *self._fec(), *self._optics(), *self._rdma(),
                *self._gpu(), *self._exporters()]

    # PFC ------------------------------------------------------------------------------------
    def _pfc(self) -> list[AlertRule]:
        rules = []
        rx = threshold(self.catalog, "switch.pfc", "pause_share.rx.PFC*")
        value, severity, text = _limit(rx)
        share = self._pause_share("sonic.pfc_rx", self.ports.host)
        if share:
            rules.append(AlertRule(
                "FabricPfcStormFromHost", f"{share} >= {value:g}", severity, "port", "cause",
                "pfc-storm", self.say("<switch> <port> receives PFC pause from its host {{ "
                                      "$value | humanizePercentage }} of the time"),
                rx.source, f"switch.pfc pause_share.rx.PFC* {text}", suspect="far-end"))
        tx = threshold(self.catalog, "switch.pfc", "pause_share.tx.PFC*")
        value, _, text = (tx.warn, "warning", f"warn {tx.warn:g}") if tx.warn is not None \
            else _limit(tx)
        spread = self._pause_share("sonic.pfc_tx", self.ports.uplink)
        if spread:
            rules.append(AlertRule(
                "FabricPauseSpreadingUplink", f"{spread} >= {value:g}", "warning", "port",
                "symptom", "pause-spreading",
                self.say("pause spreads up the fabric: <switch> <port> pauses its spine {{ "
                         "$value | humanizePercentage }} of the time"),
                tx.source, f"switch.pfc pause_share.tx.PFC* {text} (on uplinks)"))
        nic = threshold(self.catalog, "nic.ethtool", "pause_ratio.tx_prio*")
        value, severity, text = _limit(nic)
        duration = self.sel("ethtool.tx_prio3_pause_duration")
        rules.append(AlertRule(
            "FabricPfcStormFromNic",
            f"max by ({self.by('nic')}) (rate({duration}[{self.window}]) / 1e6) >= {value:g}",
            severity, "nic", "cause", "pfc-storm",
            self.say("<node> <nic> holds its link paused {{ $value | humanizePercentage }} "
                     "of the time"),
            nic.source, f"nic.ethtool pause_ratio.tx_prio* {text}"))
        storm = threshold(self.catalog, "nic.ethtool", "delta.tx_pause_storm_error_events")
        value, severity, text = _limit(storm)
        events = self.sel("ethtool.tx_pause_storm_error_events")
        rules.append(AlertRule(
            "FabricNicPauseStormPrevention",
            f"sum by ({self.by('nic')}) (increase({events}[{self.window}])) >= {value:g}",
            severity, "nic", "cause", "pfc-storm",
            self.say("<node> <nic>: mlx5 PFC storm prevention fired"),
            storm.source, f"nic.ethtool delta.tx_pause_storm_error_events {text}"))
        return rules

    # links ----------------------------------------------------------------------------------
    def _links(self) -> list[AlertRule]:
        down = threshold(self.catalog, "switch.counters", "state_down")
        _, severity, text = _limit(down)
        oper = self.sel("sonic.oper_status")
        state = self.sel("infiniband.state_id")
        flap = threshold(self.catalog, "nic.ethtool", "delta.link_down_events_phy")
        flap_value, flap_severity, flap_text = _limit(flap)
        events = self.sel("ethtool.link_down_events_phy")
        return [
            AlertRule("FabricPortDown", f"max by ({self.by('port')}) ({oper}) == 0", severity,
                      "port", "cause", "link-down",
                      self.say("<switch> <port> is operationally down"), down.source,
                      f"switch.counters state_down {text}", suspect="link"),
            AlertRule("FabricNicLinkDown", f"max by ({self.by('ibport')}) ({state}) == 1",
                      severity, "ibport", "cause", "link-down",
                      self.say("<node> <nic>: link down (port state 1)"), down.source,
                      f"switch.counters state_down {text} (the NIC end of the link: "
                      "node_infiniband_state_id 1 is DOWN)", suspect="link"),
            AlertRule("FabricPortFlapping",
                      f"max by ({self.by('port')}) (changes({oper}[{self.flap_window}])) >= 2",
                      flap_severity, "port", "cause", "link-flap",
                      self.say("<switch> <port> went down and up again within <flap_window>"),
                      flap.source,
                      f"nic.ethtool delta.link_down_events_phy {flap_text} (applied to the "
                      f"switch end: a down-and-up of its oper status)", suspect="link"),
            AlertRule("FabricNicLinkFlapping",
                      f"sum by ({self.by('nic')}) (increase({events}[{self.flap_window}])) "
                      f">= {flap_value:g}", flap_severity, "nic", "cause", "link-flap",
                      self.say("<node> <nic>: link down events within <flap_window>"), flap.source,
                      f"nic.ethtool delta.link_down_events_phy {flap_text}", suspect="link"),
        ]

    # FEC and BER -----------------------------------------------------------------------------
    def _fec(self) -> list[AlertRule]:
        uncorr = threshold(self.catalog, "switch.fec", "delta.fec_uncorr")
        value, severity, text = _limit(uncorr)
        ber = threshold(self.catalog, "switch.fec", "fec_pre_ber")
        ber_value, ber_severity, ber_text = _limit(ber)
        nic_ber = threshold(self.catalog, "nic.ethtool", "pre_fec_ber")
        nic_value, nic_severity, nic_text = _limit(nic_ber)
        crc = threshold(self.catalog, "nic.ethtool", "delta.rx_crc_errors_phy")
        crc_value, crc_severity, crc_text = _limit(crc)
        corrected, bits = self.sel("ethtool.rx_corrected_bits_phy"), self.sel("ethtool.rx_bits_phy")
        w = self.window
        return [
            AlertRule("FabricFecUncorrectable",
                      f"sum by ({self.by('port')}) (increase({self.sel('sonic.fec_uncorr')}[{w}]))"
                      f" >= {value:g}", severity, "port", "cause", "fec",
                      self.say("<switch> <port> loses frames FEC cannot correct"), uncorr.source,
                      f"switch.fec delta.fec_uncorr {text}", suspect="link"),
            AlertRule("FabricPreFecBerHigh",
                      f"max by ({self.by('port')}) ({self.sel('sonic.fec_pre_ber')}) >= "
                      f"{ber_value:g}", ber_severity, "port", "cause", "fec",
                      self.say("<switch> <port> pre-FEC BER {{ $value }}"), ber.source,
                      f"switch.fec fec_pre_ber {ber_text}", suspect="link"),
            AlertRule("FabricNicPreFecBerHigh",
                      f"sum by ({self.by('nic')}) (rate({corrected}[{w}])) / "
                      f"sum by ({self.by('nic')}) (rate({bits}[{w}])) >= {nic_value:g}",
                      nic_severity, "nic", "cause", "fec",
                      self.say("<node> <nic> pre-FEC BER {{ $value }}"), nic_ber.source,
                      f"nic.ethtool pre_fec_ber {nic_text}", suspect="link"),
            AlertRule("FabricNicCrcErrors",
                      f"sum by ({self.by('nic')}) (increase("
                      f"{self.sel('ethtool.rx_crc_errors_phy')}[{w}])) >= {crc_value:g}",
                      crc_severity, "nic", "cause", "fec",
                      self.say("<node> <nic> receives frames FEC did not correct"), crc.source,
                      f"nic.ethtool delta.rx_crc_errors_phy {crc_text}", suspect="link"),
        ]

    # optics -----------------------------------------------------------------------------------
    def _optics(self) -> list[AlertRule]:
        rx = threshold(self.catalog, "switch.dom_all", "rx_power_dbm")
        value, severity, text = _limit(rx)
        lane = (LANE,)
        power = self.sel("sonic.rx_power")
        launch = self.sel("sonic.tx_power")
        # A lane at -inf (no light at all) is the link-down alert's: the optic alerts read
        # light that is there but out of range.
        return [
            AlertRule("FabricOpticRxPowerLow",
                      f"min by ({self.by('port')}) ({power} > -Inf) <= {value:g}", severity,
                      "port", "cause", "optic",
                      self.say("<switch> <port> receives {{ $value }} dBm"),
                      rx.source, f"switch.dom_all rx_power_dbm {text} (below)", suspect="link"),
            AlertRule("FabricOpticRxPowerHigh",
                      f"max by ({self.by('port', *lane)}) ({power}) > {RX_OVERLOAD_DBM:g}",
                      "warning", "port", "cause", "optic",
                      self.say("<switch> <port> lane {{ $labels." + LANE + " }} receives "
                               "{{ $value }} dBm (overload)"), DOM_DR4,
                      f"transceiver-dom receive maximum {RX_OVERLOAD_DBM:g} dBm (DR4/DR8)",
                      suspect="link"),
            AlertRule("FabricOpticLaunchLow",
                      f"min by ({self.by('port')}) ({launch} > -Inf) < -2.9", "critical",
                      "port", "cause", "optic",
                      self.say("<switch> <port>: its optic launches {{ $value }} dBm (an "
                               "ageing laser)"), DOM_DR4,
                      "transceiver-dom launch minimum -2.9 dBm (DR4/DR8; fails)"),
            AlertRule("FabricOpticHot",
                      f"max by ({self.by('port')}) ({self.sel('sonic.temperature')}) >= "
                      f"{TEMPERATURE_WARN_C:g}", "warning", "port", "cause", "optic",
                      self.say("<switch> <port>: optic at {{ $value }} degC"), TEMPERATURE_SOURCE,
                      f"transceiver-dom temperature warn {TEMPERATURE_WARN_C:g} degC (module "
                      "without its own limits)"),
        ]

    # RDMA -------------------------------------------------------------------------------------
    def _rdma(self) -> list[AlertRule]:
        oos = threshold(self.catalog, "nic.rdma_statistic", "delta.out_of_sequence")
        value, severity, text = _limit(oos)
        cnp = threshold(self.catalog, "nic.rdma_statistic", "rate.np_cnp_sent")
        cnp_value, cnp_severity, cnp_text = _limit(cnp)
        w = self.window
        return [
            AlertRule("FabricNicOutOfSequence",
                      f"sum by ({self.by('ibport')}) (increase("
                      f"{self.sel('infiniband.out_of_sequence')}[{w}])) >= {value:g}",
                      severity, "ibport", "symptom", "rdma-loss",
                      self.say("<node> <nic>: packets lost on the path (out of sequence)"),
                      oos.source,
                      f"nic.rdma_statistic delta.out_of_sequence {text}"),
            AlertRule("FabricNicCnpStorm",
                      f"sum by ({self.by('ibport')}) (rate("
                      f"{self.sel('infiniband.np_cnp_sent')}[{w}])) >= {cnp_value:g}",
                      cnp_severity, "ibport", "symptom", "congestion",
                      self.say("<node> <nic> sends {{ $value }} CNP/s"),
                      cnp.source, f"nic.rdma_statistic rate.np_cnp_sent {cnp_text}"),
        ]

    # GPUs and exporters -------------------------------------------------------------------------
    def _gpu(self) -> list[AlertRule]:
        return [AlertRule("FabricGpuXid", f"max by ({self.by('gpu')}) "
                          f"({self.sel('dcgm.xid')}) > 0", "warning", "gpu", "cause", "gpu-xid",
                          self.say("<gpu_node> GPU <gpu> reported Xid {{ $value }}"), XID_SOURCE,
                          "kernel-log Xid rules (any Xid shown here; the Xid list judges it)")]

    def _exporters(self) -> list[AlertRule]:
        return [AlertRule("FabricExporterDown", "up == 0", "critical", TARGET, "cause",
                          "exporter-down", "{{ $labels.job }} target {{ $labels.instance }} "
                          "does not answer its scrapes", EXPORTER_SOURCE, "up == 0",
                          for_="2m")]


def alerting_document(rules: list[AlertRule], interval: str | None) -> dict[str, Any]:
    """The alerting group as data (one group; Prometheus evaluates it beside the records)."""
    group: dict[str, Any] = {"name": GROUP}
    if interval:
        group["interval"] = interval
    group["rules"] = [rule.document() for rule in rules]
    return group


def alerting_yaml(rules: list[AlertRule], interval: str | None) -> str:
    """The alerting group in YAML, as a list item of `groups:` (strings written as JSON, valid
    YAML double-quoted scalars: any PromQL and template is quoted by construction)."""
    group = alerting_document(rules, interval)
    lines = [f"  - name: {group['name']}"]
    if "interval" in group:
        lines.append(f"    interval: {group['interval']}")
    lines.append("    rules:")
    for rule in group["rules"]:
        lines += [f"      - alert: {rule['alert']}", f"        expr: {json.dumps(rule['expr'])}"]
        if "for" in rule:
            lines.append(f"        for: {rule['for']}")
        for part in ("labels", "annotations"):
            lines.append(f"        {part}:")
            lines += [f"          {k}: {json.dumps(v)}" for k, v in rule[part].items()]
    return "\n".join(lines) + "\n"
