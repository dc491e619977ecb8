"""InfiniBand ports in topology terms, and PortXmitWait as a share of time.

`ib_element` turns what in-band tools name (a node GUID and a port number, from ibdiagnet or
ibnetdiscover) into the topology's `switch:port` or `node:mlx5_N`, through the subnet as
ibnetdiscover discovered it (node GUID -> node description -> topology name); `ib_lid` gives
the LID perfquery needs for an element. Nothing here guesses: an element the discovery does
not name is None.

`xmit_wait_share` converts a PortXmitWait rate into the share of time the port had data to
send and could not (ibdiagnet User Manual 2.13, "Congestion Assessment on InfiniBand Links"):
on Quantum, Quantum-2 and Quantum-3 switches the counter increments once per 8 bytes of line
time whatever the port width (PortSamplesControl `tick == 7`), so lost bytes = counter x
(tick + 1) and the share is rate x 8 B x 8 b / line rate. Switch-IB/Switch-IB 2 count 32 bytes
per lane (tick 31) and HCAs are not in that table: for them the function is not used (no
published conversion here).
"""

from __future__ import annotations

import re
from typing import Any

from fabtui.model.element import split_key
from fabtui.topology.graph import FabricGraph

QUANTUM_TICK_BYTES = 8
"""Bytes of line time per PortXmitWait increment on Quantum-class switches (tick == 7)."""
XMIT_WAIT_WARN = 0.05
XMIT_WAIT_FAIL = 0.20
"""Shares of time waiting for credits that warn and fail [inference: no vendor limit was found;
5 % of a port's time is a twentieth of its bandwidth lost to back-pressure, 20 % is a port that
cannot keep up: the root or a branch of a congestion tree]."""


def xmit_wait_share(rate_per_s: Any, speed_gbps: Any, tick_bytes: Any = QUANTUM_TICK_BYTES
                    ) -> float | None:
    """Share of time (0..1) a switch port waited to transmit: PortXmitWait per second x tick
    bytes x 8 / line rate. None when either number is missing."""
    if rate_per_s is None or not speed_gbps:
        return None
    share = float(rate_per_s) * float(tick_bytes) * 8 / (float(speed_gbps) * 1e9)
    return round(min(max(share, 0.0), 1.0), 4)


def _plain(value: Any) -> Any:
    return value.model_dump() if hasattr(value, "model_dump") else value


def _host_name(description: str) -> str:
    """`MF0;leaf-g00-r3:MQM9700/U1` -> `leaf-g00-r3` (NVIDIA switches' node description);
    an HCA's `node005 mlx5_3` stays."""
    text = description.split(";", 1)[1] if ";" in description else description
    return re.sub(r":[^:]*/U\d+$", "", text)


def ib_element(discovered: Any, guid: Any, port: Any, graph: FabricGraph) -> str | None:
    """The topology element (`switch:port` or `node:mlx5_N`) of node `guid` port `port` in
    an `ib.ibnetdiscover` result (or its parse)."""
    parsed = _plain(discovered)
    if isinstance(parsed, dict) and "parsed" in parsed:
        parsed = parsed["parsed"]
    if not isinstance(parsed, dict) or guid is None:
        return None
    wanted = int(str(guid), 16)
    for kind in ("switches", "cas"):
        for node in parsed.get(kind) or []:
            node = _plain(node)
            if not node.get("guid") or int(str(node["guid"]), 16) != wanted:
                continue
            name = _host_name(str(node.get("name") or ""))
            if kind == "cas":
                host, _, nic = name.partition(" ")
                return f"{host}:{nic}" if graph.find_nic(host, nic) is not None else None
            return _switch_port(graph, name, port)
    return None


def _switch_port(graph: FabricGraph, switch: str, port: Any) -> str | None:
    if switch not in graph.switches or port is None:
        return None
    for key in graph.port_links:
        device, name = split_key(key)
        found = re.search(r"(\d+)$", name)
        if device == switch and found and int(found.group(1)) == int(port):
            return key
    return None


def ib_lid(discovered: Any, element: Any) -> int | None:
    """The LID perfquery addresses `element` by: its switch's LID for `switch:port`, the HCA's
    own for `node:mlx5_N` (from the `ib.ibnetdiscover` result); None when not discovered."""
    parsed = _plain(discovered)
    if isinstance(parsed, dict) and "parsed" in parsed:
        parsed = parsed["parsed"]
    if not isinstance(parsed, dict) or not element:
        return None
    device, port = split_key(str(element))
    for kind in ("switches", "cas"):
        for node in parsed.get(kind) or []:
            node = _plain(node)
            name = _host_name(str(node.get("name") or ""))
            if (kind == "switches" and name == device) or (kind == "cas" and
                                                            name == f"{device} {port}"):
                lid = node.get("lid")
                return int(lid) if lid is not None else None
    return None


def ib_port_number(element: Any) -> int | None:
    """The IB port number of `switch:IB1/5` (5); 1 for an HCA port."""
    if not element:
        return None
    _, port = split_key(str(element))
    if port.startswith("mlx5_"):
        return 1
    found = re.search(r"(\d+)$", port)
    return int(found.group(1)) if found else None
