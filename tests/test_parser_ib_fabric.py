"""ibdiagnet and OpenSM log parsers (issue 35, IB runbook): the real captures read, the
port-counter errors and SM events the runbook acts on, and unreadable parts said aloud."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import ibdiagnet, opensm_log
from fabtui.parsers.errors import ParseError

FIX = Path(__file__).parent / "fixtures"
REAL_DIAG = (FIX / "ibdiagnet" / "ydanzig-ibdiagnet-2.7.0-42nodes-width-errors.txt").read_text()
REAL_SM = (FIX / "opensm-log" / "ibsim-opensm-trap128-link-down-heavy-sweep.txt").read_text()


def test_the_real_ibdiagnet_summary_is_read_stage_by_stage() -> None:
    out = ibdiagnet.parse(REAL_DIAG)
    assert out.stages["Speed / Width checks"].errors == 15
    assert out.stages["Nodes Information"].warnings == 16
    assert (out.total_nodes, out.switches, out.channel_adapters, out.links) == (42, 6, 31, 58)
    assert out.links_by_speed["4x2.5"] == 4 and out.links_by_speed["2x50"] == 1
    assert out.master_sm_lid == 10 and out.master_sm_description == "smg-ib-svr43 mlx5_0"
    assert any("Unexpected width" in m.text and m.stage == "Speed / Width checks"
               for m in out.messages)
    assert not out.warnings and not out.port_errors


def test_a_counter_increase_names_the_port_and_the_difference() -> None:
    line = ('-E- Sfc6a1c0300b00580/Nfc6a1c0300b00580/P5 - "symbol_error_counter" increased '
            "during the run (difference value=27,difference allowed threshold=1)")
    out = ibdiagnet.parse(REAL_DIAG.replace("-I- Ports counters Difference Check (during run) "
                                            "finished successfully", line))
    [error] = out.port_errors
    assert (error.node_guid, error.port_number, error.counter, error.difference,
            error.threshold) == ("0xfc6a1c0300b00580", 5, "symbol_error_counter", 27, 1)


def test_an_unreadable_summary_row_is_a_warning_never_a_guessed_number() -> None:
    broken = REAL_DIAG.replace("-I- Port Counters                       0          0",
                               "-I- Port Counters                       n/a        ?")
    out = ibdiagnet.parse(broken)
    assert "Port Counters" not in out.stages
    assert any("summary row not read" in w and "Port Counters" in w for w in out.warnings)
    cut = REAL_DIAG.split("Summary\n-I- Stage")[0]
    assert any("no `Summary` table" in w for w in ibdiagnet.parse(cut).warnings)
    with pytest.raises(ParseError):
        ibdiagnet.parse("nothing here\n")


def test_the_real_opensm_log_gives_trap_sweep_port_change_and_subnet_up() -> None:
    out = opensm_log.parse(REAL_SM)
    assert [e.type for e in out.events] == ["trap", "heavy_sweep", "port_state", "subnet_up"]
    assert out.traps == {"128": 1} and out.heavy_sweeps == 1 and out.subnet_ups == 1
    change = out.events[2]
    assert (change.node, change.port, change.old_state, change.new_state) == \
        ("Switch1", 3, "ACTIVE", "DOWN")
    assert not out.warnings


def test_handovers_are_counted_and_a_mangled_line_is_said() -> None:
    text = ("Jun 17 17:30:00 000001 [4E8006C0] 0x02 -> osm_sm_state_mgr_process: Entering "
            "STANDBY state\nJun 17 17:32:00 000001 [4E8006C0] 0x02 -> osm_sm_state_mgr_process"
            ": Entering MASTER state\nJun 17 17:3x:00 -> garbled\n")
    out = opensm_log.parse(text)
    assert (out.masters, out.standbys) == (1, 1)
    assert any("line 3" in w for w in out.warnings)


def test_evaluators_give_ibdiagnet_s_own_verdict_and_the_sm_s_handovers() -> None:
    from tests.test_probe_evaluators import judge

    diag = judge("ib.ibdiagnet", "node001", "ibdiagnet", ibdiagnet.parse(REAL_DIAG))
    assert diag["errors.speed_width_checks@node001"].verdict.value == "fail"
    assert diag["warnings.discovery@node001"].verdict.value == "warn"
    assert diag["errors.port_counters@node001"].verdict.value == "ok"
    log = judge("ib.opensm_log", "node001", "opensm-log", opensm_log.parse(REAL_SM))
    assert log["sm.lost_mastership@node001"].verdict.value == "ok"
    assert log["trap.128@node001"].value == 1 and log["trap.128@node001"].verdict.value == "ok"
    flapping = opensm_log.parse("".join(
        f"Jun 17 17:{m:02d}:00 000001 [4E8006C0] 0x02 -> osm_sm_state_mgr_process: Entering "
        f"{state} state\n" for m, state in enumerate(["MASTER", "STANDBY"] * 3)))
    fought = judge("ib.opensm_log", "node001", "opensm-log", flapping)
    assert fought["sm.lost_mastership@node001"].verdict.value == "fail"
