"""Configuration faults of the simulated fabric, and the configuration commands that show them.

A `misconfig` fault changes one setting of a NIC (`node:mlx5_N`), of every NIC of a node
(`node`), or of a switch (`leaf`): `params: {setting: NAME, value: V}`. Nothing breaks at once;
what changes is what the configuration commands print, and the one or two readings that follow
from the setting (a NIC at MTU 1024 shows `active_mtu 1024` in `ibv_devinfo`; a GID table whose
RoCE v2 IPv4 entry moved is what `show_gids` prints). The fleet's healthy configuration is the
`HOST` / `SWITCH` defaults, the values of `runbooks/templates/roce-qos.toml` and `fleet.toml`.

Commands added to the simulated node: `mlnx_qos -i NETDEV`,
`cma_roce_mode -d DEV -p 1`, `cat` of the mlx5 DCQCN sysfs files
(`/sys/class/net/NETDEV/ecn/roce_{np,rp}/enable/P`, `.../roce_np/cnp_dscp`,
`.../roce_np/cnp_802p_prio`), of the CPU governor and of nvidia-peermem's module state. On a SONiC
switch: `show pfc priority`, `show ecn`, `show qos dscp-to-tc` (a sim shorthand for
`sonic-cfggen -d --var-json DSCP_TO_TC_MAP`, printed as
`DSCP:TC` pairs) and `mmuconfig -l` (buffer profiles: headroom). Nothing else here changes
the simulation's physics (no counter moves because of a setting).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from fabtui.model.topology import Nic, Node, Switch
from fabtui.sim import ib
from fabtui.sim.core import Sim
from fabtui.sim.scenario import FaultKind
from fabtui.topology.hca import selected_nics
from fabtui.topology.headroom import XON, xoff_needed

Result = tuple[str, str, int]

HOST: dict[str, Any] = {
    "trust": "dscp", "pfc": [3], "ecn_np": 1, "ecn_rp": 1, "cnp_dscp": 48, "cnp_prio": 6,
    "roce_mode": "RoCE v2", "mtu": 4096, "firmware": "28.39.1002", "gid_index": 3,
    "governor": "performance", "peermem": True, "nic_driver": "23.10-1.1.9",
}
"""A healthy host NIC: the fleet's RoCE settings (NVIDIA RoCE configuration guides); its
driver is MLNX_OFED 23.10-1.1.9 (`ethtool -i` version, as the real capture in
tests/fixtures/ethtool-info)."""
SWITCH: dict[str, Any] = {
    "pfc": [3, 4], "ecn_min_kb": 150, "ecn_max_kb": 1500, "ecn_probability": 5,
    "dscp_rdma": 26, "dscp_cnp": 48, "headroom_kb": None, "ecn": "ecn_all",
    "cable_length_m": None, "os_version": None,
}
"""A healthy SONiC leaf: lossless priorities 3 and 4 (SONiC's default), WRED/ECN on them, its
headroom from the dynamic buffer model for each port's cable (`headroom_kb` overrides the
profiles' size, `cable_length_m` the CABLE_LENGTH table); `os_version` replaces the image
version `show version` prints (None: the flavor's own, `SONIC_VERSION` / `EOS_VERSION`)."""
SONIC_VERSION = "202311.1"
EOS_VERSION = "4.31.2F"
SONIC_PLATFORM = ("x86_64-nvidia_sn5600-r0", "Mellanox-SN5600-O128", "SN5600")
"""The demo leaves' SONiC platform and HwSKU (sonic-buildimage device/mellanox/
x86_64-nvidia_sn5600-r0/Mellanox-SN5600-O128: a Spectrum-4 SN5600 as 128 x 400G, twin-port
OSFP cages, which the MMS4X00-NS optics of `optics.py` fit); the model number is the sim's
own shorthand."""


def setting(sim: Sim, where: str, name: str, t: float, *, nic: str | None = None) -> Any:
    """The value of `name` on host or switch `where` (and `nic`) at `t`, faults applied."""
    default = (SWITCH if where in sim.graph.switches else HOST).get(name)
    for fault in sim.faults:
        if fault.kind is not FaultKind.MISCONFIG or not fault.active(t):
            continue
        if fault.spec.params.get("setting") != name:
            continue
        on = fault.host or fault.switch
        if on == where and (fault.nic is None or nic is None or fault.nic == nic):
            return fault.spec.params.get("value")
    return default


# node ------------------------------------------------------------------------------------------

def nic_named(node: Node, name: str) -> Nic | None:
    """The NIC of `node` named `name` (RDMA device or netdev), or None."""
    return next((n for n in node.nics if name in (n.name, n.netdev)), None)




def _cma_roce_mode(sim: Sim, node: Node, args: list[str], t: float) -> Result:
    device = args[args.index("-d") + 1] if "-d" in args and args.index("-d") + 1 < len(args) \
        else ""
    nic = nic_named(node, device)
    if nic is None:
        return "", f"Failed to open device {device}\n", 1
    return str(setting(sim, node.hostname, "roce_mode", t, nic=nic.name)) + "\n", "", 0


_SYSFS_ECN = re.compile(r"/sys/class/net/(?P<netdev>[^/]+)/ecn/(?P<what>roce_np|roce_rp)/"
                        r"(?P<file>enable/(?P<prio>[0-7])|cnp_dscp|cnp_802p_prio)")


def read_file(sim: Sim, node: Node, path: str, t: float) -> str | None:
    """The content of a configuration file of the node, or None when it is not one of them."""
    match = _SYSFS_ECN.fullmatch(path)
    if match:
        nic = nic_named(node, match.group("netdev"))
        if nic is None:
            return None
        host, name = node.hostname, nic.name
        file = match.group("file")
        if file == "cnp_dscp":
            return f"{setting(sim, host, 'cnp_dscp', t, nic=name)}\n"
        if file == "cnp_802p_prio":
            return f"{setting(sim, host, 'cnp_prio', t, nic=name)}\n"
        key = "ecn_np" if match.group("what") == "roce_np" else "ecn_rp"
        return f"{setting(sim, host, key, t, nic=name)}\n"
    if path == "/etc/nccl.conf":
        return "".join(f"{k}={v}\n" for k, v in nccl_conf(sim, node.hostname, t).items())
    if re.fullmatch(r"/sys/devices/system/cpu/cpu\d+/cpufreq/scaling_governor", path):
        return f"{setting(sim, node.hostname, 'governor', t)}\n"
    if path == "/sys/module/nvidia_peermem/initstate":
        gdr_off = any(f.host == node.hostname for f in sim.active(FaultKind.GDR_OFF, t))
        unloaded = setting(sim, node.hostname, "peermem", t) is False  # GDR through DMA-BUF
        return None if gdr_off or unloaded else "live\n"
    return None


def firmware(sim: Sim, node: Node, nic: Nic, t: float) -> str:
    """The NIC's firmware version (`ibv_devinfo` fw_ver)."""
    return str(setting(sim, node.hostname, "firmware", t, nic=nic.name))


def active_mtu(sim: Sim, node: Node, nic: Nic, t: float) -> int:
    """The NIC's RoCE active MTU (`ibv_devinfo` active_mtu)."""
    return int(setting(sim, node.hostname, "mtu", t, nic=nic.name))


def gid_index(sim: Sim, node: Node, nic: Nic, t: float) -> int:
    """Where the RoCE v2 IPv4 GID sits in the NIC's GID table (3 on a healthy fleet node)."""
    return int(setting(sim, node.hostname, "gid_index", t, nic=nic.name))


NCCL_CONF = {"NCCL_IB_GID_INDEX": str(HOST["gid_index"]), "NCCL_IB_TC": "106"}
"""The fleet's `/etc/nccl.conf`: the RoCE v2 GID index and traffic class 106 (DSCP 26 << 2 |
ECT(0), the design's RoCE class in runbooks/templates/roce-qos.toml), as the real 8 x CX-7 RoCE
job log in tests/fixtures/nccl-log (slurmv4, NCCL 2.27.5) reports them."""


def nccl_conf(sim: Sim, host: str, t: float) -> dict[str, str]:
    """The NCCL variables node `host` sets for every process (`/etc/nccl.conf`): the fleet's
    own, and those of a `nccl_env` misconfig fault (`value: {NCCL_IB_HCA: ...}`; an empty
    value removes the fleet's setting, as a node re-imaged without it)."""
    value = setting(sim, host, "nccl_env", t)
    extra = {str(k): str(v if v is not None else "")
             for k, v in value.items()} if isinstance(value, dict) else {}
    # The GID index and the GRH traffic class are RoCE settings: an InfiniBand fleet's
    # nccl.conf has neither (the port's GID 0, the SL picks the virtual lane).
    fleet = {} if ib.is_ib(sim) else NCCL_CONF
    merged = {**fleet, **extra}
    return {k: v for k, v in merged.items() if v != ""}


def usable_nics(node: Node, wanted: str | None) -> list[Nic]:
    """The NICs NCCL uses under `NCCL_IB_HCA=wanted` (fabtui.topology.hca: the one reading
    the evaluators share); every NIC when unset."""
    return selected_nics(node, wanted)


def _wanted(sim: Sim, host: str, argv: list[str], t: float) -> str | None:
    """The `NCCL_IB_HCA` a run's ranks on `host` see: the command line's (`mpirun -x`, the last
    one wins) over the node's nccl.conf, as the environment does."""
    cli = [a.split("=", 1)[1] for a in argv if a.startswith("NCCL_IB_HCA=")]
    return cli[-1] if cli else nccl_conf(sim, host, t).get("NCCL_IB_HCA")


def hca_share(sim: Sim, nodes: list[str], argv: list[str], t: float) -> float:
    """The least share, over `nodes`, of a node's NICs a multi-node NCCL run may use."""
    shares = []
    for host in nodes:
        node = sim.graph.nodes[host]
        if node.nics:
            shares.append(len(usable_nics(node, _wanted(sim, host, argv, t))) / len(node.nics))
    return min(shares, default=1.0)


def run_nics(sim: Sim, nodes: list[str], argv: list[str], t: float) -> list[tuple[str, str]]:
    """(node, NIC) of every NIC a multi-node NCCL run over `nodes` may use."""
    return [(host, nic.name) for host in nodes
            for nic in usable_nics(sim.graph.nodes[host], _wanted(sim, host, argv, t))]


COMMANDS: dict[str, Callable[[Sim, Node, list[str], float], Result]] = {
    "cma_roce_mode": _cma_roce_mode,
}


# switch ----------------------------------------------------------------------------------------

def switch_reply(sim: Sim, switch: Switch, words: list[str], t: float,
                 ports: list[str]) -> tuple[str, bool] | None:
    """The SONiC QoS commands of `switch` (None: not one of them)."""
    if words[:1] == ["sudo"]:
        words = words[1:]
    name = switch.name
    if words == ["show", "pfc", "priority"]:
        lossless = ",".join(str(p) for p in setting(sim, name, "pfc", t) or [])
        rows = [f"{p:<12}{lossless}" for p in ports]
        return "\n".join([f"{'Interface':<12}Lossless priorities", f"{'-' * 11} "
                          f"{'-' * 20}", *rows]) + "\n", False
    if words == ["show", "ecn"]:
        low, high = setting(sim, name, "ecn_min_kb", t), setting(sim, name, "ecn_max_kb", t)
        chance = setting(sim, name, "ecn_probability", t)
        return ("Profile: AZURE_LOSSLESS\n"
                "-----------------------  -------\n"
                "red_max_threshold        2097152\n"
                f"ecn                      {setting(sim, name, 'ecn', t)}\n"
                f"green_min_threshold      {int(low) * 1024}\n"
                "red_min_threshold        1048576\n"
                "yellow_min_threshold     1048576\n"
                f"green_max_threshold      {int(high) * 1024}\n"
                f"green_drop_probability   {chance}\n"
                "yellow_max_threshold     2097152\n"
                "wred_green_enable        true\n"
                "-----------------------  -------\n"), False
    if words == ["show", "qos", "dscp-to-tc"]:
        rdma, cnp = setting(sim, name, "dscp_rdma", t), setting(sim, name, "dscp_cnp", t)
        pairs = [f"{d}:{3 if d == rdma else 6 if d == cnp else 0}" for d in range(64)]
        return "DSCP_TO_TC_MAP AZURE\n" + " ".join(pairs) + "\n", False
    return None


def cable_lengths(sim: Sim, switch: Switch, t: float) -> dict[str, int]:
    """The switch's CABLE_LENGTH per cabled port in metres: the topology's length of the cable
    (rounded up; 5 m, SONiC's default for server-facing ports, where the topology gives none),
    unless a misconfig `cable_length_m` says otherwise for the whole switch (a stale table
    after recabling)."""
    stale = setting(sim, switch.name, "cable_length_m", t)
    found = {}
    for port in sim.switch_ports(switch.name):
        link = sim.graph.link_at(f"{switch.name}:{port}")
        length = sim.topology.links[link].length_m if link is not None else None
        found[port] = int(stale) if stale is not None else \
            math.ceil(length) if length is not None else 5
    return found


def profile_xoff(sim: Sim, switch: Switch, length_m: int, t: float) -> int:
    """The xoff SONiC's dynamic model gives a 400G lossless PG for `length_m` of cable, or the
    misconfigured `headroom_kb` size less xon."""
    override = setting(sim, switch.name, "headroom_kb", t)
    if override is not None:
        return int(override) * 1024 - XON
    return xoff_needed(400, length_m)


def mmuconfig(sim: Sim, switch: Switch, t: float) -> str:
    """`mmuconfig -l`: the dynamic model's lossless traffic pattern (`default_dynamic_th` 0),
    the lossless pool, then one lossless profile per cable length in the CABLE_LENGTH table
    (the dynamic buffer model's `pg_lossless_<speed>_<len>m_profile`, the 5 m one first),
    fields in the order sonic-utilities prints them."""
    out = ["Lossless traffic pattern:", "------------------  -", "default_dynamic_th  0",
           "------------------  -", "",
           "Pool: ingress_lossless_pool", "----  --------", "mode  dynamic", "size  47218432",
           "type  ingress", "----  --------", ""]
    for length in sorted(set(cable_lengths(sim, switch, t).values()),
                         key=lambda n: (n != 5, n)):
        xoff = profile_xoff(sim, switch, length, t)
        rule = "----------  ---------------------"
        out += [f"Profile: pg_lossless_400000_{length}m_profile", rule, "dynamic_th  0",
                "pool        ingress_lossless_pool", f"xon         {XON}", f"xoff        {xoff}",
                f"size        {xoff + XON}", rule, ""]
    return "\n".join(out) + "\n"
