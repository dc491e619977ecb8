"""The design as NetBox data: what a topology becomes in NetBox 4.x (sites, racks, devices,
interfaces, GPU inventory items, IP addresses, cables), and back. Pure: no I/O (the NetBox API
is spoken by `fabtui.workspace.netbox`, through pynetbox).

The mapping keeps every field of the topology, so a design exported and imported again is the
same design:

- the cluster is a site (`slug` from its name; fabric kind, oversubscription target and planes
  in site custom fields); a node's `rack` is a rack of that site;
- nodes and switches are devices: role `gpu-node`, `leaf`, `spine` or `super-spine`; device type
  the model (`unspecified` when the topology gives none); a switch's OS its platform
  (`sonic`, `nvue`, `eos`, ...); what NetBox has no field for in custom fields (`fabtui_mgmt`,
  `fabtui_rails`, `fabtui_group`, `fabtui_credentials`: a reference, never a secret, ...);
- a GPU is an inventory item `GPU<index>` of its node (part id the GPU model, PCI address, NUMA
  node and PCIe switch in custom fields); a NIC is an interface named by its RDMA device
  (`mlx5_0`), labelled with its netdev, its IP an IP address assigned to it (`/32` or `/128`);
- a switch port is an interface: the ports the topology configures (`ports:`) carry
  `fabtui_port_spec` and their speed, MTU and description; the others exist because a cable
  lands there;
- a link is a cable between two interfaces: `label` its id, length in metres, speed, MTU, optic
  and cable type in custom fields.

Order is kept by creation: the exporter creates objects in topology order and the importer
reads them back in id order.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fabtui.model.element import split_key
from fabtui.model.topology import (
    Cluster,
    FabricKind,
    Flavor,
    Gpu,
    Link,
    Nic,
    Node,
    Plane,
    PortSpec,
    Role,
    Switch,
    Topology,
)

API_VERSION = "4.6"
"""The NetBox REST API the mapping is written against (netbox-community/netbox v4.6.8)."""

NODE_ROLE = "gpu-node"
ROLE_SLUGS = {Role.LEAF: "leaf", Role.SPINE: "spine", Role.SUPER_SPINE: "super-spine"}
UNSPECIFIED = "unspecified"
"""The device type (and manufacturer) of a device whose topology gives no model."""

CUSTOM_FIELDS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("fabtui_fabric", "text", ("dcim.site",), "roce, infiniband or ethernet"),
    ("fabtui_max_oversubscription", "decimal", ("dcim.site",), "leaf down:up ratio allowed"),
    ("fabtui_description", "text", ("dcim.site",), "the cluster's description"),
    ("fabtui_planes", "json", ("dcim.site",), "the fabric's planes"),
    ("fabtui_mgmt", "text", ("dcim.device",), "address fabtui reaches the device at"),
    ("fabtui_nvlink_domain", "text", ("dcim.device",), "multi-node NVLink domain"),
    ("fabtui_rails", "json", ("dcim.device",), "rails a leaf serves"),
    ("fabtui_plane", "text", ("dcim.device", "dcim.interface"), "plane"),
    ("fabtui_group", "integer", ("dcim.device",), "scalable unit of a leaf"),
    ("fabtui_credentials", "text", ("dcim.device",), "reference to the login secret"),
    ("fabtui_port_speed", "integer", ("dcim.device",), "default port speed, Gb/s"),
    ("fabtui_mtu", "integer", ("dcim.device", "dcim.cable"), "default / link MTU"),
    ("fabtui_kind", "text", ("dcim.interface",), "nic or port"),
    ("fabtui_rail", "integer", ("dcim.interface",), "the NIC's rail"),
    ("fabtui_pci", "text", ("dcim.interface", "dcim.inventoryitem"), "PCI address"),
    ("fabtui_numa", "integer", ("dcim.interface", "dcim.inventoryitem"), "NUMA node"),
    ("fabtui_pcie_switch", "text", ("dcim.interface", "dcim.inventoryitem"), "PCIe switch"),
    ("fabtui_gpus", "json", ("dcim.interface",), "GPU indexes the NIC serves"),
    ("fabtui_model", "text", ("dcim.interface",), "NIC model"),
    ("fabtui_port_spec", "boolean", ("dcim.interface",), "a port the topology configures"),
    ("fabtui_gpu_index", "integer", ("dcim.inventoryitem",), "CUDA / nvidia-smi index"),
    ("fabtui_speed", "integer", ("dcim.cable",), "link speed, Gb/s"),
    ("fabtui_optic", "text", ("dcim.cable",), "optic serial or asset tag"),
    ("fabtui_cable", "text", ("dcim.cable",), "cable type or asset id as the topology says"),
    ("fabtui_a_name", "text", ("dcim.cable",), "the A end's port as the topology names it"),
    ("fabtui_b_name", "text", ("dcim.cable",), "the B end's port as the topology names it"),
)
"""(name, type, object types, description) of the custom fields the design needs."""

_ETHERNET_TYPES = {100: "100gbase-x-qsfp28", 200: "200gbase-x-qsfp56",
                   400: "400gbase-x-osfp", 800: "800gbase-x-osfp"}
_IB_TYPES = {200: "infiniband-hdr", 400: "infiniband-ndr", 800: "infiniband-xdr"}
_CABLE_TYPES = {"aoc": "aoc", "dac": "dac-passive", "dac-passive": "dac-passive",
                "dac-active": "dac-active", "smf": "smf", "mmf": "mmf"}


class NetboxError(ValueError):
    """NetBox data that is no fabtui design, or a design NetBox cannot hold: one line per
    problem, each starting with the object (`dcim/devices/12 (node001): ...`) or the link
    (`links[3] ...`) it concerns."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def slugify(text: str) -> str:
    """A NetBox slug: lower case letters, digits, `-` and `_`."""
    return re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-") or "x"


def interface_type(speed: int | None, fabric: FabricKind) -> str:
    """NetBox's interface type for a port of `speed` Gb/s (InterfaceTypeChoices)."""
    table = _IB_TYPES if fabric is FabricKind.INFINIBAND else _ETHERNET_TYPES
    return table.get(speed or 0, "other")


# export: the objects to create, in order -----------------------------------------------------
@dataclass
class Port:
    """One interface to create."""

    device: str
    name: str
    fields: dict[str, Any]
    ip: str | None = None


@dataclass
class Cable:
    """One cable to create between two interfaces."""

    a: tuple[str, str]
    b: tuple[str, str]
    fields: dict[str, Any]


@dataclass
class ExportPlan:
    """What to create in NetBox for a topology, in creation order; references by name (the
    exporter resolves them to ids)."""

    site: dict[str, Any]
    racks: list[str]
    models: list[str]
    platforms: list[str]
    roles: list[str]
    devices: list[dict[str, Any]]
    """name, role, model, platform, rack, custom_fields."""
    gpus: list[tuple[str, dict[str, Any]]]
    ports: list[Port] = field(default_factory=list)
    cables: list[Cable] = field(default_factory=list)


def _drop_none(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def export_plan(topology: Topology) -> ExportPlan:
    """The NetBox objects of `topology`. Raises `NetboxError` for a link whose end is on no
    node or switch (NetBox cables join existing interfaces; `fabtui topo check` names it)."""
    cluster = topology.cluster
    site = {"name": cluster.name, "slug": slugify(cluster.name),
            "custom_fields": {"fabtui_fabric": cluster.fabric.value,
                              "fabtui_max_oversubscription": cluster.max_oversubscription,
                              "fabtui_description": cluster.description,
                              "fabtui_planes": [p.model_dump(mode="json")
                                                for p in topology.planes]}}
    models = list(dict.fromkeys([n.model or UNSPECIFIED for n in topology.nodes] +
                                [s.model or UNSPECIFIED for s in topology.switches]))
    racks = list(dict.fromkeys(n.rack for n in topology.nodes if n.rack))
    devices: list[dict[str, Any]] = []
    gpus: list[tuple[str, dict[str, Any]]] = []
    ports: list[Port] = []
    nic_names: dict[tuple[str, str], str] = {}
    for node in topology.nodes:
        devices.append({"name": node.hostname, "role": NODE_ROLE,
                        "model": node.model or UNSPECIFIED, "platform": None,
                        "rack": node.rack, "custom_fields": _drop_none(
                            {"fabtui_mgmt": node.mgmt,
                             "fabtui_nvlink_domain": node.nvlink_domain})})
        for gpu in node.gpus:
            gpus.append((node.hostname, {
                "name": f"GPU{gpu.index}", "part_id": gpu.model or "",
                "custom_fields": _drop_none({"fabtui_gpu_index": gpu.index,
                                             "fabtui_pci": gpu.pci, "fabtui_numa": gpu.numa,
                                             "fabtui_pcie_switch": gpu.pcie_switch})}))
        for nic in node.nics:
            nic_names[(node.hostname, nic.name)] = nic.name
            if nic.netdev:
                nic_names.setdefault((node.hostname, nic.netdev), nic.name)
            ports.append(Port(node.hostname, nic.name, {
                "label": nic.netdev or "", "type": interface_type(nic.speed, cluster.fabric),
                "speed": nic.speed * 1_000_000, "mtu": nic.mtu,
                "custom_fields": _drop_none({
                    "fabtui_kind": "nic", "fabtui_rail": nic.rail, "fabtui_plane": nic.plane,
                    "fabtui_pci": nic.pci, "fabtui_numa": nic.numa,
                    "fabtui_gpus": list(nic.gpus) if nic.gpus is not None else None,
                    "fabtui_pcie_switch": nic.pcie_switch, "fabtui_model": nic.model})},
                ip=nic.ip))
    switch_ports: dict[str, dict[str, None]] = {}
    for switch in topology.switches:
        devices.append({"name": switch.name, "role": ROLE_SLUGS[switch.role],
                        "model": switch.model or UNSPECIFIED, "platform": switch.flavor.value,
                        "rack": None, "custom_fields": _drop_none({
                            "fabtui_mgmt": switch.mgmt,
                            "fabtui_rails": list(switch.rail) if switch.rail else None,
                            "fabtui_plane": switch.plane, "fabtui_group": switch.group,
                            "fabtui_credentials": switch.credentials,
                            "fabtui_port_speed": switch.port_speed, "fabtui_mtu": switch.mtu})})
        switch_ports[switch.name] = {}
        for name, spec in switch.ports.items():
            switch_ports[switch.name][name] = None
            ports.append(Port(switch.name, name, {
                "type": interface_type(spec.speed or switch.port_speed, cluster.fabric),
                "speed": spec.speed * 1_000_000 if spec.speed else None, "mtu": spec.mtu,
                "description": spec.description,
                "custom_fields": {"fabtui_kind": "port", "fabtui_port_spec": True}}))
    cables: list[Cable] = []
    problems = []
    for index, link in enumerate(topology.links):
        ends: list[tuple[str, str, str | None]] = []
        for endpoint in (link.a, link.b):
            device, port = split_key(endpoint)
            if device in switch_ports:
                if port not in switch_ports[device]:
                    switch_ports[device][port] = None
                    speed = next(s.port_speed for s in topology.switches if s.name == device)
                    ports.append(Port(device, port, {
                        "type": interface_type(link.speed or speed, cluster.fabric),
                        "custom_fields": {"fabtui_kind": "port"}}))
                ends.append((device, port, None))
            elif (device, port) in nic_names:
                name = nic_names[(device, port)]
                ends.append((device, name, port if port != name else None))
            else:
                problems.append(f"links[{index}] ({link.label}): {endpoint} is on no node NIC "
                                "or switch of the topology; NetBox cables join interfaces")
        if len(ends) < 2:
            continue
        (a_dev, a_name, a_written), (b_dev, b_name, b_written) = ends
        cables.append(Cable((a_dev, a_name), (b_dev, b_name), {
            "label": link.id or "",
            "type": _CABLE_TYPES.get((link.cable or "").lower(), ""),
            "length": link.length_m, "length_unit": "m" if link.length_m else None,
            "custom_fields": _drop_none({
                "fabtui_speed": link.speed, "fabtui_mtu": link.mtu, "fabtui_optic": link.optic,
                "fabtui_cable": link.cable, "fabtui_a_name": a_written,
                "fabtui_b_name": b_written})}))
    if problems:
        raise NetboxError(problems)
    platforms = list(dict.fromkeys(s.flavor.value for s in topology.switches))
    roles = list(dict.fromkeys([NODE_ROLE] * bool(topology.nodes) +
                               [ROLE_SLUGS[s.role] for s in topology.switches]))
    return ExportPlan(site=site, racks=racks, models=models, platforms=platforms, roles=roles,
                      devices=devices, gpus=gpus, ports=ports, cables=cables)


# import: NetBox's records back to a topology ---------------------------------------------------
@dataclass
class NetboxRecords:
    """One site's objects as NetBox's REST API returns them (plain JSON dicts)."""

    site: dict[str, Any]
    devices: list[dict[str, Any]]
    interfaces: list[dict[str, Any]]
    inventory_items: list[dict[str, Any]]
    ip_addresses: list[dict[str, Any]]
    cables: list[dict[str, Any]]


def _cf(record: Mapping[str, Any]) -> dict[str, Any]:
    found = record.get("custom_fields") or {}
    return found if isinstance(found, dict) else {}


def _choice(value: Any) -> Any:
    """A choice field's value (`{"value": "m", "label": "Meters"}` -> `m`)."""
    return value.get("value") if isinstance(value, dict) else value


def _slug(nested: Any) -> str | None:
    return nested.get("slug") if isinstance(nested, dict) else None


def _gbps(kbps: Any) -> int | None:
    return int(kbps) // 1_000_000 if isinstance(kbps, int) and kbps else None


def _where(kind: str, record: Mapping[str, Any]) -> str:
    return f"{kind}/{record.get('id')}"


def topology_from_netbox(records: NetboxRecords) -> Topology:
    """The design `records` hold (see the module docstring). Raises `NetboxError` naming each
    object that does not read (no fabtui design, or edited into one that is not)."""
    from pydantic import ValidationError

    problems: list[str] = []
    site_cf = _cf(records.site)
    by_id = sorted(records.devices, key=lambda d: d["id"])
    interfaces: dict[Any, list[dict[str, Any]]] = {}
    iface_by_id: dict[int, dict[str, Any]] = {}
    for iface in sorted(records.interfaces, key=lambda i: i["id"]):
        device_id = (iface.get("device") or {}).get("id")
        interfaces.setdefault(device_id, []).append(iface)
        iface_by_id[iface["id"]] = iface
    gpus: dict[Any, list[dict[str, Any]]] = {}
    for item in sorted(records.inventory_items, key=lambda i: i["id"]):
        if "fabtui_gpu_index" in _cf(item) and _cf(item)["fabtui_gpu_index"] is not None:
            gpus.setdefault((item.get("device") or {}).get("id"), []).append(item)
    ips: dict[Any, str] = {}
    for ip in records.ip_addresses:
        if ip.get("assigned_object_type") == "dcim.interface":
            ips[ip.get("assigned_object_id")] = str(
                ipaddress.ip_interface(ip["address"]).ip)
    nodes: list[Node] = []
    switches: list[Switch] = []
    for device in by_id:
        cf = _cf(device)
        model = (device.get("device_type") or {}).get("model")
        model = None if model == UNSPECIFIED else model
        role = _slug(device.get("role"))
        try:
            if role == NODE_ROLE:
                nodes.append(Node(
                    hostname=device["name"], model=model, mgmt=cf.get("fabtui_mgmt"),
                    rack=(device.get("rack") or {}).get("name"),
                    nvlink_domain=cf.get("fabtui_nvlink_domain"),
                    gpus=tuple(_gpu(item) for item in gpus.get(device["id"], [])),
                    nics=tuple(_nic(i, ips.get(i["id"])) for i in interfaces.get(device["id"], [])
                               if _cf(i).get("fabtui_kind") == "nic")))
            elif role is not None and role in ROLE_SLUGS.values():
                switches.append(_switch(device, model, role, interfaces.get(device["id"], [])))
            else:
                problems.append(f"{_where('dcim/devices', device)} ({device.get('name')}): "
                                f"role {role!r} is none of {NODE_ROLE}, "
                                f"{', '.join(ROLE_SLUGS.values())}")
        except (ValidationError, KeyError, TypeError, ValueError) as exc:
            problems.append(f"{_where('dcim/devices', device)} ({device.get('name')}): "
                            f"{_reason(exc)}")
    links = []
    for cable in sorted(records.cables, key=lambda c: c["id"]):
        try:
            links.append(_link(cable, iface_by_id))
        except (ValidationError, KeyError, TypeError, ValueError) as exc:
            problems.append(f"{_where('dcim/cables', cable)}: {_reason(exc)}")
    try:
        cluster = Cluster(name=records.site["name"],
                          description=site_cf.get("fabtui_description") or "",
                          fabric=FabricKind(site_cf.get("fabtui_fabric") or "roce"),
                          max_oversubscription=float(
                              site_cf.get("fabtui_max_oversubscription") or 1.0))
        planes = tuple(Plane.model_validate(p) for p in site_cf.get("fabtui_planes") or [])
    except (ValidationError, KeyError, TypeError, ValueError) as exc:
        problems.append(f"{_where('dcim/sites', records.site)}: {_reason(exc)}")
    if problems:
        raise NetboxError(problems)
    return Topology(cluster=cluster, planes=planes, nodes=tuple(nodes),
                    switches=tuple(switches), links=tuple(links))


def _reason(exc: Exception) -> str:
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{where}: {first['msg']}" if where else first["msg"]
    if isinstance(exc, KeyError):
        return f"missing {exc.args[0]!r}"
    return str(exc)


def _gpu(item: Mapping[str, Any]) -> Gpu:
    cf = _cf(item)
    return Gpu(index=cf["fabtui_gpu_index"], pci=cf.get("fabtui_pci"), numa=cf.get("fabtui_numa"),
               model=item.get("part_id") or None, pcie_switch=cf.get("fabtui_pcie_switch"))


def _nic(iface: Mapping[str, Any], ip: str | None) -> Nic:
    cf = _cf(iface)
    gpus = cf.get("fabtui_gpus")
    return Nic(name=iface["name"], netdev=iface.get("label") or None, ip=ip,
               pci=cf.get("fabtui_pci"), numa=cf.get("fabtui_numa"), rail=cf.get("fabtui_rail"),
               plane=cf.get("fabtui_plane"), speed=_gbps(iface.get("speed")),
               mtu=iface.get("mtu"), gpus=tuple(gpus) if gpus is not None else None,
               pcie_switch=cf.get("fabtui_pcie_switch"), model=cf.get("fabtui_model"))


def _switch(device: Mapping[str, Any], model: str | None, role: str,
            ifaces: Sequence[Mapping[str, Any]]) -> Switch:
    cf = _cf(device)
    ports = {}
    for iface in ifaces:
        if _cf(iface).get("fabtui_port_spec"):
            ports[iface["name"]] = PortSpec(speed=_gbps(iface.get("speed")), mtu=iface.get("mtu"),
                                            description=iface.get("description") or "")
    roles = {slug: r for r, slug in ROLE_SLUGS.items()}
    return Switch(name=device["name"], role=roles[role], rail=tuple(cf.get("fabtui_rails") or ()),
                  plane=cf.get("fabtui_plane"), group=cf.get("fabtui_group"),
                  mgmt=cf.get("fabtui_mgmt"),
                  flavor=Flavor(_slug(device.get("platform")) or Flavor.SONIC.value),
                  credentials=cf.get("fabtui_credentials"), model=model,
                  port_speed=cf.get("fabtui_port_speed"), mtu=cf.get("fabtui_mtu"),
                  ports=ports)


def _end(terminations: Any, iface_by_id: Mapping[int, Mapping[str, Any]],
         written: str | None) -> str:
    if not isinstance(terminations, list) or len(terminations) != 1:
        raise ValueError("a fabtui link has exactly one interface at each end")
    term = terminations[0]
    if term.get("object_type") != "dcim.interface":
        raise ValueError(f"an end is a {term.get('object_type')}, not an interface")
    iface = iface_by_id.get(term.get("object_id"))
    if iface is None:
        obj = term.get("object") or {}
        device, name = (obj.get("device") or {}).get("name"), obj.get("name")
        if not device or not name:
            raise ValueError(f"interface {term.get('object_id')} is not in the site")
    else:
        device, name = iface["device"]["name"], iface["name"]
    return f"{device}:{written or name}"


def _link(cable: Mapping[str, Any], iface_by_id: Mapping[int, Mapping[str, Any]]) -> Link:
    cf = _cf(cable)
    length = cable.get("length")
    unit = _choice(cable.get("length_unit"))
    if length is not None and unit not in (None, "m"):
        raise ValueError(f"length in {unit}: fabtui reads metres (length_unit m)")
    return Link(a=_end(cable.get("a_terminations"), iface_by_id, cf.get("fabtui_a_name")),
                b=_end(cable.get("b_terminations"), iface_by_id, cf.get("fabtui_b_name")),
                speed=cf.get("fabtui_speed"), mtu=cf.get("fabtui_mtu"),
                optic=cf.get("fabtui_optic"), cable=cf.get("fabtui_cable"),
                length_m=float(length) if length is not None else None,
                id=cable.get("label") or None)
