"""Per-port FEC counters and BER of a switch (SONiC `show interfaces counters fec-stats`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fabtui.model.parsed import ParsedOutput


class PortFec(BaseModel):
    """One port's FEC statistics; every value is null where the tool printed N/A."""

    model_config = ConfigDict(extra="forbid")

    state: str | None = None
    """Oper state: `up`/`down` (SONiC `U`/`D`; `X` = admin down, so down), null for N/A."""
    fec_corr: int | None = None
    """Codewords corrected by FEC (FEC_CORR)."""
    fec_uncorr: int | None = None
    """Codewords FEC could not correct (FEC_UNCORR): each one is a lost frame; must be 0."""
    fec_symbol_err: int | None = None
    """Symbol errors corrected (FEC_SYMBOL_ERR)."""
    fec_pre_ber: float | None = None
    """Bit error rate before FEC (FEC_PRE_BER)."""
    fec_post_ber: float | None = None
    """Bit error rate after FEC (FEC_POST_BER)."""
    fec_pre_ber_max: float | None = None
    """Highest pre-FEC BER seen (FEC_PRE_BER_MAX)."""
    flr_observed: float | None = None
    """Observed frame loss ratio, FLR(O)."""
    flr_predicted: float | None = None
    """Predicted frame loss ratio, FLR(P)."""
    flr_predicted_accuracy_pct: float | None = None
    """Accuracy printed next to FLR(P) (`7.81e-10 (89%)` -> 89.0), percent."""
    fec_max_t: float | None = None
    """FEC_MAX_T: the highest histogram bin with codewords (symbols corrected per codeword);
    -1 when none. Float as printed (`3.0`)."""
    histogram: dict[str, int | None] = {}
    """FEC histogram: bin as printed (`BIN0`..`BIN15`: codewords with that many symbol errors)
    -> codeword count (`show interfaces counters fec-histogram`)."""
    other: dict[str, float | None] = {}
    """Columns with no field above, keyed by the header in snake case."""


class FecStats(ParsedOutput):
    """FEC correction counters, BER and frame-loss ratios per port."""

    kind: Literal["fec-stats"] = "fec-stats"
    flavor: Literal["sonic"] = "sonic"
    """Which switch OS printed it."""
    view: str
    """`fec-stats` (the per-port table), `fec-histogram` (one port's bins),
    `fec-histogram-table` (`portstat -fh`: bins per port) or `fec-stats-json`."""
    command: str | None = None
    """The command line, when the capture shows it after a prompt."""
    interfaces: dict[str, PortFec]
    """Port as printed -> FEC statistics."""
    period_s: int | None = None
    """`-p N`: counters are deltas over this many seconds."""
