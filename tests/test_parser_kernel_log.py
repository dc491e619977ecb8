"""kernel-log parser: events and summaries triage reads, across dmesg/journal/syslog shapes."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import kernel_log, registry
from fabtui.parsers.errors import ParseError
from fabtui.render.table import render_tables

FIXTURES = Path(__file__).parent / "fixtures" / "kernel-log"


def _fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_link_flap_bond_and_port_state() -> None:
    result = kernel_log.parse(_fixture("slurmv4-dmesg-mlx5-link-flap-bond-slave.txt"))
    assert len(result.events) == 18 and result.line_count == 18
    first = result.events[0]  # the published first line lost its `[`
    assert (first.type, first.timestamp, first.state, first.bond, first.interface) == \
        ("bond_slave", 4428.423595, "speed_changed", "bond0", "enp83s0f0np0")
    down = result.events[2]
    assert (down.type, down.device, down.pci, down.source, down.message, down.line) == \
        ("link_down", "enp83s0f0np0", "0000:53:00.0", "mlx5_core", "Link down", 3)
    port = result.events[5]
    assert (port.type, port.device, port.port, port.state) == ("port_state", "mlx5_3", 1, "ACTIVE")
    assert [e.state for e in result.events if e.type == "bond_slave"].count("disabled") == 4
    assert result.link_flaps == {"enp83s0f0np0": 3}
    assert result.port_downs == {"mlx5_3/1": 2}
    assert result.xids == {}


def test_old_xid_format_without_pid() -> None:
    result = kernel_log.parse(_fixture("forum-dmesg-nvrm-xid32-desktop.txt"))
    assert [(e.type, e.code, e.device, e.pid) for e in result.events] == \
        [("xid", 32, "0000:01:00", None)] * 2
    assert result.events[0].message == "Channel ID 00000009 intr 00800000"
    assert result.events[0].timestamp == 1399.140323
    assert result.xids == {32: 2}


def test_sxid_with_continuations_and_fabricmanager() -> None:
    result = kernel_log.parse(_fixture("slurmv4-nvswitch-sxid-22013-fabricmanager-dmesg.txt"))
    fm, sxid = result.events
    assert (fm.type, fm.code, fm.severity, fm.port, fm.host, fm.timestamp) == \
        ("fabricmanager", 22013, "non-fatal", 60, "tpgds-aihub0007", "Mar 03 18:39:57")
    assert fm.pci == "00000000:08:00.0" and fm.source == "nv-fabricmanager"
    assert (sxid.type, sxid.code, sxid.device, sxid.pci, sxid.severity, sxid.port) == \
        ("sxid", 22013, "nvidia-nvswitch3", "0000:08:00.0", "Non-fatal", 60)
    assert len(sxid.details) == 2 and sxid.details[1].startswith("Data {0x0000003c")
    assert result.sxids == {22013: 1} and result.xids == {}


def test_gpu_pcie_and_mlx5_events() -> None:
    result = kernel_log.parse(_fixture("synthetic-dmesg-T-gpu-xid-pcie-aer-mlx5-bond.txt"))
    by_line = {e.line: e for e in result.events}
    xid = by_line[2]
    assert (xid.code, xid.pid, xid.process, xid.timestamp) == \
        (63, 1234, "python", "Mon Jan  1 10:00:00 2024")
    assert xid.message.startswith("Row Remapper: New row marked for remapping")
    assert (by_line[3].type, by_line[3].code, by_line[3].pid) == ("gpu_fallen_off_bus", 79, None)
    assert (by_line[4].type, by_line[4].device) == ("gpu_fallen_off_bus", "0000:3b:00.0")
    assert (by_line[5].type, by_line[5].code, by_line[5].port) == ("xid", 74, 4)
    assert (by_line[6].type, by_line[6].device, by_line[6].severity) == \
        ("pcie_aer", "0000:03:00.0", "Corrected")
    assert by_line[7].details[1].startswith("[ 0] RxErr")
    assert by_line[10].type == "pcie_downtrained" and 11 not in by_line
    assert by_line[12].type == by_line[13].type == "mlx5_error"
    assert (by_line[14].type, by_line[14].state, by_line[15].state) == \
        ("module_event", "unplugged", "error")
    assert (by_line[16].type, by_line[16].state) == ("pcie_hotplug", "link down")
    assert 17 not in by_line  # `AER: enabled with IRQ` is not an error
    assert (by_line[18].type, by_line[18].severity) == ("ecc", "CE")
    assert (by_line[19].type, by_line[19].device) == ("mlx5_error", "enp59s0f0")
    assert (by_line[20].type, by_line[20].device, by_line[20].source) == \
        ("link_down", "eth0", "ixgbe")
    assert (by_line[21].type, by_line[21].device, by_line[21].source) == \
        ("link_up", "eno1", "e1000e")
    assert [(by_line[n].state, by_line[n].interface) for n in (23, 24, 25)] == \
        [("disabled", "eth0"), ("enslaved", "eth1"), ("no_active", None)]
    assert by_line[26].device == "mlx5_0"
    assert result.xids == {63: 1, 74: 1, 79: 1}
    assert result.link_flaps == {"eth0": 1, "eth2": 1}


def test_prefix_forms() -> None:
    result = kernel_log.parse(_fixture("synthetic-syslog-journal-iso-pdsh-level-prefixes.txt"))
    by_line = {e.line: e for e in result.events}
    syslog = by_line[2]
    assert (syslog.host, syslog.uptime_s, syslog.wallclock, syslog.timestamp) == \
        ("node7", 4428.423595, "Jan  1 10:00:13", 4428.423595)
    assert (by_line[3].type, by_line[3].interface, by_line[3].source) == \
        ("link_down", "ib0", "systemd-networkd")
    assert by_line[4].timestamp == "2024-01-01T10:00:15.123456+00:00" and by_line[4].code == 48
    assert (by_line[5].host, by_line[5].details) == \
        ("node8", ["Severity 1 Engine instance 32 Sub-engine instance 00"])
    assert by_line[7].uptime_s == 14.000001 and by_line[8].type == "pcie_aer"
    assert result.line_count == 8


def test_crlf_and_launcher_prefixes() -> None:
    text = ("0: [  117.98] NVRM: Xid (PCI:0000:10:1c): 94, pid=7, name=python, Contained\r\n"
            "[1,3]<stdout>:[  118.00] mlx5_core 0000:53:00.0 enp83s0f0np0: Link down\r\n")
    result = kernel_log.parse(text)
    assert [(e.type, e.code, e.line) for e in result.events] == \
        [("xid", 94, 1), ("link_down", None, 2)]
    assert result.events[0].message == "Contained"


def test_iso_dmesg_and_unknown_pid() -> None:
    text = ("2024-05-01T12:00:00,123456+00:00 NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', "
            "name=<unknown>, GPU has fallen off the bus.\n")
    event = kernel_log.parse(text).events[0]
    assert (event.type, event.pid, event.process, event.host) == \
        ("gpu_fallen_off_bus", None, None, None)
    assert event.wallclock == "2024-05-01T12:00:00,123456+00:00"


def test_log_without_relevant_events_is_empty_not_refused() -> None:
    result = kernel_log.parse("[    0.000000] Linux version 6.5.0\n[    0.1] Command line: ro\n")
    assert result.events == [] and result.line_count == 2


@pytest.mark.parametrize("text", ["", "hello world\n",
                                  "node1:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB\n"])
def test_refusals(text: str) -> None:
    with pytest.raises(ParseError) as caught:
        kernel_log.parse(text)
    assert "no kernel log line" in caught.value.message


def test_detection() -> None:
    assert registry.detect(_fixture("forum-dmesg-nvrm-xid32-desktop.txt"))[0][0] == "kernel-log"
    nccl = "node1:1:1 [0] NCCL INFO Using network IB\nnode1:1:1 [0] NCCL WARN mlx5_core ...\n"
    assert kernel_log.detect(nccl) == 0.0
    assert kernel_log.detect("GPU 00000000:3B:00.0\n    Product Name : NVIDIA H100\n") == 0.0


def test_table_lists_events_and_summaries() -> None:
    rendered = render_tables(kernel_log.tables(kernel_log.parse(
        _fixture("slurmv4-dmesg-mlx5-link-flap-bond-slave.txt"))))
    assert "link_flaps: enp83s0f0np0=3" in rendered and "port_state" in rendered


def test_bare_kernel_tag_printk_caller_and_new_aer_detail_lines() -> None:
    text = (
        "kernel: [123.456792] NETDEV WATCHDOG: eth0 (mlx5_core): transmit queue timed out\n"
        "[  200.1][ T3256] igb 0000:09:00.0 haeth0: igb: haeth0 NIC Link is Down\n"
        "[   50.1] r8169 0000:01:00.0: AER: PCIe Bus Error: severity=Uncorrected (Non-Fatal), "
        "type=Transaction Layer, (Requester ID)\n"
        "[   50.2] r8169 0000:01:00.0: AER:   device [10ec:8168] error status/mask=00004000/0\n"
        "[   50.3] r8169 0000:01:00.0: AER:    [14] CmpltTO                (First)\n"
        "[   50.5] pcieport 0000:00:02.0: AER: device recovery failed\n"
        "[   50.6] pcieport 0000:00:02.0: AER: broadcast error_detected message\n")
    events = kernel_log.parse(text).events
    assert [(e.type, e.device) for e in events] == [
        ("mlx5_error", "eth0"), ("link_down", "haeth0"), ("pcie_aer", "0000:01:00.0"),
        ("pcie_aer", "0000:00:02.0")]
    assert events[0].uptime_s == 123.456792 and events[1].source == "igb"
    assert events[2].severity == "Uncorrected (Non-Fatal)" and len(events[2].details) == 2


def test_fabricmanager_log_file_lines() -> None:
    text = ("[Mar 03 2024 18:39:57] [ERROR] [tid 1234] detected NVSwitch fatal error 20034 on "
            "fid 0 on NVSwitch pci bus id 00000000:07:00.0 physical id 0 port 18\n"
            "[Mar 03 2024 18:39:58] [INFO] [tid 1234] Successfully configured all NVSwitches\n")
    result = kernel_log.parse(text)
    assert [(e.type, e.code, e.severity, e.port, e.wallclock) for e in result.events] == \
        [("fabricmanager", 20034, "fatal", 18, "Mar 03 2024 18:39:57")]
    assert result.line_count == 2


_FALLEN_MULTILINE = "nvsentinel-issue155-dmesg-fallen-off-bus-multiline-no-xid.txt"


def test_fallen_off_bus_over_three_nvrm_lines_keeps_the_first_lines_address() -> None:
    # Issue 36: newer drivers print the address on the first of three NVRM lines and no Xid;
    # the event had neither address nor time.
    result = kernel_log.parse(_fixture(_FALLEN_MULTILINE))
    fallen = [e for e in result.events if e.type == "gpu_fallen_off_bus"]
    assert len(fallen) == 1
    event = fallen[0]
    assert (event.pci, event.device, event.uptime_s, event.line) == (
        "0000:b3:00.0", "0000:b3:00.0", 1843.308145, 1)
    assert event.message.endswith("fallen off the bus and is not responding to commands.")
    assert event.code is None and result.xids == {}  # no Xid was printed: none is invented
    assert [e.type for e in result.events] == ["gpu_fallen_off_bus", "gpu_error"]


def test_fallen_off_bus_multiline_in_journal_form() -> None:
    # The same message as `journalctl -k` prints it: each line with its own prefix.
    lines = _fixture(_FALLEN_MULTILINE).splitlines()[:3]
    journal = "\n".join("Feb 14 05:03:41 gpu-1 kernel: " + line.split("] ", 1)[-1].strip()
                        for line in lines)
    (event,) = kernel_log.parse(journal).events
    assert (event.type, event.pci, event.wallclock) == (
        "gpu_fallen_off_bus", "0000:b3:00.0", "Feb 14 05:03:41")


def test_gpu_intro_without_fallen_off_bus_stays_a_gpu_error() -> None:
    text = ("[   5.1] NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:1b06)\n"
            "[   5.1] NVRM: installed in this system is not supported by the\n"
            "[   5.1] NVRM: NVIDIA 470.82 driver release.\n")
    (event,) = kernel_log.parse(text).events
    assert (event.type, event.pci) == ("gpu_error", "0000:01:00.0")
    assert "not supported" in event.message
