"""Drift: the running configuration against the rendered intent, per device, each difference
with the command that fixes it and where the intended value comes from.

Readings come in as parsed probe output (`Readings`: target -> probe -> the parser's JSON), so
this module runs nothing: the workspace reads (`fabtui.workspace.intent`), this compares.

- a SONiC switch: its running CONFIG_DB (`switch.running_config`) against the scenario's
  rendered `sonic-qos.json`, table by table, key by key, field by field (a key or field the
  intent does not name is not judged); fix `sonic-db-cli CONFIG_DB HSET 'TABLE|KEY' ...`;
- an EOS switch: its `show running-config` (`switch.running_config_eos`) against the rendered
  `eos-qos.cfg`, line by line in each section (lines the intent does not write are not
  judged); fix the configure-mode lines;
- a host NIC: trust and PFC (`nic.qos`), DCQCN and CNP marking (`nic.dcqcn`), the RoCE active
  MTU and firmware (`nic.ibv_devinfo`) and where the RoCE v2 IPv4 GID sits (`nic.show_gids`),
  against roce-qos.toml and fleet.toml, the values the host script is rendered from;
- a host: /etc/nccl.conf (`host.nccl_conf`) against the rendered `nccl.conf`, by meaning:
  `NCCL_IB_HCA` as the set of NICs it selects (unset selects them all).

A device whose kind has no reader (an NVUE switch here) or whose read failed is listed as not
read, never as clean.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fabtui.intent.render import render_device
from fabtui.intent.scenario import Scenario
from fabtui.topology.graph import FabricGraph

Readings = Mapping[str, Mapping[str, Any]]
"""target (`node001`, `node001:mlx5_0`, `leaf-g00-r0`) -> probe name -> parsed JSON, or an
`Unreadable` when the probe failed."""

HOST_NIC_PROBES = ("nic.qos", "nic.dcqcn", "nic.ibv_devinfo", "nic.show_gids")
HOST_PROBES = ("host.nccl_conf",)
SWITCH_PROBES = {"sonic": ("switch.running_config",), "eos": ("switch.running_config_eos",)}
"""The probes drift reads, by target kind (switches: by flavor)."""


@dataclass(frozen=True)
class Unreadable:
    """A reading that could not be taken, and why."""

    reason: str


@dataclass(frozen=True)
class DriftLine:
    """One setting that differs from the intent."""

    device: str
    component: str
    setting: str
    running: str
    intended: str
    fix: str
    why: str

    def text(self) -> str:
        return (f"{self.component}: {self.setting} is {self.running}, intended "
                f"{self.intended} ({self.why}); fix: {self.fix}")


@dataclass
class DriftReport:
    """Every difference, and what could not be read."""

    scenario: str
    lines: list[DriftLine] = field(default_factory=list)
    unread: list[tuple[str, str]] = field(default_factory=list)
    """(device or component, why it was not compared)."""
    devices: int = 0

    def by_device(self) -> dict[str, list[DriftLine]]:
        found: dict[str, list[DriftLine]] = {}
        for line in self.lines:
            found.setdefault(line.device, []).append(line)
        return found


def drift(scenario: Scenario, graph: FabricGraph, readings: Readings,
          devices: list[str] | None = None) -> DriftReport:
    """Compare `readings` with `scenario` rendered for `devices` (default: every device)."""
    report = DriftReport(scenario.name)
    chosen = devices if devices is not None else [*graph.nodes, *graph.switches]
    for device in chosen:
        report.devices += 1
        if device in graph.nodes:
            _host(scenario, graph, device, readings, report)
        else:
            _switch(scenario, graph, device, readings, report)
    return report


def _reading(readings: Readings, target: str, probe: str,
             report: DriftReport) -> dict[str, Any] | None:
    value = readings.get(target, {}).get(probe)
    if isinstance(value, Unreadable):
        report.unread.append((target, f"{probe}: {value.reason}"))
        return None
    if value is None:
        report.unread.append((target, f"{probe}: not read"))
        return None
    return dict(value)


# switches --------------------------------------------------------------------------------------

def _switch(scenario: Scenario, graph: FabricGraph, device: str, readings: Readings,
            report: DriftReport) -> None:
    flavor = str(graph.switches[device].flavor)
    if not scenario.templates.get(flavor):
        return  # nothing intended for this kind (an InfiniBand scenario's switches)
    if flavor not in SWITCH_PROBES:
        report.unread.append((device, f"no reader for the running configuration of a "
                                      f"{flavor} switch yet: compare it with "
                                      f"`fabtui config render {scenario.name} --device "
                                      f"{device}` by hand"))
        return
    if flavor == "eos":
        _eos(scenario, graph, device, readings, report)
        return
    running = _reading(readings, device, "switch.running_config", report)
    if running is None:
        return
    rendered = next((r for r in render_device(scenario, graph, device)
                     if r.name.endswith(".json")), None)
    if rendered is None:
        return
    intended: dict[str, dict[str, dict[str, Any]]] = json.loads(rendered.text)
    tables: dict[str, dict[str, dict[str, str]]] = running.get("tables", {})
    why = f"{rendered.template}, scenario {scenario.name}"
    for table, rows in intended.items():
        for key, fields in rows.items():
            have = tables.get(table, {}).get(key)
            ref = f"{table}|{key}"
            component = _switch_component(device, table, key)
            if have is None:
                pairs = " ".join(f"{f} {shlex.quote(str(v))}" for f, v in fields.items())
                report.lines.append(DriftLine(
                    device, component, ref, "missing", _fields(fields),
                    f"sudo sonic-db-cli CONFIG_DB HSET {shlex.quote(ref)} {pairs}", why))
                continue
            for name, value in fields.items():
                if have.get(name) == str(value):
                    continue
                comp = f"{device}:{name}" if table == "CABLE_LENGTH" else component
                report.lines.append(DriftLine(
                    device, comp, f"{ref} {name}", have.get(name, "unset"), str(value),
                    f"sudo sonic-db-cli CONFIG_DB HSET {shlex.quote(ref)} {name} "
                    f"{shlex.quote(str(value))}", why))


def _eos(scenario: Scenario, graph: FabricGraph, device: str, readings: Readings,
         report: DriftReport) -> None:
    """An EOS switch: every line of the rendered `eos-qos.cfg`, in its section, must be in the
    running configuration (lines the intent does not write are not judged)."""
    from fabtui.parsers import eos_running_config

    running = _reading(readings, device, "switch.running_config_eos", report)
    rendered = next((r for r in render_device(scenario, graph, device)
                     if r.name.endswith(".cfg")), None)
    if running is None or rendered is None:
        return
    intended = eos_running_config.parse(rendered.text).sections
    have: dict[str, list[str]] = running.get("sections", {})
    why = f"{rendered.template}, scenario {scenario.name}"
    for section, lines in intended.items():
        present = have.get(section)
        component = f"{device}:{section.split()[1]}" if section.startswith("interface ") \
            else device
        for line in lines:
            if present is not None and line in present:
                continue
            closest = _closest(line, present or [])
            steps = ([section] if section else []) + line.split(" / ")
            report.lines.append(DriftLine(
                device, component, f"{section + ': ' if section else ''}{line}",
                closest or ("no such section" if present is None else "absent"), line,
                "configure; " + "; ".join(steps) + "; end; write memory", why))


def _closest(line: str, present: list[str]) -> str | None:
    """The running line sharing the longest run of leading words (two at least) with `line`:
    what is configured in its place."""
    words = line.split()
    best, score = None, 1
    for other in present:
        common = 0
        for a, b in zip(words, other.split(), strict=False):
            if a != b:
                break
            common += 1
        if common > score:
            best, score = other, common
    return best


def _switch_component(device: str, table: str, key: str) -> str:
    port = key.split("|")[0]
    return f"{device}:{port}" if port.startswith("Ethernet") else device


def _fields(fields: Mapping[str, Any]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in fields.items()) + "}"


# hosts -----------------------------------------------------------------------------------------

def _host(scenario: Scenario, graph: FabricGraph, device: str, readings: Readings,
          report: DriftReport) -> None:
    if "host" not in scenario.templates:
        return
    qos = scenario.intent.get("qos", {}).get("host", {})
    fleet = scenario.intent.get("fleet", {}).get("nic", {})
    node = graph.nodes[device]
    for nic in node.nics:
        target = f"{device}:{nic.name}"
        netdev = nic.netdev or nic.name
        if scenario.fabric == "roce" and qos:
            _nic_qos(device, target, netdev, qos, readings, report)
        _nic_versions(device, target, nic.name, netdev, nic.mtu, fleet, scenario, readings,
                      report)
    _nccl_conf(scenario, graph, device, readings, report)


def _nic_qos(device: str, target: str, netdev: str, qos: Mapping[str, Any],
             readings: Readings, report: DriftReport) -> None:
    source = "roce-qos.toml [host]"
    state = _reading(readings, target, "nic.qos", report)
    wanted_pfc = sorted(int(p) for p in qos.get("pfc_priorities", []))
    vector = ",".join("1" if p in wanted_pfc else "0" for p in range(8))
    if state is not None:
        if state.get("trust") != qos.get("trust"):
            report.lines.append(DriftLine(device, target, "trust", str(state.get("trust")),
                                          str(qos.get("trust")),
                                          f"mlnx_qos -i {netdev} --trust {qos.get('trust')}",
                                          f"{source} trust"))
        if sorted(state.get("pfc_enabled", [])) != wanted_pfc:
            report.lines.append(DriftLine(device, target, "PFC priorities",
                                          str(state.get("pfc_enabled")), str(wanted_pfc),
                                          f"mlnx_qos -i {netdev} --pfc {vector}",
                                          f"{source} pfc_priorities"))
    values = _reading(readings, target, "nic.dcqcn", report)
    if values is None:
        return
    files: dict[str, list[str]] = values.get("files", {})
    base = f"/sys/class/net/{netdev}/ecn"
    expected: list[tuple[str, Any, str]] = []
    for prio in wanted_pfc:
        expected += [(f"{base}/roce_np/enable/{prio}", qos.get("ecn_np"), "ecn_np"),
                     (f"{base}/roce_rp/enable/{prio}", qos.get("ecn_rp"), "ecn_rp")]
    expected += [(f"{base}/roce_np/cnp_dscp", qos.get("cnp_dscp"), "cnp_dscp"),
                 (f"{base}/roce_np/cnp_802p_prio", qos.get("cnp_prio"), "cnp_prio")]
    for path, want, key in expected:
        if want is None:
            continue
        have = (files.get(path) or ["unreadable"])[0]
        if have != str(want):
            report.lines.append(DriftLine(device, target, path.removeprefix(base + "/"), have,
                                          str(want), f"echo {want} > {path}",
                                          f"{source} {key}"))


def _nic_versions(device: str, target: str, name: str, netdev: str, mtu: int | None,
                  fleet: Mapping[str, Any], scenario: Scenario, readings: Readings,
                  report: DriftReport) -> None:
    info = _reading(readings, target, "nic.ibv_devinfo", report)
    if info is not None:
        hca = info.get("devices", {}).get(name)
        if hca is None:
            report.unread.append((target, f"nic.ibv_devinfo: {name} not in its output"))
        else:
            firmware = fleet.get("firmware")
            if firmware and hca.get("fw_ver") != firmware:
                report.lines.append(DriftLine(
                    device, target, "firmware", str(hca.get("fw_ver")), str(firmware),
                    f"mlxfwmanager -d {name} -u -i <fw-{fleet.get('model', 'NIC')}-"
                    f"{firmware}.bin>, then mlxfwreset -d {name} reset", "fleet.toml [nic] "
                    "firmware"))
            want_mtu = fleet.get("active_mtu")
            ports = list(hca.get("ports", {}).values())
            have_mtu = ports[0].get("active_mtu") if ports else None
            if scenario.fabric == "roce" and want_mtu and have_mtu != want_mtu:
                fix = f"ip link set dev {netdev} mtu {mtu}" if mtu else \
                    f"raise {netdev}'s MTU so RoCE negotiates {want_mtu}"
                report.lines.append(DriftLine(device, target, "RoCE active MTU", str(have_mtu),
                                              str(want_mtu), fix, "fleet.toml [nic] active_mtu;"
                                              " the netdev MTU from the topology"))
    gid_index = fleet.get("gid_index")
    if scenario.fabric != "roce" or gid_index is None:
        return
    gids = _reading(readings, target, "nic.show_gids", report)
    if gids is None:
        return
    usable = [g["index"] for g in gids.get("gids", []) if g.get("dev") == name and
              str(g.get("version") or "").lower() == "v2" and g.get("ipv4")]
    if gid_index not in usable:
        found = ", ".join(str(i) for i in usable) or "none"
        report.lines.append(DriftLine(
            device, target, "RoCE v2 IPv4 GID index", found, str(gid_index),
            f"restore {netdev}'s address order (only the fabric IPv4 address, no secondary or "
            f"IPv6 added first) so show_gids lists it at {gid_index}; until then jobs pin "
            f"NCCL_IB_GID_INDEX={found.split(',')[0]}", "fleet.toml [nic] gid_index"))


# nccl.conf -------------------------------------------------------------------------------------

def selected_nics(names: list[str], wanted: str | None) -> list[str]:
    """The NICs `NCCL_IB_HCA=wanted` selects from `names` (NCCL environment docs: names
    match as prefixes, `=` exact names, `^` excludes; `:port` is ignored here; unset: all)."""
    if not wanted:
        return list(names)
    exclude = wanted.startswith("^")
    rest = wanted.removeprefix("^")
    exact = rest.startswith("=")
    listed = [w.split(":")[0] for w in rest.removeprefix("=").split(",") if w]

    def named(nic: str) -> bool:
        return any(nic == w if exact else nic.startswith(w) for w in listed)

    return [n for n in names if named(n) != exclude]


def _nccl_conf(scenario: Scenario, graph: FabricGraph, device: str, readings: Readings,
               report: DriftReport) -> None:
    rendered = next((r for r in render_device(scenario, graph, device)
                     if r.name == "nccl.conf"), None)
    if rendered is None:
        return
    conf = _reading(readings, device, "host.nccl_conf", report)
    if conf is None:
        return
    have: dict[str, str] = conf.get("settings", {})
    want = dict(line.split("=", 1) for line in rendered.text.splitlines()
                if "=" in line and not line.lstrip().startswith("#"))
    names = [n.name for n in graph.nodes[device].nics]
    why = f"{rendered.template}, scenario {scenario.name}"
    for key, value in want.items():
        running = have.get(key)
        if key == "NCCL_IB_HCA":
            if selected_nics(names, running) == selected_nics(names, value):
                continue
            chosen = selected_nics(names, running)
            report.lines.append(DriftLine(
                device, device, "/etc/nccl.conf NCCL_IB_HCA",
                f"{running or 'unset'} (uses {len(chosen)} of {len(names)} NICs)",
                f"{value} (all {len(names)})",
                f"sed -i '/^NCCL_IB_HCA=/d' /etc/nccl.conf && echo "
                f"{shlex.quote(f'{key}={value}')} >> /etc/nccl.conf", why))
            continue
        if running == value:
            continue
        fix = (f"sed -i {shlex.quote(f's/^{key}=.*/{key}={value}/')} /etc/nccl.conf"
               if running is not None
               else f"echo {shlex.quote(f'{key}={value}')} >> /etc/nccl.conf")
        report.lines.append(DriftLine(device, device, f"/etc/nccl.conf {key}",
                                      running if running is not None else "unset", value,
                                      fix, why))
    # A key the intent does not set still changes how every job on the node runs (a pushed
    # NCCL_PXN_DISABLE=1 sends alltoall across the spines): it is a difference too, and the
    # fix is to remove it or to add it to the intent.
    for key in sorted(set(have) - set(want)):
        report.lines.append(DriftLine(
            device, device, f"/etc/nccl.conf {key}", have[key], "not set by the intent",
            f"sed -i {shlex.quote(f'/^{key}=/d')} /etc/nccl.conf (or add it to the intent)",
            why))
