"""`show runningconfiguration all` on a simulated SONiC leaf: its CONFIG_DB as JSON (sonic-utilities
runs `sonic-cfggen -d --print-data`), the QoS, PFC, ECN and buffer tables built from the leaf's
settings (`misconfig.setting`: a misconfig fault shows here as it does in `show ecn`,
`show pfc priority` and `mmuconfig -l`), in the table layout of sonic-buildimage's
`qos_config.j2` and SONiC's buffer tables. Only the tables a QoS audit reads, plus
DEVICE_METADATA; the real command prints every table.
"""

from __future__ import annotations

import json
from typing import Any

from fabtui.model.topology import Switch
from fabtui.sim import misconfig
from fabtui.sim.core import PFCWD_DETECTION_S, PFCWD_RESTORATION_S, Sim
from fabtui.topology.headroom import XON

_IDENTITY = {str(i): str(i) for i in range(8)}
_TC_TO_PG = {"0": "0", "1": "0", "2": "0", "3": "3", "4": "4", "5": "0", "6": "0", "7": "7"}


def running_config(sim: Sim, switch: Switch, t: float, ports: list[str]) -> str:
    """The leaf's CONFIG_DB at `t` as `show runningconfiguration all` prints it."""
    name = switch.name
    lossless = [str(p) for p in misconfig.setting(sim, name, "pfc", t) or []]
    rdma, cnp = misconfig.setting(sim, name, "dscp_rdma", t), misconfig.setting(sim, name,
                                                                                "dscp_cnp", t)
    lengths = misconfig.cable_lengths(sim, switch, t)
    profiles = {length: f"pg_lossless_400000_{length}m_profile" for length in
                set(lengths.values())}
    tables: dict[str, Any] = {
        "DEVICE_METADATA": {"localhost": {"hostname": name,
                                          "hwsku": misconfig.SONIC_PLATFORM[1],
                                          "platform": misconfig.SONIC_PLATFORM[0],
                                          "type": "ToRRouter"}},
        "PORT_QOS_MAP": {"global": {"dscp_to_tc_map": "AZURE"}, **{
            port: {"dscp_to_tc_map": "AZURE", "tc_to_queue_map": "AZURE",
                   "tc_to_pg_map": "AZURE", "pfc_to_queue_map": "AZURE",
                   "pfc_enable": ",".join(lossless), "pfcwd_sw_enable": ",".join(lossless)}
            for port in ports}},
        "DSCP_TO_TC_MAP": {"AZURE": {str(d): "3" if d == rdma else "6" if d == cnp else "0"
                                     for d in range(64)}},
        "TC_TO_PRIORITY_GROUP_MAP": {"AZURE": dict(_TC_TO_PG)},
        "TC_TO_QUEUE_MAP": {"AZURE": dict(_IDENTITY)},
        "MAP_PFC_PRIORITY_TO_QUEUE": {"AZURE": dict(_IDENTITY)},
        "WRED_PROFILE": {"AZURE_LOSSLESS": {
            "wred_green_enable": "true", "wred_yellow_enable": "true",
            "wred_red_enable": "true", "ecn": str(misconfig.setting(sim, name, "ecn", t)),
            "green_min_threshold": str(int(misconfig.setting(sim, name, "ecn_min_kb", t)) * 1024),
            "green_max_threshold": str(int(misconfig.setting(sim, name, "ecn_max_kb", t)) * 1024),
            "green_drop_probability": str(misconfig.setting(sim, name, "ecn_probability", t)),
            "yellow_min_threshold": "1048576", "yellow_max_threshold": "2097152",
            "red_min_threshold": "1048576", "red_max_threshold": "2097152"}},
        "QUEUE": {f"{port}|{tc}": {"scheduler": "scheduler.1", "wred_profile": "AZURE_LOSSLESS"}
                  for port in ports for tc in ("3", "4")},
        "CABLE_LENGTH": {"AZURE": {port: f"{lengths.get(port, 5)}m" for port in ports}},
        "BUFFER_POOL": {"ingress_lossless_pool": {"mode": "dynamic", "size": "47218432",
                                                  "type": "ingress"}},
        "BUFFER_PROFILE": {profile: {
            "pool": "ingress_lossless_pool", "xon": str(XON),
            "xoff": str(misconfig.profile_xoff(sim, switch, length, t)),
            "size": str(misconfig.profile_xoff(sim, switch, length, t) + XON),
            "dynamic_th": "0"} for length, profile in sorted(profiles.items())},
        "BUFFER_PG": {f"{port}|3-4": {"profile": profiles[lengths.get(port, 5)]}
                      for port in ports if lengths.get(port, 5) in profiles},
        "PFC_WD": {"GLOBAL": {"POLL_INTERVAL": "200"}, **{
            port: {"action": "drop", "detection_time": f"{PFCWD_DETECTION_S * 1000:.0f}",
                   "restoration_time": f"{PFCWD_RESTORATION_S * 1000:.0f}"} for port in ports}},
    }
    return json.dumps(tables, indent=4) + "\n"
