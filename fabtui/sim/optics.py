"""The optics at both ends of every cable, and the receivers behind them: launch power, bias and
temperature per module, the light each end receives, pre-FEC BER per lane and what RS-FEC does
with it, and the DOM a switch or NIC reports.

Each end of a cable has its own module (launch power, bias, temperature per lane); what an end
receives is the far module's light less the fibre's loss and dirt; BER follows the light and
FEC follows the BER (physics.py). Thresholds are a 400G-DR4-like module's, as it reports them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from fabtui.model.element import device_of
from fabtui.sim import physics
from fabtui.sim.base import INF
from fabtui.sim.faults import Fault
from fabtui.sim.links import LinkLayer
from fabtui.sim.scenario import FaultKind

# Optics: 400G-DR4-like modules, thresholds as the module reports them (dBm / mA / C / V).
RX_LOW_ALARM, RX_LOW_WARNING = -10.4, -8.4
RX_HIGH_WARNING, RX_HIGH_ALARM = 4.0, 5.0
TX_LOW_ALARM, TX_LOW_WARNING, TX_HIGH_WARNING, TX_HIGH_ALARM = -8.4, -6.4, 4.0, 5.0
BIAS_LOW_ALARM, BIAS_LOW_WARNING, BIAS_HIGH_WARNING, BIAS_HIGH_ALARM = 2.0, 4.0, 13.0, 15.0
TEMP_HIGH_ALARM, TEMP_HIGH_WARNING = 75.0, 70.0
LANES = 4

# The parts: NVIDIA's single-mode DR4 pair for ConnectX-7 on a Spectrum-4 (or Quantum-2) switch.
# The NIC's MMS4X00-NS400 (400Gb/s single-port OSFP, DR4, 100 m) "is linked to a single
# 800Gb/s Twin-port 2x400G OSFP transceiver (MMS4X00-NS)" in the switch (NVIDIA, "MMS4X00-NS400
# 400Gb/s Single-port OSFP Single Mode DR4 Transceivers Product Specifications", Overview,
# docs.nvidia.com/networking/display/mms4x00ns400/overview; MMS4X00-NS: "800Gbps Twin-port OSFP
# 2x400Gb/s Single Mode DR8 100m"). Not MMA4Z00-NS400 / MMA4Z00-NS: the multimode SR4 (50 m).
# NVIDIA serial numbers read `MT` + year and week + `FT` + five digits (MT2304FT08516).
NIC_PART = "MMS4X00-NS400"
SWITCH_PART = "MMS4X00-NS"


@dataclass(frozen=True)
class Dom:
    """Digital optical monitoring of the optic in a port at time t."""

    rx_power_dbm: tuple[float | None, ...]
    """Per lane; None is no light (-inf dBm)."""
    tx_power_dbm: tuple[float | None, ...]
    tx_bias_ma: tuple[float, ...]
    temperature_c: float
    voltage_v: float
    serial: str
    vendor: str = "NVIDIA"
    part_number: str = SWITCH_PART


class OpticsLayer(LinkLayer):
    """Light, BER and FEC at each end of a cable, and the modules' DOM.

    Reads `topology`, `graph`, `_by_link`, `_repairs` (a swapped module's new serial) and the
    link layer (up/down, speed, the timeline's segments). Fills the cache `_steady` (BER and FEC
    rates of the cables no fault touches)."""

    # modules: both ends of every cable -------------------------------------------------------
    def side(self, link: int, device: str) -> int:
        """Which end of `link` `device` is: 0 for the topology's `a`, 1 for `b` (a switch
        whose port a swapped cable lands in is the switch end)."""
        ends = [device_of(e) for e in (self.topology.links[link].a,
                                               self.topology.links[link].b)]
        if device in ends:
            return ends.index(device)
        wanted = device in self.graph.switches
        return next((i for i, e in enumerate(ends) if (e in self.graph.switches) == wanted), 0)

    def _at_side(self, fault: Fault, link: int) -> int | None:
        """The end of `link` a degrading optic or a dirty connector is at."""
        named = device_of(fault.spec.component)
        if named in self.graph.nodes or named in self.graph.switches:
            return self.side(link, named)
        return None if fault.switch is None else self.side(link, fault.switch)  # an optic id

    def _degrading(self, link: int, side: int) -> Fault | None:
        """The optic-degrading fault on the module at `side` of `link`."""
        for fault in self._by_link.get(link, []):
            if fault.kind is FaultKind.OPTIC_DEGRADING and self._at_side(fault, link) == side:
                return fault
        return None

    def _ageing(self, link: int, side: int, lane: int, t: float) -> float:
        """0..1: how far the laser of the module at `side` has aged (0: healthy). Two lanes of
        the module go first, the others follow at a third of the pace."""
        fault = self._degrading(link, side)
        if fault is None or not fault.active(t):
            return 0.0
        ramp = float(fault.spec.params.get("ramp_s", 1800))
        progress = min(1.0, max(0.0, (t - fault.spec.at) / ramp))
        return progress * (1.0 if lane in (1, 2) else 0.35)

    def _dead(self, link: int, t: float) -> bool:
        """No light at all on the cable (a dead optic behind a hang, a downed uplink)."""
        return any(f.kind in (FaultKind.NCCL_HANG, FaultKind.UPLINK_DOWN,
                              FaultKind.SWITCH_DOWN) and f.active(t)
                   for f in self._by_link.get(link, []))

    def healthy_tx(self, link: int, side: int, lane: int) -> float:
        """Launch power (dBm) of a healthy lane: 0.3 .. 1.7 dBm, per lane and module."""
        return round(0.3 + 1.4 * self.noise("tx", link, side, lane), 2)

    def channel_loss(self, link: int, side: int, lane: int) -> float:
        """dB lost between the module at `side` and the far receiver on a clean fibre
        (1.2 .. 2.6 dB: within the 3 dB DR4 channel budget, IEEE 802.3bs clause 124)."""
        return 1.2 + 1.4 * self.noise("loss", link, side, lane)

    def tx_power(self, link: int, side: int, lane: int, t: float) -> float | None:
        """What the module at `side` launches on `lane` (None: dark). A degrading laser loses
        up to ~11 dB over its ramp (the far receiver then sees about `end_dbm`)."""
        if self._dead(link, t):
            return None
        healthy = self.healthy_tx(link, side, lane)
        fault = self._degrading(link, side)
        aged = self._ageing(link, side, lane, t)
        if fault is None or not aged:
            return healthy
        end_dbm = float(fault.spec.params.get("end_dbm", -13.0))
        far_healthy = healthy - self.channel_loss(link, side, lane)
        return round(healthy - (far_healthy - end_dbm) * aged, 2)

    def tx_bias(self, link: int, side: int, lane: int, t: float) -> float:
        """Laser bias (mA): the module's power control raises it as an ageing laser loses
        efficiency (the classic end-of-life signature: bias up, power down)."""
        healthy = 6.2 + 1.6 * self.noise("bias", link, side, lane)
        return round(healthy * (1 + 1.1 * self._ageing(link, side, lane, t)), 2)

    def module_temperature(self, link: int, side: int, t: float) -> float:
        """Case temperature (C) of the module at `side`; an ageing laser runs warmer."""
        healthy = 41 + 8 * self.noise("otemp", link, side)
        return round(healthy + 9 * self._ageing(link, side, 1, t), 1)

    def _dirt_loss(self, link: int, side: int, lane: int, t: float) -> float:
        """Extra dB lost on `lane` by a dirty connector at `side` on the light it sends."""
        loss = 0.0
        for fault in self._by_link.get(link, []):
            if fault.kind is FaultKind.DIRTY_CONNECTOR and fault.active(t) and \
                    self._at_side(fault, link) == side:
                lanes = fault.spec.params.get("lanes", [2, 3])
                if lane in [int(x) for x in lanes]:
                    loss += float(fault.spec.params.get("loss_db", 6.0)) * \
                        (0.85 + 0.3 * self.noise("dirt", link, lane))
        return loss

    def rx_power(self, link: int, device: str, port: str, lane: int, t: float) -> float | None:
        """Received power (dBm) on one lane of the optic at `device:port`; None: no light.
        It is the far module's launch power less the fibre's loss and any dirt on the far
        connector: low light here with a healthy far transmitter is the fibre or a connector."""
        side = self.side(link, device)
        far = 1 - side
        launched = self.tx_power(link, far, lane, t)
        if launched is None:
            return None
        return round(launched - self.channel_loss(link, far, lane)
                     - self._dirt_loss(link, far, lane, t), 2)

    # receivers: BER and RS-FEC ---------------------------------------------------------------
    def lane_ber(self, link: int, device: str, port: str, lane: int, t: float) -> float:
        """Pre-FEC bit error ratio of one lane of the receiver at `device:port`."""
        if not self.link_up(link, t):
            return 0.0
        floor = physics.HEALTHY_BER_FLOOR * (1 + 3 * self.noise("ber", link, device, lane))
        if link not in self._by_link:
            # A cable no fault touches receives -2.3 .. +0.5 dBm (launch 0.3 .. 1.7 less loss
            # 1.2 .. 2.6): above the sensitivity knee, so its BER is the lane's floor.
            return floor
        return physics.lane_ber(self.rx_power(link, device, port, lane, t), floor)

    def _signal_ber(self, link: int, device: str, t: float) -> float:
        """The lanes' mean pre-FEC BER of the light reaching `device`'s receiver at `t`, link
        state aside (what decides whether the receiver can hold the link)."""
        bers = [physics.lane_ber(self.rx_power(link, device, "", lane, t),
                                 physics.HEALTHY_BER_FLOOR *
                                 (1 + 3 * self.noise("ber", link, device, lane)))
                for lane in range(1, LANES + 1)]
        return sum(bers) / len(bers)

    def _receiver_down(self, link: int) -> list[tuple[float, float]]:
        """When a receiver of `link` is past the high-SER limit (physics.high_ser) the link is
        down: from the moment its light makes the decoder fail until the fault is repaired.
        Light only worsens while a laser ages (or stays as bad behind a dirty connector), so
        the first moment is found by bisection over the fault's ramp."""
        ends = [device_of(e) for e in (self.topology.links[link].a, self.topology.links[link].b)]
        windows: list[tuple[float, float]] = []
        for fault in self._by_link.get(link, []):
            if fault.kind not in (FaultKind.OPTIC_DEGRADING, FaultKind.DIRTY_CONNECTOR):
                continue
            start = fault.spec.at
            end = fault.spec.until if fault.spec.until is not None else INF
            ramp = float(fault.spec.params.get("ramp_s", 0)) \
                if fault.kind is FaultKind.OPTIC_DEGRADING else 0.0
            last = min(end, start + ramp) if end != INF or ramp else start
            worst = max(last - 1e-6, start)

            def failing(at: float) -> bool:
                return any(physics.high_ser(self._signal_ber(link, device, at))
                           for device in ends)

            if not failing(worst):
                continue
            low, high = start, worst
            if not failing(low):
                for _ in range(40):  # to well under a millisecond
                    middle = (low + high) / 2
                    low, high = (low, middle) if failing(middle) else (middle, high)
            windows.append((round(high, 3), end))
        return windows

    def pre_fec_ber(self, link: int, device: str, port: str, t: float) -> float:
        """Bit error ratio before FEC at the receiver of `device:port` (the lanes' mean: the
        codewords are spread over every lane)."""
        bers = [self.lane_ber(link, device, port, lane, t) for lane in range(1, LANES + 1)]
        return sum(bers) / len(bers)

    def fec_rates(self, link: int, device: str, port: str, t: float) -> physics.FecRates:
        """What the RS(544,514) decoder at `device:port` does per second at `t`."""
        if not self.link_up(link, t):
            return physics.fec_rates(0.0, 0.0)
        return physics.fec_rates(self.pre_fec_ber(link, device, port, t), self.link_speed(link))

    def _steady_of(self, link: int, device: str, port: str) -> tuple[float, physics.FecRates]:
        """(pre-FEC BER, FEC rates) of the receiver at `device` on a cable no fault touches:
        they never change, so they are worked out once."""
        found = self._steady.get((link, device))
        if found is None:
            ber = self.pre_fec_ber(link, device, port, 0.0)
            found = self._steady[(link, device)] = (
                ber, physics.fec_rates(ber, self.link_speed(link)))
        return found

    def _optic_ramps(self, link: int) -> list[tuple[float, float]]:
        return [(f.spec.at, f.spec.at + float(f.spec.params.get("ramp_s", 1800)))
                for f in self._by_link.get(link, []) if f.kind is FaultKind.OPTIC_DEGRADING]

    def receiver(self, link: int, device: str, port: str, t: float) -> tuple[int, int, int]:
        """(corrected bits, uncorrectable codewords, corrected symbols) counted over [0, t]."""
        bits, lost, symbols, _ = self.receiver_counts(link, device, port, t)
        return bits, lost, symbols

    def receiver_counts(self, link: int, device: str, port: str,
                        t: float) -> tuple[int, int, int, tuple[int, ...]]:
        """(corrected bits, uncorrectable codewords, corrected symbols, histogram BIN0..15)
        counted over [0, t]; every layer's FEC counters are these integrals."""
        totals = [0.0] * (3 + physics.RS_T + 1)
        if link not in self._by_link:
            # No fault ever touches this cable: its light, BER and FEC rates never change.
            steady = self._steady_of(link, device, port)[1]
            pieces = [(0.0, max(t, 0.0))]
        else:
            steady = None
            pieces = self.segments(t, link, self._optic_ramps(link))
        for mid, width in pieces:
            rates = steady if steady is not None else self.fec_rates(link, device, port, mid)
            totals[0] += rates.corrected_bits * width
            totals[1] += rates.uncorrectable * width
            totals[2] += rates.corrected_symbols * width
            for k, value in enumerate(rates.bins):
                totals[3 + k] += value * width
        return (int(totals[0]), int(totals[1]), int(totals[2]),
                tuple(int(v) for v in totals[3:]))

    def lane_corrected_bits(self, link: int, device: str, port: str, t: float,
                            since: float | None = None) -> list[int]:
        """Corrected bits per lane over [0, t], or over [since, t] (a counter clear) (mlx5
        `rx_err_lane_N_phy`, mlxlink `Raw Physical Errors Per Lane`): the total split by each
        lane's share of the BER at `t` (exact for a steady cable, close for a ramp)."""
        total = self.receiver_counts(link, device, port, t)[0]
        if since is not None:
            total = max(total - self.receiver_counts(link, device, port, since)[0], 0)
        return self.lane_split(link, device, port, t, total)

    def lane_split(self, link: int, device: str, port: str, t: float, total: int) -> list[int]:
        """`total` corrected bits split over the lanes by each lane's share of the BER at `t`
        (`lane_corrected_bits` for a caller that has the total already)."""
        bers = [self.lane_ber(link, device, port, lane, t) for lane in range(1, LANES + 1)]
        if not sum(bers):
            return [total // LANES] * LANES
        return [int(total * b / sum(bers)) for b in bers]

    def bits_received(self, link: int, t: float) -> int:
        """Bits the receiver decoded over [0, t] (line rate while the link is up)."""
        speed = self.link_speed(link) * 1e9
        return int(self.integrate(lambda x: speed if self.link_up(link, x) else 0.0, t, link))

    # DOM: what a switch or a NIC reads from its module ---------------------------------------
    def dom(self, switch: str, port: str, t: float) -> Dom | None:
        """The optic in `switch:port`: per-lane power and bias, temperature, voltage."""
        link = self.real_link(switch, port, t)
        if link is None:
            return None
        return self.module_dom(link, switch, port, t)

    def nic_dom(self, host: str, nic: str, t: float) -> Dom | None:
        """The optic in a NIC's cage (what `mlxlink -m` reads), the same model as a switch's."""
        attachment = self.graph.attachments.get((host, nic))
        if attachment is None:
            return None
        dom = self.module_dom(attachment.link_index, host, nic, t)
        serial = f"MT{2400 + attachment.link_index % 100:04d}FT" \
                 f"{int(self.noise('nser', host, nic) * 1e5):05d}"
        return dataclasses.replace(dom, serial=serial, vendor="NVIDIA", part_number=NIC_PART)

    def module_dom(self, link: int, device: str, port: str, t: float) -> Dom:
        """DOM of the module at `device`'s end of `link`: its own launch power, bias and
        temperature, and the light the far module sends it."""
        side = self.side(link, device)
        lanes = range(1, LANES + 1)
        rx = tuple(self.rx_power(link, device, port, lane, t) for lane in lanes)
        tx = tuple(self.tx_power(link, side, lane, t) for lane in lanes)
        bias = tuple(self.tx_bias(link, side, lane, t) for lane in lanes)
        temp = self.module_temperature(link, side, t)
        voltage = round(3.25 + 0.05 * self.noise("v", link, side), 3)
        if device not in self.graph.switches:
            return Dom(rx_power_dbm=rx, tx_power_dbm=tx, tx_bias_ma=bias, temperature_c=temp,
                       voltage_v=voltage, serial="")
        link_optic = self.topology.links[link].optic or \
            f"MT{2400 + link % 100:04d}FT{int(self.noise('sser', link) * 1e5):05d}"
        swaps = sum(1 for _, at in self._repairs.get(link, []) if at <= t)
        if swaps:  # a new module reports its own serial number
            link_optic = f"MT{int(self.noise('serial', link, swaps) * 1e8):08d}"
        return Dom(rx_power_dbm=rx, tx_power_dbm=tx, tx_bias_ma=bias, temperature_c=temp,
                   voltage_v=voltage, serial=link_optic)
