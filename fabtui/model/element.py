"""How an element of the fabric is named, in one place: one parse, one format.

An element key is the string the live view, findings, runbook inputs and JSON use: a node
(`node001`), a switch (`leaf-g00-r3`), a NIC (`node001:mlx5_3`), a GPU (`node001:gpu2`), a
switch port (`leaf-g00-r3:Ethernet24`), a cable (`link:17`) or an optic (its serial). A reading
may name a lane of a port (`leaf-g00-r3:Ethernet24/lane2`), and probes name a GPU `GPU2` as
NVML does. `ElementRef.parse` reads every such form; `str()` writes the one key form back, so
JSON keeps the strings it always had.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

SEPARATOR = ":"
"""Between a device and its part in a key; a device's name never contains it."""
LINK = "link"
"""The device part of a cable's key: `link:<index in the topology's links>`."""
_LANE = re.compile(r"/lane(\d+)$")
_GPU = re.compile(r"^(?:gpu|GPU)(\d+)$")


class Kind(StrEnum):
    """What an element is."""

    NODE = "node"
    GPU = "gpu"
    NIC = "nic"
    HOST_LINK = "host link"
    PORT = "leaf port"
    OPTIC = "optic"
    LEAF = "leaf"
    SPINE_LINK = "spine link"
    SPINE = "spine"


@dataclass(frozen=True, slots=True)
class ElementRef:
    """An element key, read: the device, the part on it (empty for a whole device or an
    optic), the lane a reading was taken on (None: the whole element), and what kind of element
    it is when a fabric said so (`FabricMap.ref`; the text alone cannot tell an optic's serial
    from a node's name). The kind is not part of its identity."""

    device: str
    part: str = ""
    lane: int | None = None
    kind: Kind | None = field(default=None, compare=False)

    @classmethod
    def parse(cls, text: str) -> ElementRef:
        """`text` read (never raises: an unknown form is a device with no part). A GPU is
        `gpuN` whichever way it was spelled."""
        lane = None
        match = _LANE.search(text)
        if match:
            lane, text = int(match.group(1)), text[:match.start()]
        device, part = split_key(text)
        if part and (gpu := _GPU.match(part)):
            part = f"gpu{gpu.group(1)}"
        return cls(device, part, lane)

    @classmethod
    def gpu(cls, node: str, index: int) -> ElementRef:
        return cls(node, f"gpu{index}")

    @classmethod
    def link(cls, index: int) -> ElementRef:
        return cls(LINK, str(index))

    @property
    def key(self) -> str:
        """The element's key, without a lane."""
        return f"{self.device}{SEPARATOR}{self.part}" if self.part else self.device

    @property
    def whole(self) -> ElementRef:
        """This element without its lane."""
        return ElementRef(self.device, self.part, None, self.kind) if self.lane is not None \
            else self

    @property
    def is_link(self) -> bool:
        return self.device == LINK

    @property
    def link_index(self) -> int | None:
        """A cable's index in the topology's links (None: not a cable)."""
        return int(self.part) if self.is_link and self.part.isdigit() else None

    def __str__(self) -> str:
        return self.key if self.lane is None else f"{self.key}/lane{self.lane}"


def split_key(key: str) -> tuple[str, str]:
    """`key` as (device, part), exactly as written: no lane read, no GPU spelling changed
    (`"leaf01:Ethernet8"` -> `("leaf01", "Ethernet8")`). For topology endpoints, which are always
    in key form, and for hot paths that cannot afford an `ElementRef` per call."""
    device, _, part = key.partition(SEPARATOR)
    return device, part


def device_of(key: str) -> str:
    """The device `key` names (`leaf-g00-r3:Ethernet24/lane2` -> `leaf-g00-r3`)."""
    return key.partition(SEPARATOR)[0]
