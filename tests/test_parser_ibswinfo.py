"""ibswinfo: unmanaged IB switch inventory, PSUs, temperatures and fans."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import ibswinfo, registry
from fabtui.parsers.errors import ParseError

FIXTURES = Path(__file__).parent / "fixtures" / "ibswinfo"


def _text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_full_output_with_fan_error() -> None:
    result = ibswinfo.parse(_text("infiniband-exporter-ibswinfo-sb7790-fan-error.txt"))
    assert result.view == "full"
    assert result.node_description == "SwitchIB Mellanox Technologies"
    assert (result.part_number, result.serial_number, result.ports) == ("MSB7790-ES2F",
                                                                       "MT1943X00498", 36)
    assert result.firmware_version == "11.2008.2102"
    assert result.uptime == "160d-10:38:53" and result.uptime_s == 13_862_333
    assert result.psus["1"].power_w == 71 and result.psus["0"].serial == "MT1944X10558"
    assert (result.temperature_c, result.max_temperature_c) == (45.0, 57.0)
    assert result.fan_status == "ERROR" and result.fans_rpm["8"] == 7232
    assert result.problems == ["fan status: ERROR"]


def test_targeted_outputs() -> None:
    vitals = ibswinfo.parse(_text("synthetic-ibswinfo-vitals-qsfp-temps.txt"))
    assert vitals.view == "vitals" and vitals.uptime_s == 16_982_312
    assert vitals.module_temperatures_c["04"] == 47.0
    assert vitals.problems == ["fan#5: 0 rpm"]
    status = ("psu0.status        : OK\npsu0.dc            : ERROR\npsu0.fan           : OK\n"
              "fans               : OK\n")
    assert registry.detect(status)[0][0] == "ibswinfo"
    parsed = ibswinfo.parse(status)
    assert parsed.view == "status" and parsed.problems == ["PSU0 dc_power: ERROR"]
    inventory = ("node_desription    : leaf-ib-07\npart_number        : MQM8790-HS2F\n"
                 "fw_version         : 27.2010.1202\npsu0.serial        : MT2049X29282\n")
    parsed = ibswinfo.parse(inventory)
    assert parsed.view == "inventory" and parsed.node_description == "leaf-ib-07"
    assert parsed.psus["0"].serial == "MT2049X29282"


def test_prefix_and_refusal() -> None:
    prefixed = "".join(f"ib-sw3: {line}\n"
                       for line in _text("infiniband-exporter-ibswinfo-sb7790-fan-error.txt")
                       .splitlines())
    assert ibswinfo.parse(prefixed).fans_rpm["1"] == 8493
    with pytest.raises(ParseError, match="no ibswinfo"):
        ibswinfo.parse("nothing here\n")
