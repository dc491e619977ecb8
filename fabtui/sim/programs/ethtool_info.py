"""`ethtool -i NETDEV` on a simulated node: mlx5_core, the fleet's MLNX_OFED release as the
driver version (misconfig `nic_driver`), the NIC's firmware (misconfig `firmware`) with the
ConnectX-7 PSID, and its PCI address, in ethtool's own line order (tests/fixtures/ethtool-info)."""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.sim import misconfig
from fabtui.sim.core import Sim
from fabtui.sim.programs._common import Result, nic_by

PSID = "MT_0000000838"
"""The PSID of the ConnectX-7 in the real capture (tests/fixtures/ethtool-info)."""


def ethtool_info(sim: Sim, node: Node, netdev: str, t: float) -> Result:
    nic = nic_by(node, netdev)
    if nic is None:
        return "", "Cannot get driver information: No such device\n", 71
    driver = misconfig.setting(sim, node.hostname, "nic_driver", t, nic=nic.name)
    firmware = misconfig.firmware(sim, node, nic, t)
    lines = ["driver: mlx5_core", f"version: {driver}",
             f"firmware-version: {firmware} ({PSID})", "expansion-rom-version: ",
             f"bus-info: {nic.pci}", "supports-statistics: yes", "supports-test: yes",
             "supports-eeprom-access: no", "supports-register-dump: no",
             "supports-priv-flags: yes"]
    return "\n".join(lines) + "\n", "", 0
