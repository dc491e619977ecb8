"""FEC per port: post-FEC (uncorrectable) codewords must be 0; corrected codewords as a rate,
and the pre-FEC BER; from a histogram (`show interfaces counters fec-histogram PORT`), the tail:
the most symbols any codeword needed corrected in the window (`fec_max_t`).

RS(544,514) "KP4" corrects up to 15 symbols per codeword; a codeword with more is lost. A link
whose codewords reach far into the histogram has little margin left even while nothing is lost
yet (sonic-utilities Command Reference: FEC_MAX_T, the highest non-empty bin). Limits
[inference]: warn from 8 (over half the correction capacity), fail from 13 (two symbols from
loss). With two readings the bins' growth is judged (the counters run since the port came up);
with one, the totals are reported, not judged."""

from __future__ import annotations

from typing import Any

from fabtui.model.probe import Metric, Verdict
from fabtui.probes.evaluators._counters import counter_metrics
from fabtui.probes.evaluators._switch_ports import port_component, target_ports
from fabtui.probes.evaluators.base import EvalContext, evaluator


@evaluator("fec-stats")
def fec_stats(before: Any, after: Any, ctx: EvalContext) -> list[Metric]:
    """Uncorrectable codewords (must stay 0), corrected rate, and pre-FEC BER per port."""
    metrics = []
    if before is not None:
        before = _keyed(before, ctx)
    after = _keyed(after, ctx)
    for name in target_ports(ctx, after.interfaces):
        now = after.interfaces[name]
        where = port_component(ctx, name)
        if now.fec_pre_ber is not None:
            metrics.append(Metric(name="fec_pre_ber", value=now.fec_pre_ber, component=where))
        old = before.interfaces.get(name) if before is not None else None
        if before is not None and old is None:
            continue
        values = {"fec_uncorr": now.fec_uncorr, "fec_corr": now.fec_corr,
                  "fec_symbol_err": now.fec_symbol_err}
        previous = None if old is None else {"fec_uncorr": old.fec_uncorr,
                                             "fec_corr": old.fec_corr,
                                             "fec_symbol_err": old.fec_symbol_err}
        metrics += counter_metrics(previous, values, where, ctx.interval,
                                   deltas=("fec_uncorr", "fec_symbol_err"), rates=("fec_corr",))
        if getattr(now, "histogram", None):
            metrics.append(_tail(old.histogram if old is not None else None, now.histogram,
                                 where))
    return metrics


def _keyed(parsed: Any, ctx: EvalContext) -> Any:
    """`fec-histogram PORT` does not print the port (the parser keys it `unknown` unless the
    command line is in the text): on a port target it is that port."""
    if ctx.target.port and list(parsed.interfaces) == ["unknown"]:
        return parsed.model_copy(update={"interfaces": {
            ctx.target.port: parsed.interfaces["unknown"]}})
    return parsed


MAX_T_WARN = 8
MAX_T_FAIL = 13
TAIL_SOURCE = ("RS(544,514) corrects 15 symbols per codeword (IEEE 802.3 cl. 119); FEC_MAX_T, "
               "sonic-utilities Command Reference; warn 8 / fail 13 [inference]")


def _bin(name: str) -> int | None:
    digits = name.upper().removeprefix("BIN")
    return int(digits) if digits.isdigit() else None


def _tail(before: dict[str, int | None] | None, after: dict[str, int | None],
          where: str) -> Metric:
    """`fec_max_t`: the highest bin that grew in the window (or, with one reading, that holds
    codewords at all, not judged)."""
    grew = {}
    for name, value in after.items():
        index = _bin(name)
        if index is None or value is None:
            continue
        old = (before or {}).get(name)
        grew[index] = value - old if before is not None and old is not None else value
    tail = max((i for i, n in grew.items() if n > 0), default=0)
    if before is None:
        return Metric(name="fec_max_t_total", value=tail, component=where,
                      source="since the port came up: not judged")
    verdict = Verdict.FAIL if tail >= MAX_T_FAIL else \
        Verdict.WARN if tail >= MAX_T_WARN else Verdict.OK
    return Metric(name="fec_max_t", value=tail, component=where, verdict=verdict,
                  limit=MAX_T_FAIL, source=TAIL_SOURCE)
