"""Optic (DOM) judgement shared by the switch and NIC views: limits by module type, both
directions, bias, temperature and lane spread.

A lane is judged against the module's own alarm/warning thresholds (CMIS EEPROM, printed by
the switch CLI) and against its type's specification, whichever is worse: vendors set their
alarms wider than the standard, so a DR4 lane at -6.5 dBm passes the module's -8.4 dBm warning
and is still below the receiver's specified minimum. That minimum is informative in IEEE 802.3
(average receive power is "not the principal indicator of signal strength"): below it the
margin is gone and the lane warns (clean the connectors); it fails at the module's own low
alarm, or where the pre-FEC BER confirms it (`confirmed_by_ber`). Limits and sources:
docs/thresholds.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from fabtui.model.probe import Metric, Verdict


@dataclass(frozen=True)
class OpticSpec:
    """Per-lane optical limits of a module type (average power, dBm)."""

    name: str
    rx_min: float
    rx_max: float
    tx_min: float | None
    tx_max: float | None
    source: str
    channel_loss_db: float = 3.0
    """Largest channel insertion loss of the type's reach: more between the far end's launch
    and the near end's receive power is the fibre or a connector."""


_DR = ("IEEE 802.3bs clause 124 (400GBASE-DR4): launch power -2.9..4.0 dBm and receive power "
       "-5.9..4.0 dBm per lane; Edgecore ET7502-DR4 datasheet")
SPECS: dict[str, OpticSpec] = {
    "DR4": OpticSpec("400GBASE-DR4", -5.9, 4.0, -2.9, 4.0, _DR),
    # 800GBASE-DR8 is eight clause-124 DR lanes (IEEE 802.3df) [inference: same per-lane PMD].
    "DR8": OpticSpec("800GBASE-DR8", -5.9, 4.0, -2.9, 4.0, _DR + "; IEEE 802.3df (DR8)"),
    # FR4 spans 2 km: its channel budget is larger than DR4's 500 m one. 4 dB is the figure
    # published for 400GBASE-FR4 (IEEE 802.3cu clause 151) [unverified here: the standard's
    # table was not at hand].
    "FR4": OpticSpec("400GBASE-FR4", -7.3, 3.5, None, None,
                     "Edgecore ET7502-FR4 datasheet: receive power -7.3..3.5 dBm per lane",
                     channel_loss_db=4.0),
}
_TYPE = re.compile(r"(?<![A-Z0-9])(?:\d+G(?:BASE)?-?)?(DR4|DR8|FR4)(?![A-Z0-9])")

PRE_FEC_BER_FAIL = 1e-5
"""A pre-FEC BER at which a lane below its type's receive minimum fails (the catalog's fail
limit for `raw_ber` / `pre_fec_ber`, two decades below the RS(544,514) design BER 2.4e-4
[inference])."""

SPREAD_WARN_DB = 3.0
"""Lanes of one module more than 3 dB apart in received power [inference: the lanes share a
fibre bundle and a connector, so a spread points at one dirty or damaged lane]."""
TEMPERATURE_WARN_C = 70.0
"""Fallback when the module prints no temperature limits: the top of the commercial case
temperature range of 400G modules (Edgecore ET7502-DR4/-FR4 datasheets: 0..70 degC)."""


def optic_type(*texts: str | None) -> OpticSpec | None:
    """The spec of the module described by any of `texts` (media type, part number...)."""
    for text in texts:
        match = _TYPE.search((text or "").upper())
        if match:
            return SPECS[match.group(1)]
    return None


def _worse(a: tuple[Verdict, float | None], b: tuple[Verdict, float | None]
           ) -> tuple[Verdict, float | None]:
    return b if b[0].rank > a[0].rank else a


def _low(value: float, alarm: float | None, warning: float | None
         ) -> tuple[Verdict, float | None]:
    if alarm is not None and value < alarm:
        return Verdict.FAIL, alarm
    if warning is not None and value < warning:
        return Verdict.WARN, warning
    return Verdict.OK, None


def _high(value: float, alarm: float | None, warning: float | None
          ) -> tuple[Verdict, float | None]:
    if alarm is not None and value > alarm:
        return Verdict.FAIL, alarm
    if warning is not None and value > warning:
        return Verdict.WARN, warning
    return Verdict.OK, None


def lane_metrics(where: Callable[[str | None], str], spec: OpticSpec | None,
                 thresholds: Mapping[str, float | None], *,
                 rx: Mapping[str, float | None], tx: Mapping[str, float | None],
                 bias: Mapping[str, float | None], dark: set[str],
                 temperature: float | None, pre_fec_ber: float | None = None) -> list[Metric]:
    """Metrics for one module: `where(lane)` names a lane's component (`where(None)`: the
    module). `dark`: lanes in loss of signal. `pre_fec_ber`: the receiver's pre-FEC BER where
    the same reading gives it (mlxlink): a lane below its type's receive minimum fails when the
    BER confirms the lost margin, and only warns otherwise."""
    t = thresholds
    source = spec.source if spec else "the module's own alarm/warning thresholds"
    metrics: list[Metric] = []

    def add(name: str, lane: str | None, value: float | str | None, unit: str,
            judged: tuple[Verdict, float | None]) -> None:
        metrics.append(Metric(name=name, value=value, unit=unit, component=where(lane),
                              verdict=judged[0], limit=judged[1], source=source))

    lit: list[float] = []
    for lane, power in sorted(rx.items()):
        if power is None:
            if lane in dark:
                add("rx_power_dbm", lane, "-inf", "dBm", (Verdict.FAIL, None))
            continue
        lit.append(power)
        judged = _low(power, t.get("rx_power_low_alarm_dbm"), t.get("rx_power_low_warning_dbm"))
        judged = _worse(judged, _high(power, t.get("rx_power_high_alarm_dbm"),
                                      t.get("rx_power_high_warning_dbm")))
        if spec is not None:
            confirmed = pre_fec_ber is not None and pre_fec_ber >= PRE_FEC_BER_FAIL
            judged = _worse(judged, _low(power, spec.rx_min, None) if confirmed
                            else _low(power, None, spec.rx_min))
            judged = _worse(judged, _high(power, None, spec.rx_max))  # overload
        add("rx_power_dbm", lane, power, "dBm", judged)
    for lane, power in sorted(tx.items()):
        if power is None:
            continue
        judged = _low(power, t.get("tx_power_low_alarm_dbm"), t.get("tx_power_low_warning_dbm"))
        judged = _worse(judged, _high(power, t.get("tx_power_high_alarm_dbm"),
                                      t.get("tx_power_high_warning_dbm")))
        if spec is not None and spec.tx_min is not None:
            judged = _worse(judged, _low(power, spec.tx_min, None))
        add("tx_power_dbm", lane, power, "dBm", judged)
    for lane, current in sorted(bias.items()):
        if current is None:
            continue
        judged = _worse(_low(current, t.get("tx_bias_low_alarm_ma"),
                             t.get("tx_bias_low_warning_ma")),
                        _high(current, t.get("tx_bias_high_alarm_ma"),
                              t.get("tx_bias_high_warning_ma")))
        add("tx_bias_ma", lane, current, "mA", judged)
    if len(lit) > 1:
        spread = round(max(lit) - min(lit), 2)
        add("rx_power_spread_db", None, spread, "dB",
            (Verdict.WARN, SPREAD_WARN_DB) if spread > SPREAD_WARN_DB else (Verdict.OK, None))
    if temperature is not None:
        alarm, warning = t.get("temperature_high_alarm_c"), t.get("temperature_high_warning_c")
        if alarm is None and warning is None:
            warning = TEMPERATURE_WARN_C
        add("temperature_c", None, temperature, "°C", _high(temperature, alarm, warning))
    return metrics


CHANNEL_LOSS_DB = 3.0
"""Largest channel insertion loss of a 400GBASE-DR4 link (IEEE 802.3bs clause 124: 3 dB); the
budget assumed when neither end names its module type (FR4: `SPECS["FR4"].channel_loss_db`)."""


def _spec_of(*ends: list[dict[str, object]]) -> OpticSpec | None:
    """The module type either end's DOM names (`optic_type` metric: `400GBASE-FR4`...)."""
    for metrics in ends:
        for metric in metrics:
            if metric.get("name") == "optic_type":
                spec = optic_type(str(metric.get("value") or ""))
                if spec is not None:
                    return spec
    return None


def _lanes(metrics: list[dict[str, object]], name: str) -> list[tuple[str, dict[str, object]]]:
    """(lane, metric) of `name`, in lane order (`.../lane3` -> `3`)."""
    found = []
    for metric in metrics:
        component = str(metric.get("component", ""))
        if metric.get("name") == name and "/lane" in component:
            found.append((component.rsplit("/lane", 1)[1], metric))
    return sorted(found, key=lambda item: (len(item[0]), item[0]))


def _number(metric: dict[str, object]) -> float | None:
    value = metric.get("value")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def light_blame(near: list[dict[str, object]], far: list[dict[str, object]]
                ) -> dict[str, object] | None:
    """Which part of a light path is at fault when the near end receives too little light.

    `near` and `far` are the DOM metrics (plain dicts: name, value, component, verdict) of the
    two ends of one cable (a leaf port and the NIC's module), lanes paired in order. None when
    the near end's receive power is fine. Otherwise `{blame, lanes, reason}` with blame
    `far-end transmitter` (the far end launches too little light), `fibre or connector` (the
    far end launches enough, and more than the channel's loss budget for the module type is
    lost on the way), `near-end optic` (the far end launches enough, at least the type's
    receive minimum plus its channel budget, and the loss is within budget, yet the near end
    reads low: its receiver), or `unknown` (the far end's launch was not read). The near
    module's own transmit power or bias is the other direction's light: it says nothing about
    its receiver, and is only mentioned."""
    low = [(lane, m) for lane, m in _lanes(near, "rx_power_dbm") if m.get("verdict") != "ok"]
    if not low:
        return None
    lanes = [lane for lane, _ in low]
    spec = _spec_of(near, far)
    budget = spec.channel_loss_db if spec is not None else CHANNEL_LOSS_DB
    kind = spec.name if spec is not None else "module type unknown, DR4's"
    own = [m for m in near if m.get("name") in ("tx_power_dbm", "tx_bias_ma")
           and m.get("verdict") not in ("ok", None)]
    aside = (f"; its own {own[0].get('name')} is out of range too "
             f"({own[0].get('component')} = {own[0].get('value')}): that is the other "
             f"direction's light") if own else ""
    far_tx = [m for _, m in _lanes(far, "tx_power_dbm")]
    near_lanes = [lane for lane, _ in _lanes(near, "rx_power_dbm")]
    worst: tuple[float, str] | None = None
    weakest: tuple[float, str] | None = None
    for lane, rx in low:
        index = near_lanes.index(lane)
        if index >= len(far_tx):
            continue
        tx = far_tx[index]
        if tx.get("verdict") not in ("ok", None):
            return {"blame": "far-end transmitter", "lanes": lanes,
                    "reason": f"{tx.get('component')} launches {tx.get('value')} dBm{aside}"}
        launched, received = _number(tx), _number(rx)
        if launched is not None and received is not None:
            loss = launched - received
            worst = max(worst or (loss, lane), (loss, lane))
            weakest = min(weakest or (launched, lane), (launched, lane))
    if worst is None:
        return {"blame": "unknown", "lanes": lanes,
                "reason": f"the far end's transmit power was not read{aside}"}
    if worst[0] > budget:
        return {"blame": "fibre or connector", "lanes": lanes,
                "reason": f"{worst[0]:.1f} dB lost on lane {worst[1]} (channel budget "
                          f"{budget:g} dB, {kind}): clean and inspect both connectors{aside}"}
    enough = spec.rx_min + budget if spec is not None else None
    if spec is not None and enough is not None and weakest is not None and weakest[0] < enough:
        return {"blame": "far-end transmitter", "lanes": lanes,
                "reason": f"the far end launches only {weakest[0]:g} dBm on lane {weakest[1]}: "
                          f"less than the {enough:g} dBm that reaches the {spec.name} receive "
                          f"minimum over a {budget:g} dB channel{aside}"}
    return {"blame": "near-end optic", "lanes": lanes,
            "reason": f"the far end launches enough and only {worst[0]:.1f} dB is lost on the "
                      f"way (budget {budget:g} dB, {kind}), yet lane {worst[1]} reads low: the "
                      f"near end's receiver{aside}"}
