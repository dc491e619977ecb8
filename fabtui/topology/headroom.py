"""PFC headroom a lossless port needs for its cable: the XOFF threshold SONiC's dynamic buffer
model computes from port speed, cable length and MTU.

After a switch sends XOFF (PAUSE) on a lossless priority, data keeps arriving until the pause
reaches the sender and the sender's last frame lands: the round trip on the cable, the MTU the
sender may be in the middle of, the peer's response time and the MAC/PHY delay. The priority
group's xoff (headroom above the pause point) must hold all of it, inflated by how badly small
packets fill the buffer cells; a shorter xoff drops lossless packets though PFC fired.

The formula and its constants are sonic-net/sonic-swss `cfgmgr/buffer_headroom_mellanox.lua`
(the dynamic headroom calculation, HLD "Dynamically Headroom Calculation"):

    bytes_on_cable    = 2 x cable_length x speed / speed_of_light (198,000,000 m/s) / 8
    peer_response     = pause_quanta(speed) x 512 / 8  (905 quanta at 400G and 800G,
                        453 at 200G, 394 at 100G: IEEE 802.3 31B.3.7)
    propagation_delay = port_mtu + bytes_on_cable + mac_phy_delay + peer_response
    cell_occupancy    = (100 - small% + small% x worst_case_factor) / 100,
                        worst_case_factor = cell_size / 64 when cell_size > 128
    xoff              = lossless_mtu + propagation_delay x cell_occupancy, rounded up to 1 KiB

with the Spectrum-2/3 ASIC_TABLE values (cell_size 144, mac_phy_delay 0.8 KiB:
sonic-buildimage `files/build_templates/asic_table.j2`) and SONiC's default
LOSSLESS_TRAFFIC_PATTERN (mtu 1024, small_packet_percentage 100: sonic-net/SONiC
`doc/Configuration.md`). The speed is taken in Mb/s and divided by 8 x 1024 as the script does.
Other ASICs have other cell sizes and delays: the figure is the Mellanox model's [inference:
applied to any SONiC leaf].
"""

from __future__ import annotations

import math

SPEED_OF_LIGHT_M_S = 198_000_000
"""Propagation speed in the cable the script assumes (about 2/3 c)."""
PAUSE_QUANTA = {800: 905, 400: 905, 200: 453, 100: 394, 50: 147, 40: 118, 25: 80, 10: 67}
"""Pause quanta of the peer's response time per speed in Gb/s (IEEE 802.3 31B.3.7, as the
script lists them)."""
CELL_SIZE = 144
MAC_PHY_DELAY = int(0.8 * 1024)
LOSSLESS_MTU = 1024
SMALL_PACKET_PERCENT = 100
PORT_MTU = 9100
"""SONiC's default port MTU (the bytes a sender may be in the middle of)."""
XON = 18 * 1024
"""pipeline_latency 18 KiB: the xon the script sets (asic_table.j2)."""


def xoff_needed(speed_gbps: int, length_m: float, *, port_mtu: int = PORT_MTU) -> int:
    """Bytes of xoff (headroom above the pause point) a lossless PG of a `speed_gbps` port
    needs for a `length_m` cable, rounded up to 1 KiB as SONiC's dynamic model sets it."""
    speed_mbps = speed_gbps * 1000
    quanta = PAUSE_QUANTA.get(speed_gbps, PAUSE_QUANTA[400])
    bytes_on_cable = 2 * length_m * speed_mbps * 1_000_000_000 / SPEED_OF_LIGHT_M_S / (8 * 1024)
    peer_response = quanta * 512 / 8
    propagation = port_mtu + bytes_on_cable + MAC_PHY_DELAY + peer_response
    worst_case = CELL_SIZE / 64 if CELL_SIZE > 128 else 2 * CELL_SIZE / (1 + CELL_SIZE)
    occupancy = (100 - SMALL_PACKET_PERCENT + SMALL_PACKET_PERCENT * worst_case) / 100
    return math.ceil((LOSSLESS_MTU + propagation * occupancy) / 1024) * 1024
