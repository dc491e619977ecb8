"""The physical layer of a simulated link: received light -> pre-FEC BER -> what RS-FEC does.

Pure functions, no state: the simulation (optics.py) asks them for rates, integrates the rates over
its timeline, and every view (ethtool -S, mlxlink -c, SONiC fec-stats / fec-histogram, EOS
counters) prints the same integrals, so the layers cannot disagree.

- BER from receive power: a healthy 400G PAM4 lane runs at a few 1e-9 before FEC; below about
  -4 dBm every lost dB multiplies the errors (the receiver's sensitivity margin is gone near
  the 400GBASE-DR4 minimum of -5.9 dBm, IEEE 802.3bs clause 124) [inference: slope chosen so a
  lane near -8.5 dBm reaches ~1e-3, where RS(544,514) starts to fail].
- RS(544,514) over 10-bit symbols corrects up to 15 symbol errors per codeword (IEEE 802.3
  clause 119, "RS-FEC ... corrects up to 15 symbols"). With independent bit errors, the symbol
  errors in a codeword are Poisson with mean 544 x (1 - (1 - BER)^10): at BER 3e-5 the mean is
  0.16 and a codeword with 16 errors is a 1e-26 event; only near 1e-3 (mean ~5) do
  uncorrectable codewords appear. The histogram bins (codewords by the number of symbol errors
  corrected, BIN0..BIN15, as SONiC `show interfaces counters fec-histogram` and mlxlink
  `--show_histogram` print them) are the same distribution.
- An uncorrectable codeword invalidates the 66b blocks it carries, so every frame that touches
  one arrives with a bad FCS: a frame of F bytes spans F x 8 / 5140 + 1 codewords on average, and
  the frames lost are a share of the frames sent, never more than them.
- The link fails when the decoder is overwhelmed: past `HI_SER_MEAN_SYMBOLS` symbol errors per
  codeword (pre-FEC BER about 1.9e-3) some 7 % of codewords and half the frames are lost, and the
  receiver no longer holds the link [inference]. Not the 6380-in-8192-codewords monitor of the
  error-indication bypass mode (Intel RS-FEC `rsfec_lane_cfg`: that limit is mean 0.78, a BER of
  about 1.4e-4, below the 2.4e-4 RS(544,514) design BER at which IEEE 802.3 400G PMDs must still
  deliver frames).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

RS_N = 544
"""Symbols per RS(544,514) codeword."""
RS_K = 514
RS_T = 15
"""Symbol errors one codeword can correct."""
SYMBOL_BITS = 10
HEALTHY_BER_FLOOR = 2e-9
"""Pre-FEC BER of a healthy lane (plus up to 6e-9 of per-lane variation)."""
SENSITIVITY_KNEE_DBM = -4.0
DECADES_PER_DB = 1.1
MAX_BER = 2e-2
HI_SER_MEAN_SYMBOLS = 10.0
"""Mean symbol errors per codeword past which the receiver loses the link (module docstring)."""
PAYLOAD_BITS = RS_K * SYMBOL_BITS
"""Bits of the PCS stream each codeword carries (5140)."""


def lane_ber(power_dbm: float | None, floor: float) -> float:
    """Pre-FEC BER of a lane receiving `power_dbm` (None: no light, nothing is decoded)."""
    if power_dbm is None:
        return 0.0
    ber = floor
    if power_dbm < SENSITIVITY_KNEE_DBM:
        ber *= 10 ** ((SENSITIVITY_KNEE_DBM - power_dbm) * DECADES_PER_DB)
    return min(ber, MAX_BER)


def symbol_errors_per_codeword(ber: float) -> float:
    """Mean 10-bit symbol errors in a 544-symbol codeword at pre-FEC `ber`."""
    if ber <= 0:
        return 0.0
    return RS_N * -math.expm1(SYMBOL_BITS * math.log1p(-min(ber, 0.5)))


def high_ser(ber: float) -> bool:
    """True when a receiver at pre-FEC `ber` is past the limit at which the link fails."""
    return symbol_errors_per_codeword(ber) > HI_SER_MEAN_SYMBOLS


def frame_loss_ratio(uncorrectable_ratio: float, frame_bytes: int) -> float:
    """Share of `frame_bytes` frames with a bad FCS when `uncorrectable_ratio` of the codewords
    are lost: a frame is lost when any codeword it spans is (frame bits / 5140 + 1 on average)."""
    if uncorrectable_ratio <= 0:
        return 0.0
    spans = frame_bytes * 8 / PAYLOAD_BITS + 1
    return -math.expm1(spans * math.log1p(-min(uncorrectable_ratio, 1.0 - 1e-15)))


def codewords_per_s(speed_gbps: float) -> float:
    """RS(544,514) codewords a port decodes per second (the FEC runs on idles too). The model
    counts the line rate as the decoded bits, so corrected bits / decoded bits is the BER."""
    return speed_gbps * 1e9 / (RS_N * SYMBOL_BITS)


@dataclass(frozen=True)
class FecRates:
    """Per-second rates of a receiver's RS-FEC decoder at one BER."""

    bins: tuple[float, ...]
    """Codewords/s with 0..15 symbol errors (all corrected)."""
    uncorrectable: float
    """Codewords/s with more than 15 symbol errors: lost, with the frames they carry."""
    corrected_symbols: float
    corrected_bits: float

    @property
    def corrected_codewords(self) -> float:
        """Codewords/s that had errors and were corrected (bins 1..15)."""
        return sum(self.bins[1:])

    @property
    def uncorrectable_ratio(self) -> float:
        """Share of the codewords decoded that were lost."""
        total = sum(self.bins) + self.uncorrectable
        return self.uncorrectable / total if total else 0.0


def fec_rates(ber: float, speed_gbps: float) -> FecRates:
    """What RS(544,514) does per second at pre-FEC `ber` on a `speed_gbps` port."""
    total = codewords_per_s(speed_gbps)
    if ber <= 0:
        return FecRates(bins=(total,) + (0.0,) * RS_T, uncorrectable=0.0,
                        corrected_symbols=0.0, corrected_bits=0.0)
    symbol_error = -math.expm1(SYMBOL_BITS * math.log1p(-ber))
    mean = RS_N * symbol_error
    pmf = [math.exp(-mean)]
    for k in range(1, RS_T + 1):  # p(k) = p(k-1) x mean / k
        pmf.append(pmf[-1] * mean / k)
    # The tail summed term by term: 1 - sum(pmf) would cancel to 0 long before it is 0.
    tail, k = 0.0, RS_T + 1
    term = math.exp(k * math.log(mean) - mean - math.lgamma(k + 1))
    while term > 0.0 and k < RS_T + 200:
        tail += term
        k += 1
        term *= mean / k
        if term < tail * 1e-12:
            break
    bins = tuple(total * p for p in pmf)
    symbols = sum(k * rate for k, rate in enumerate(bins))
    bits_per_symbol_error = SYMBOL_BITS * ber / symbol_error
    return FecRates(bins=bins, uncorrectable=total * tail, corrected_symbols=symbols,
                    corrected_bits=symbols * bits_per_symbol_error)
