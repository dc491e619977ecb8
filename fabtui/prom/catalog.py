"""Which exporter metric becomes which value of which probe's parse (docs/prometheus.md).

Each `Mapped` names one Prometheus metric as a real exporter exposes it, the topology element its
labels name (`gpu`, `nic`, `ibport`, `port`), and the field of the parse the probe's own
evaluator reads (`fabtui.probes.evaluators`), so a value read from Prometheus is judged by the
same code and the same catalog thresholds as the probe that reads the device directly. Counters
are read as `rate(metric[window])`; gauges as their latest value.

Exporters and their names:
  - NVIDIA dcgm-exporter (`DCGM_FI_DEV_*`, labels `gpu`, `UUID`, `device`, `modelName`,
    `Hostname`), fields of NVIDIA DCGM's field list;
  - node_exporter's `ethtool` collector: `node_ethtool_` + the driver's stat name, lower-cased,
    with a whole-word `rx` / `tx` spelled `received` / `transmitted` (`buildEthtoolFQName` in
    collector/ethtool_linux.go), label `device` (the netdev); `ethtool_name()` does the same;
  - node_exporter's `infiniband` collector (`node_infiniband_*`, labels `device`, `port`);
  - vinted/sonic-exporter's interface collector for switch ports (`sonic_interface_*`, label
    `device`; internal/collector/interface_collector.go, the same names v0.1.0 to 3759410):
    `sonic_interface_{receive,transmit}_errs_total` by `type`, `..._operational_status`,
    `..._optic_{receive,transmit}_power_dbm` by `unit` (the lane: STATE_DB `rx<N>power`) and
    `..._transceiver_temperature_celsius`. It serves no PFC, FEC or laser bias series: those
    keys (`sonic.pfc_*`, `sonic.fec_*`, `sonic.tx_bias`) are fabtui's own names for the SAI
    counters SONiC keeps in COUNTERS_DB / STATE_DB, in the same style, for a site that exports
    them (see docs/prometheus.md). Every name can be replaced in the config
    (`[prometheus.metrics]`, by key).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Element = Literal["gpu", "nic", "ibport", "port"]
"""What a series' labels name: a GPU of a node, a NIC by netdev, an IB device port, a switch
port."""

LANE = "unit"
"""The label naming a transceiver lane on a switch port's DOM series: sonic-exporter's `unit`,
the digit of STATE_DB's `rx<N>power` (empty, so absent, for a single-lane `rxpower`)."""

PRIORITY = 3
"""The lossless RoCE priority whose PFC counters are read (the fabric's RoCE class)."""


@dataclass(frozen=True)
class Mapped:
    """One exporter metric and what it becomes."""

    key: str
    """Stable id, for `[prometheus.metrics]` overrides and docs (`ethtool.rx_prio3_pause`)."""
    exporter: str
    metric: str
    """The metric name the exporter exposes."""
    element: Element
    counter: bool
    probe: str
    """The catalog probe whose evaluator and thresholds judge it."""
    field: str
    """The parse field it fills (an ethtool stat, `rx.PFC3`, `fec_uncorr`, `temperature_c`)."""
    matchers: str = ""
    """Extra label matchers (`type="error"`)."""
    by: tuple[str, ...] = ()
    """Labels kept besides the element's (a DOM lane)."""


_RX = re.compile(r"(^|_)rx(_|$)")
_TX = re.compile(r"(^|_)tx(_|$)")
_INVALID = re.compile(r"_*[^0-9A-Za-z_]+_*")


def ethtool_name(stat: str) -> str:
    """The node_exporter metric of an `ethtool -S` stat (`rx_prio3_pause` ->
    `node_ethtool_received_prio3_pause`), as its `buildEthtoolFQName` forms it."""
    name = _INVALID.sub("_", stat).lower().lstrip("_")
    name = _RX.sub(r"\1received\2", name)
    name = _TX.sub(r"\1transmitted\2", name)
    return f"node_ethtool_{name}"


ETHTOOL_STATS = ("rx_prio3_pause", "tx_prio3_pause", "rx_prio3_pause_duration",
                 "tx_prio3_pause_duration", "rx_prio3_marked", "rx_crc_errors_phy",
                 "rx_symbol_err_phy", "rx_discards_phy", "rx_prio3_buf_discard",
                 "link_down_events_phy", "rx_out_of_buffer", "tx_pause_storm_warning_events",
                 "tx_pause_storm_error_events", "rx_bits_phy", "rx_corrected_bits_phy")
"""The mlx5 stats read through node_exporter (pause, ECN marks, errors, storms, FEC bits)."""

RDMA_COUNTERS = ("out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "np_cnp_sent",
                 "rp_cnp_handled", "np_ecn_marked_roce_packets", "req_cqe_error",
                 "resp_cqe_error")
"""RDMA hardware counters (`/sys/class/infiniband/*/ports/*/hw_counters`)."""

IB_COUNTERS = {"symbol_error_total": "SymbolErrorCounter",
               "link_downed_total": "LinkDownedCounter",
               "port_errors_received_total": "PortRcvErrors",
               "port_discards_transmitted_total": "PortXmitDiscards",
               "port_transmit_wait_total": "PortXmitWait"}
"""node_infiniband_* counter -> its IBTA PortCounters name (what perfquery prints)."""

_NE = "node_exporter ethtool"
_NI = "node_exporter infiniband"
_DCGM = "dcgm-exporter"
_SONIC = "sonic-exporter"

MAPPED: tuple[Mapped, ...] = (
    *(Mapped(f"ethtool.{s}", _NE, ethtool_name(s), "nic", True, "nic.ethtool", s)
      for s in ETHTOOL_STATS),
    *(Mapped(f"infiniband.{c}", _NI, f"node_infiniband_{c}_total", "ibport", True,
             "nic.rdma_statistic", c) for c in RDMA_COUNTERS),
    *(Mapped(f"infiniband.{n.removesuffix('_total')}", _NI, f"node_infiniband_{n}", "ibport",
             True, "nic.perfquery", field) for n, field in IB_COUNTERS.items()),
    Mapped("infiniband.state_id", _NI, "node_infiniband_state_id", "ibport", False,
           "nic.perfquery", "state_id"),
    Mapped("dcgm.temperature", _DCGM, "DCGM_FI_DEV_GPU_TEMP", "gpu", False, "gpu.nvml",
           "temperature_c"),
    Mapped("dcgm.power", _DCGM, "DCGM_FI_DEV_POWER_USAGE", "gpu", False, "gpu.nvml",
           "power_draw_w"),
    Mapped("dcgm.xid", _DCGM, "DCGM_FI_DEV_XID_ERRORS", "gpu", False, "gpu.nvml", "xid"),
    Mapped("dcgm.ecc_dbe", _DCGM, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "gpu", False, "gpu.nvml",
           "ecc.volatile_uncorrectable"),
    Mapped("dcgm.ecc_sbe", _DCGM, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "gpu", False, "gpu.nvml",
           "ecc.volatile_correctable"),
    Mapped("dcgm.remapped_uncorrectable", _DCGM, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
           "gpu", False, "gpu.nvml", "remapped_rows.uncorrectable"),
    Mapped("dcgm.row_remap_pending", _DCGM, "DCGM_FI_DEV_ROW_REMAP_PENDING", "gpu", False,
           "gpu.nvml", "remapped_rows.pending"),
    Mapped("dcgm.row_remap_failure", _DCGM, "DCGM_FI_DEV_ROW_REMAP_FAILURE", "gpu", False,
           "gpu.nvml", "remapped_rows.failure"),
    Mapped("dcgm.pcie_replay", _DCGM, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "gpu", True,
           "gpu.nvml", "pcie_replay"),
    Mapped("dcgm.nvlink_crc", _DCGM, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "gpu",
           True, "gpu.nvml", "nvlink_crc_flit_errors"),
    Mapped("dcgm.nvlink_replay", _DCGM, "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "gpu",
           True, "gpu.nvml", "nvlink_replay_errors"),
    Mapped("sonic.rx_err", _SONIC, "sonic_interface_receive_errs_total", "port", True,
           "switch.counters", "rx_err", 'type="error"'),
    Mapped("sonic.rx_drp", _SONIC, "sonic_interface_receive_errs_total", "port", True,
           "switch.counters", "rx_drp", 'type="drop"'),
    Mapped("sonic.tx_err", _SONIC, "sonic_interface_transmit_errs_total", "port", True,
           "switch.counters", "tx_err", 'type="error"'),
    Mapped("sonic.tx_drp", _SONIC, "sonic_interface_transmit_errs_total", "port", True,
           "switch.counters", "tx_drp", 'type="discard"'),
    Mapped("sonic.oper_status", _SONIC, "sonic_interface_operational_status", "port", False,
           "switch.counters", "state"),
    Mapped("sonic.pfc_rx", _SONIC, "sonic_interface_receive_pfc_packets", "port", True,
           "switch.pfc", f"rx.PFC{PRIORITY}", f'priority="{PRIORITY}"'),
    Mapped("sonic.pfc_tx", _SONIC, "sonic_interface_transmit_pfc_packets", "port", True,
           "switch.pfc", f"tx.PFC{PRIORITY}", f'priority="{PRIORITY}"'),
    Mapped("sonic.fec_corr", _SONIC, "sonic_interface_fec_correctable_frames", "port", True,
           "switch.fec", "fec_corr"),
    Mapped("sonic.fec_uncorr", _SONIC, "sonic_interface_fec_uncorrectable_frames", "port",
           True, "switch.fec", "fec_uncorr"),
    Mapped("sonic.fec_symbol_err", _SONIC, "sonic_interface_fec_symbol_errors", "port", True,
           "switch.fec", "fec_symbol_err"),
    Mapped("sonic.fec_pre_ber", _SONIC, "sonic_interface_fec_pre_ber", "port", False,
           "switch.fec", "fec_pre_ber"),
    Mapped("sonic.rx_power", _SONIC, "sonic_interface_optic_receive_power_dbm", "port", False,
           "switch.dom_all", "rx_power_dbm", by=(LANE,)),
    Mapped("sonic.tx_power", _SONIC, "sonic_interface_optic_transmit_power_dbm", "port", False,
           "switch.dom_all", "tx_power_dbm", by=(LANE,)),
    Mapped("sonic.tx_bias", _SONIC, "sonic_interface_transceiver_tx_bias_ma", "port", False,
           "switch.dom_all", "tx_bias_ma", by=(LANE,)),
    Mapped("sonic.temperature", _SONIC, "sonic_interface_transceiver_temperature_celsius",
           "port", False, "switch.dom_all", "temperature_c"),
)

BY_KEY = {m.key: m for m in MAPPED}
PROBES = tuple(dict.fromkeys(m.probe for m in MAPPED))
"""The catalog probes Prometheus stands in for, in the order results are produced."""
