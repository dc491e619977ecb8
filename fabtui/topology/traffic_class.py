"""The RoCE traffic class an NCCL job marks its packets with, judged against the fleet's QoS design.

The host NIC, trusting DSCP, queues a RoCE packet by the DSCP in its GRH traffic class, and the
switch does the same: a job whose packets carry another DSCP than the design's RoCE class
(`runbooks/templates/roce-qos.toml`, `host.rdma_dscp`) lands in another queue, usually a lossy
one, whatever `mlnx_qos` and the switch say (field review, domain gaps 1). NCCL takes the class
from `NCCL_IB_TC` (the full 8-bit traffic class: DSCP << 2 | ECN bits, so DSCP 26 is 104-107,
106 with ECT(0)); unset (or -1 since NCCL 2.23) it uses the communicator's `trafficClass` when
the application sets one, else `NCCL_IB_TC_DEFAULT` 0 (NVIDIA/nccl `src/transport/net_ib/
connect.cc`: `meta.tc = (ncclParamIbTc() != -1) ? ncclParamIbTc() : (config->trafficClass !=
NCCL_NET_TRAFFIC_CLASS_UNDEF) ? config->trafficClass : NCCL_IB_TC_DEFAULT`; before: `NCCL_PARAM(
IbTc, "IB_TC", 0)`). An MLNX_OFED host may also force a NIC-wide class
(`/sys/class/infiniband/DEV/tc/1/traffic_class`), which the job's log cannot show: an unset
`NCCL_IB_TC` is therefore "cannot tell", not a failure.

Pure functions over the job's NCCL settings (`NcclLog.env`) and the design (plain data, as
`template('roce-qos')` returns it); `qos_design()` reads the shipped template.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fabtui.paths import shipped_dir

SOURCE = ("NVIDIA/nccl net_ib connect.cc (NCCL_IB_TC, NCCL_IB_TC_DEFAULT 0; NCCL_IB_SL); "
          "runbooks/templates/roce-qos.toml (DSCP 26, trust dscp, PFC on 3); mlx5 dscp2prio "
          "default DSCP/8 (mlnx_qos)")
"""Where the rule comes from (docs/thresholds.md, section 2)."""


@dataclass(frozen=True)
class JobTrafficClass:
    """What the job's packets are marked with and where they queue, with the verdict."""

    verdict: str
    """`ok`, `warn` (cannot tell, or a secondary setting off the design) or `fail`."""
    value: str
    """One line for a metric or a report: the class, its DSCP and the queue it lands in."""
    tc: int | None
    """The traffic class NCCL sets on its QPs; None when the log does not tell."""
    dscp: int | None
    priority: int | None
    """The host priority the DSCP maps to under the design's trust (DSCP / 8)."""
    problems: tuple[str, ...] = ()
    """Each deviation from the design, as a sentence."""


def qos_design() -> dict[str, Any]:
    """The shipped RoCE QoS design (`runbooks/templates/roce-qos.toml`) as plain data."""
    path = shipped_dir("runbooks") / "templates" / "roce-qos.toml"
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _int(text: str | None) -> int | None:
    try:
        return int(str(text).strip(), 0) if text is not None and str(text).strip() else None
    except ValueError:
        return None


def judge(env: Mapping[str, str], design: Mapping[str, Any]) -> JobTrafficClass:
    """The job's traffic class (its NCCL_IB_TC, NCCL_IB_FIFO_TC, NCCL_IB_SL as its log reports
    them) against `design` (the roce-qos template)."""
    host = design.get("host") or {}
    switch = design.get("switch") or {}
    want = int(host.get("rdma_dscp", 26))
    lossless = [int(p) for p in host.get("pfc_priorities") or [3]]
    trust = str(host.get("trust", "dscp"))
    raw = env.get("NCCL_IB_TC")
    tc = _int(raw)
    problems: list[str] = []
    notes: list[str] = []
    if raw is not None and (tc is None or not -1 <= tc <= 255):
        return JobTrafficClass("warn", f"NCCL_IB_TC={raw} is not a traffic class (0-255): "
                               "what NCCL does with it was not read", None, None, None,
                               (f"NCCL_IB_TC={raw} unreadable",))
    if tc is None or tc == -1:
        shown = "unset" if tc is None else "-1"
        return JobTrafficClass(
            "warn", f"NCCL_IB_TC {shown}: NCCL marks TC 0 (DSCP 0, priority 0, no PFC) unless "
            "the application sets the communicator's trafficClass or the NIC forces a class "
            "(MLNX_OFED /sys/class/infiniband/DEV/tc/1/traffic_class); the log cannot tell "
            f"which: set NCCL_IB_TC={want << 2 | 2} (DSCP {want}) in the job or /etc/nccl.conf",
            None, None, None, (f"NCCL_IB_TC {shown}: DSCP {want} not set by the job",))
    dscp, ecn = tc >> 2, tc & 3
    priority = dscp // 8 if trust == "dscp" else None
    where = (f"priority {priority} ({'lossless' if priority in lossless else 'no PFC: lossy'})"
             if priority is not None else f"a queue chosen by PCP (host trusts {trust})")
    if dscp != want:
        rdma_tc = switch.get("dscp_rdma_tc")
        problems.append(f"NCCL_IB_TC={tc} marks DSCP {dscp}, not the design's {want}: the host "
                        f"queues it on {where}" + (f" and the leaf maps only DSCP {want} to its "
                                                   f"lossless TC {rdma_tc}" if rdma_tc is not None
                                                   else ""))
    fifo = _int(env.get("NCCL_IB_FIFO_TC"))
    if fifo is not None and fifo != -1 and fifo >> 2 != want:
        notes.append(f"NCCL_IB_FIFO_TC={fifo} sends NCCL's control messages with DSCP "
                     f"{fifo >> 2}, not {want}")
    sl = _int(env.get("NCCL_IB_SL"))
    if sl is not None and sl != -1 and trust != "dscp" and sl not in lossless:
        problems.append(f"NCCL_IB_SL={sl}: the host trusts {trust} and pauses only "
                        f"{lossless}")
    ecn_text = ["Not-ECT", "ECT(1)", "ECT(0)", "CE"][ecn]
    value = f"TC {tc} (DSCP {dscp}, ECN bits {ecn_text}) on {where}"
    if problems:
        return JobTrafficClass("fail", "; ".join(problems + notes), tc, dscp, priority,
                               tuple(problems + notes))
    if notes:
        return JobTrafficClass("warn", value + "; " + "; ".join(notes), tc, dscp, priority,
                               tuple(notes))
    return JobTrafficClass("ok", value, tc, dscp, priority)


def as_plain(result: JobTrafficClass) -> dict[str, Any]:
    """`result` as plain data for runbook expressions."""
    return {"verdict": result.verdict, "value": result.value, "tc": result.tc,
            "dscp": result.dscp, "priority": result.priority,
            "problems": list(result.problems)}
