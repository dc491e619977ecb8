"""Arista EOS `show running-config`: the configuration as sections of command lines."""

from __future__ import annotations

from typing import Literal

from fabtui.model.parsed import ParsedOutput


class EosRunningConfig(ParsedOutput):
    """Each top-level section's lines; nested lines carry their parents."""

    kind: Literal["eos-running-config"] = "eos-running-config"
    device: str | None = None
    """The `! device: NAME (MODEL, EOS-VERSION)` header's text, when printed."""
    sections: dict[str, list[str]]
    """`""` -> the top-level commands that open no section (`qos map dscp 26 to traffic-class
    3`); `interface Ethernet1/1` -> its lines (`mtu 9216`); a line nested deeper is written
    with its parents, `tx-queue 3 / random-detect ecn ...`."""
