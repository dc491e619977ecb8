"""IB completion statuses as rdma-core defines them (`enum ibv_wc_status`, libibverbs/verbs.h),
and triage reading them by that table (issue 35, N10)."""

from __future__ import annotations

from pathlib import Path

from fabtui.triage import triage_paths, wc_status

VERBS_H = ["SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_EEC_OP_ERR", "LOC_PROT_ERR",
           "WR_FLUSH_ERR", "MW_BIND_ERR", "BAD_RESP_ERR", "LOC_ACCESS_ERR", "REM_INV_REQ_ERR",
           "REM_ACCESS_ERR", "REM_OP_ERR", "RETRY_EXC_ERR", "RNR_RETRY_EXC_ERR",
           "LOC_RDD_VIOL_ERR", "REM_INV_RD_REQ_ERR", "REM_ABORT_ERR", "INV_EECN_ERR",
           "INV_EEC_STATE_ERR", "FATAL_ERR", "RESP_TIMEOUT_ERR", "GENERAL_ERR", "TM_ERR",
           "TM_RNDV_INCOMPLETE"]
"""`enum ibv_wc_status`, rdma-core `libibverbs/verbs.h`, in value order (0 ...)."""


def test_every_completion_status_is_named_as_verbs_h_defines_it() -> None:
    assert sorted(wc_status.STATUSES) == list(range(1, len(VERBS_H)))
    for value, status in wc_status.STATUSES.items():
        assert status.name == f"IBV_WC_{VERBS_H[value]}", value
        assert status.meaning
    assert wc_status.STATUSES[5].role == "teardown"
    assert all(s.role == "signal" for v, s in wc_status.STATUSES.items() if v != 5)
    # 8: the local memory region does not allow the access: memory registration, host side.
    assert wc_status.STATUSES[8].host_side
    assert "general" in wc_status.STATUSES[21].meaning
    assert "response timeout" in wc_status.STATUSES[20].meaning
    assert "fatal" in wc_status.STATUSES[19].meaning


def test_triage_reads_status_21_as_a_general_error(tmp_path: Path) -> None:
    line = ("gpu-a07:40211:40402 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion "
            "from peer 10.20.0.8<52311> with status=21 opcode=0 len=0 vendor err 129 (Recv) "
            "localGid ::ffff:10.20.0.7 remoteGids::ffff:10.20.0.8 hca mlx5_0")
    (tmp_path / "job.log").write_text(line + "\n")
    warn = triage_paths([tmp_path / "job.log"]).warnings[0]
    assert (warn.status, warn.status_name) == (21, "IBV_WC_GENERAL_ERR")
    assert warn.meaning is not None and "general" in warn.meaning


def test_the_log_parser_names_every_status_as_triage_does() -> None:
    """The NCCL log parser looks a status's name up in its own copy of the enum (the verbs
    strings): both follow verbs.h, value for value."""
    from fabtui.parsers.nccl_log._warn import _WC_STATUS

    assert [f"IBV_WC_{name}" for name, _ in _WC_STATUS[1:]] == \
        [wc_status.STATUSES[v].name for v in range(1, len(_WC_STATUS))]
