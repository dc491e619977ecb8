"""ibv_devinfo: device fields, port state/MTU codes, -v fields and GIDs, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import ibv_devinfo
from fabtui.parsers.errors import ParseError

FIXTURES = Path(__file__).parent / "fixtures" / "ibv_devinfo"


def test_cx3_device_and_port() -> None:
    result = ibv_devinfo.parse((FIXTURES / "felixfu-ibv_devinfo-cx3-ib.txt").read_text())
    device = result.devices["mlx4_0"]
    assert device.fw_ver == "2.42.5000"
    assert (device.transport, device.transport_code) == ("InfiniBand", 0)
    assert device.node_guid == "0002:c903:00ea:9940"
    assert device.vendor_id == "0x02c9" and device.vendor_part_id == 4099
    assert device.hw_ver == "0x1" and device.board_id == "MT_1100120019"
    assert device.phys_port_cnt == 1
    port = device.ports["1"]
    assert (port.state, port.state_code) == ("PORT_ACTIVE", 4)
    assert (port.max_mtu, port.max_mtu_code, port.active_mtu) == (4096, 5, 4096)
    assert (port.sm_lid, port.port_lid, port.port_lmc) == (4, 7, 0)
    assert port.link_layer == "InfiniBand"


def test_verbose_roce_width_speed_gids_and_attributes() -> None:
    text = (FIXTURES / "synthetic-ibv_devinfo-v-roce-cx6dx.txt").read_text()
    device = ibv_devinfo.parse(text).devices["mlx5_2"]
    assert device.attributes["max_qp"] == "131072"
    assert "BAD_PKEY_CNTR" not in device.attributes
    port = device.ports["1"]
    assert port.link_layer == "Ethernet" and port.active_mtu == 1024
    assert (port.active_width, port.active_width_code) == ("4X", 2)
    assert port.active_speed == "25.0 Gbps" and port.active_speed_gbps == 25.0
    assert [(g.index, g.type) for g in port.gids][-1] == (3, "RoCE v2")
    assert port.gids[3].gid == "::ffff:10.99.91.39"
    assert port.attributes["gid_tbl_len"] == "255"


def test_two_devices_crlf_and_srun_prefix() -> None:
    text = ("0: hca_id:\tmlx5_0\r\n0: \tfw_ver:\t\t\t\t20.31.1014\r\n0: \t\tport:\t1\r\n"
            "0: \t\t\tstate:\t\t\tPORT_DOWN (1)\r\n0: hca_id:\tmlx5_1\r\n"
            "0: \tfw_ver:\t\t\t\t20.31.1014\r\n0: \t\tport:\t1\r\n"
            "0: \t\t\tstate:\t\t\tPORT_ACTIVE (4)\r\n0: \t\t\tactive_mtu:\t\t4096 (5)\r\n")
    assert ibv_devinfo.detect(text) >= 0.3
    result = ibv_devinfo.parse(text)
    assert result.devices["mlx5_0"].ports["1"].state == "PORT_DOWN"
    assert result.devices["mlx5_1"].ports["1"].active_mtu == 4096


def test_refusals() -> None:
    with pytest.raises(ParseError, match="no IB devices"):
        ibv_devinfo.parse("No IB devices found\n")
    with pytest.raises(ParseError) as caught:
        ibv_devinfo.parse("# ibv_devinfo\nhca_id:\tmlx5_0\n")
    assert caught.value.line == 2
    with pytest.raises(ParseError):
        ibv_devinfo.parse("CA 'mlx5_0'\n\tCA type: MT4123\n")


def test_list_form() -> None:
    text = "$ ibv_devinfo -l\n2 HCAs found:\n\tmlx5_0\n\tmlx5_1\n"
    assert ibv_devinfo.detect(text) >= 0.3
    result = ibv_devinfo.parse(text)
    assert list(result.devices) == ["mlx5_0", "mlx5_1"]
    assert result.devices["mlx5_0"].fw_ver is None


def test_a_capture_cut_at_both_ends_reads_the_whole_devices_and_warns_of_the_rest() -> None:
    # deepseek-ai/DeepEP#38: starts inside a device whose `hca_id:` is lost, ends inside the
    # ConnectX-7 mlx5_7's port. Before: the headless lines and the cut port were silent.
    result = ibv_devinfo.parse(
        (FIXTURES / "deepep-issue38-cx7-4129-roce-and-ib-cut-both-ends.txt").read_text())
    assert list(result.devices) == ["mlx5_7"]
    device = result.devices["mlx5_7"]
    assert (device.vendor_part_id, device.fw_ver, device.board_id) == (
        4129, "28.39.2048", "MT_0000000838")
    port = device.ports["1"]
    assert (port.state, port.max_mtu, port.active_mtu, port.link_layer) == (
        "PORT_ACTIVE", 4096, None, None)
    assert result.warnings[0].startswith("lines 1-14: fields of a device whose `hca_id:`")
    assert "mlx5_7 port 1: no `link_layer`" in result.warnings[1]


def test_a_last_device_with_no_port_block_is_a_warning() -> None:
    # deepseek-ai/DeepEP#55: the excerpt ends after mlx5_4's `transport:` line.
    result = ibv_devinfo.parse(
        (FIXTURES / "deepep-issue55-4126-ib-lids-cut-both-ends.txt").read_text())
    assert result.devices["mlx5_3"].ports["1"].port_lid == 1690
    assert result.devices["mlx5_4"].ports == {}
    assert result.warnings[-1] == (
        "mlx5_4: no port block: the capture ends inside this device's block")
