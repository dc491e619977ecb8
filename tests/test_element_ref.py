"""Element keys: one parse and one format for every form the live view, probes and findings
use (the spellings NVML and lane readings add included)."""

from __future__ import annotations

import pytest

from fabtui.model.element import ElementRef, Kind
from fabtui.views.fabricmap import FabricMap
from tests.support.tui_support import workspace


@pytest.mark.parametrize("text", ["node001", "leaf-g00-r3", "node001:mlx5_3", "node001:gpu2",
                                  "leaf-g00-r3:Ethernet24", "link:17", "MT24000026",
                                  "leaf-g00-r3:Ethernet24/lane2", "spine-01:Ethernet1/1"])
def test_every_key_form_reads_and_writes_back_unchanged(text: str) -> None:
    assert str(ElementRef.parse(text)) == text


def test_the_parts_of_a_key() -> None:
    assert ElementRef.parse("leaf-g00-r3:Ethernet24/lane2") == \
        ElementRef("leaf-g00-r3", "Ethernet24", 2)
    assert ElementRef.parse("leaf-g00-r3:Ethernet24/lane2").whole.key == "leaf-g00-r3:Ethernet24"
    assert ElementRef.parse("node001:GPU3") == ElementRef.gpu("node001", 3)  # NVML's spelling
    assert ElementRef.parse("link:17").link_index == 17 and ElementRef.link(17).is_link
    assert ElementRef.parse("node001:mlx5_3").link_index is None
    assert ElementRef.parse("MT24000026") == ElementRef("MT24000026")


def test_the_fabric_map_reads_components_through_it() -> None:
    """A metric's component lands on the map's key whichever way a probe spelled it."""
    fabric = FabricMap.build(workspace().graph())
    assert fabric.element_of("node001:GPU3") == ("node001:gpu3", None)
    assert fabric.element_of("leaf-g00-r0:Ethernet0/lane3") == ("leaf-g00-r0:Ethernet0", "3")
    assert fabric.element_of("node001:mlx5_0") == ("node001:mlx5_0", None)
    assert all(k in fabric.kinds for k in ("node001:gpu3", "link:0"))


def test_the_fabric_says_what_kind_an_element_is() -> None:
    """The text alone cannot tell an optic's serial from a node's name; the fabric can."""
    fabric = FabricMap.build(workspace().graph())
    optic = fabric.optic_of("leaf-g00-r0:Ethernet0")
    assert optic is not None
    assert fabric.ref(optic).kind is Kind.OPTIC and fabric.ref("node001").kind is Kind.NODE
    assert fabric.ref("node001:GPU3").kind is Kind.GPU  # read, then known
    assert fabric.ref("leaf-g00-r0:Ethernet0/lane1").kind is Kind.PORT
    assert fabric.ref("not-in-this-fabric").kind is None
    assert fabric.ref("node001") == ElementRef.parse("node001")  # the kind is no identity
