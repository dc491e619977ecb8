"""The fabric as the topology file describes it: nodes with GPUs and NICs, switches, links, planes.

These models are the vocabulary the whole product speaks: probes, runbooks and cases name components
in these terms (a node's hostname, a NIC's name, a switch's name and port). They validate shape and
types only; rules that need the whole fabric (rail symmetry, dangling links, ...) live in
`fabtui.topology.validate`.

Units: speeds are Gb/s (as vendors label ports: 400 = 400GbE / NDR), MTUs are bytes.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# Speeds as people write them: 400, "400G", "400GbE", "400Gb/s", "NDR", "2x200G".
_IB_RATES = {"SDR": 10, "DDR": 20, "QDR": 40, "FDR10": 40, "FDR": 56, "EDR": 100, "HDR": 200,
             "NDR": 400, "XDR": 800, "GDR": 1600}
_SPEED_RE = re.compile(
    r"^\s*(?:(\d+)\s*[xX]\s*)?(\d+(?:\.\d+)?)\s*([GT])?(?:b(?:ps|/s|E)?|bE)?\s*$", re.IGNORECASE)


def parse_speed(value: Any) -> Any:
    """Normalise a port speed to Gb/s; leave other types for pydantic to reject."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value
    if not isinstance(value, str):
        return value
    text = value.strip()
    rate = _IB_RATES.get(text.upper())
    if rate is not None:
        return rate
    match = _SPEED_RE.match(text)
    if match is None:
        raise ValueError(f"{value!r} is not a speed; write Gb/s as a number (400) or e.g. "
                         "400G, NDR")
    lanes = int(match.group(1) or 1)
    number = float(match.group(2))
    if (match.group(3) or "G").upper() == "T":
        number *= 1000
    total = lanes * number
    return int(total) if total.is_integer() else total


Speed = Annotated[int, BeforeValidator(parse_speed), Field(gt=0, le=100_000)]
"""A port or link speed in Gb/s."""

_PCI_RE = re.compile(r"^(?:([0-9a-fA-F]{4,8}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$")
_PCI_CANONICAL = re.compile(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")


def normalize_pci(value: Any) -> Any:
    """`18:00.0`, `0000:18:00.0` and nvidia-smi's `00000000:18:00.0` all become `0000:18:00.0`."""
    if not isinstance(value, str) or _PCI_CANONICAL.fullmatch(value):
        return value
    match = _PCI_RE.match(value.strip())
    if match is None:
        raise ValueError(f"{value!r} is not a PCI address such as 0000:18:00.0 (quote it in YAML)")
    domain = int(match.group(1) or "0", 16)
    return f"{domain:04x}:{match.group(2).lower()}:{match.group(3).lower()}.{match.group(4)}"


PciAddress = Annotated[str, BeforeValidator(normalize_pci)]
"""A PCI bus id, normalised to `dddd:bb:dd.f` in lower case."""

Name = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[^\s:]+$")]
"""A device or port name: no blanks, no colon (the colon separates device and port in link ends)."""

PortName = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^\S+$")]

_ENDPOINT_RE = r"^[^\s:]+:\S+$"
Endpoint = Annotated[str, Field(pattern=_ENDPOINT_RE)]
"""One end of a cable: `device:port`, e.g. `node01:mlx5_0` or `leaf-g00-r0:Ethernet8`."""

CREDENTIAL_SCHEMES = ("env", "file", "keyring", "vault", "pass", "ssh-agent", "ssh-key", "none")
_CRED_RE = re.compile(r"^(?:(?:env|file|keyring|vault|pass|ssh-key):\S+|ssh-agent|none)$")


def _check_credential_reference(value: Any) -> Any:
    if isinstance(value, str) and not _CRED_RE.match(value):
        raise ValueError(
            "must be a reference to a secret, never the secret itself: env:VAR, file:PATH, "
            "keyring:NAME, vault:PATH, pass:NAME, ssh-key:PATH, ssh-agent or none"
        )
    return value


CredentialRef = Annotated[str, BeforeValidator(_check_credential_reference)]


class Role(StrEnum):
    """Where a switch sits in the Clos."""

    LEAF = "leaf"
    SPINE = "spine"
    SUPER_SPINE = "super-spine"

    @property
    def tier(self) -> int:
        """1 for leaves, 2 for spines, 3 for super-spines: traffic climbs tiers, then descends."""
        return {Role.LEAF: 1, Role.SPINE: 2, Role.SUPER_SPINE: 3}[self]


class Flavor(StrEnum):
    """The switch operating system, which decides CLI syntax, prompts and port names."""

    SONIC = "sonic"
    NVUE = "nvue"
    EOS = "eos"
    ONYX = "onyx"
    NXOS = "nxos"
    LINUX = "linux"


class FabricKind(StrEnum):
    """The transport the scale-out fabric carries."""

    ROCE = "roce"
    INFINIBAND = "infiniband"
    ETHERNET = "ethernet"


class Cluster(_Model):
    """What the fabric is called and the design targets the validation checks against."""

    name: Name
    description: str = ""
    fabric: FabricKind = FabricKind.ROCE
    max_oversubscription: float = Field(1.0, ge=1.0, le=64.0)
    """Leaf downlink:uplink capacity ratio the design allows; AI fabrics are usually 1:1."""


class Plane(_Model):
    """An independent copy of the scale-out network (multi-plane fabrics)."""

    name: Name
    description: str = ""


class Gpu(_Model):
    """A GPU in a node; `index` is what CUDA and nvidia-smi call it."""

    index: int = Field(ge=0, le=255)
    pci: PciAddress
    numa: int | None = Field(None, ge=0, le=63)
    model: str | None = None
    pcie_switch: str | None = None
    """Name of the PCIe switch the GPU sits under, when known; GPUDirect wants its NIC there too."""


class Nic(_Model):
    """A scale-out NIC port (one RDMA device port, e.g. `mlx5_0`), cabled to one switch port."""

    name: Name
    """RDMA device name as `ibstat` / `ibv_devinfo` show it, e.g. `mlx5_0`."""
    netdev: Name | None = None
    """Kernel network interface, e.g. `enp24s0np0` or `ibp24s0`."""
    ip: str | None = Field(None, pattern=r"^[0-9a-fA-F.:]+$")
    """Address of the RDMA interface (RoCE), which NCCL prints as the peer of a failed send."""
    pci: PciAddress
    numa: int | None = Field(None, ge=0, le=63)
    rail: int = Field(ge=0, le=255)
    plane: Name | None = None
    speed: Speed
    mtu: int | None = Field(None, ge=576, le=65535)
    gpus: tuple[int, ...] | None = None
    """GPU indexes this NIC serves; by default GPUs are paired with NICs in rail order."""
    pcie_switch: str | None = None
    model: str | None = None


class Node(_Model):
    """A GPU server."""

    hostname: Name
    model: str | None = None
    mgmt: str | None = None
    """Address fabtui reaches the node at; the hostname when absent."""
    rack: str | None = None
    nvlink_domain: Name | None = None
    """The multi-node NVLink domain the node's GPUs belong to (a GB200/GB300 NVL72 rack, its
    NVLink switch trays and IMEX domain); nodes with the same value reach each other over
    NVLink. None: the node's NVLink stays inside it (HGX)."""
    gpus: tuple[Gpu, ...] = ()
    nics: tuple[Nic, ...] = ()


class PortSpec(_Model):
    """What a switch port is configured for, where it differs from the switch defaults."""

    speed: Speed | None = None
    mtu: int | None = Field(None, ge=576, le=65535)
    description: str = ""


def _rails(value: Any) -> Any:
    if value is None:
        return ()
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    return value


class Switch(_Model):
    """A leaf, spine or super-spine switch."""

    name: Name
    role: Role
    rail: Annotated[tuple[Annotated[int, Field(ge=0, le=255)], ...], BeforeValidator(_rails)] = ()
    """Rail(s) a leaf serves: one number, or a list for a leaf shared by several rails."""
    plane: Name | None = None
    group: int | None = Field(None, ge=0)
    """Scalable unit / pod index of a leaf: the nodes whose NICs land on it."""
    mgmt: str | None = None
    """Management address for the CLI session."""
    flavor: Flavor = Flavor.SONIC
    credentials: CredentialRef | None = None
    """A reference to the login secret (env:VAR, keyring:NAME, ssh-agent, ...), never the secret."""
    model: str | None = None
    port_speed: Speed | None = None
    """Default speed of every port, unless `ports` says otherwise."""
    mtu: int | None = Field(None, ge=576, le=65535)
    """Default MTU of every port, unless `ports` says otherwise."""
    ports: dict[PortName, PortSpec] = Field(default_factory=dict)

    def port_speed_of(self, port: str) -> int | None:
        """Configured speed of `port`, falling back to the switch default."""
        spec = self.ports.get(port)
        return spec.speed if spec is not None and spec.speed is not None else self.port_speed

    def port_mtu_of(self, port: str) -> int | None:
        """Configured MTU of `port`, falling back to the switch default."""
        spec = self.ports.get(port)
        return spec.mtu if spec is not None and spec.mtu is not None else self.mtu


class Link(_Model):
    """A cable between two ports."""

    a: Endpoint
    b: Endpoint
    speed: Speed | None = None
    mtu: int | None = Field(None, ge=576, le=65535)
    optic: str | None = None
    """Identifier of the optic (transceiver serial or asset tag) carrying this link."""
    cable: str | None = None
    """Cable type or asset id (DAC, AOC, fiber id, ...)."""
    length_m: float | None = Field(None, gt=0, le=10000)
    """Cable length in metres, where known: a lossless port's PFC headroom must hold what is in
    flight over twice this length after XOFF (fabtui/topology/headroom.py)."""
    id: str | None = None

    @field_validator("b")
    @classmethod
    def _not_a_loop(cls, b: str, info: Any) -> str:
        if info.data.get("a") == b:
            raise ValueError("a link cannot connect a port to itself")
        return b

    @property
    def label(self) -> str:
        """How messages name this link."""
        return self.id or f"{self.a} <-> {self.b}"


class Topology(_Model):
    """A whole fabric, explicit: every node, switch and cable listed."""

    cluster: Cluster
    planes: tuple[Plane, ...] = ()
    nodes: tuple[Node, ...] = ()
    switches: tuple[Switch, ...] = ()
    links: tuple[Link, ...] = ()


_SHORT_ETHERNET = re.compile(r"^(?:Et|Eth)(?=\d)")


def long_port_name(name: str) -> str:
    """The port as topologies name it: EOS and NX-OS shorten `Ethernet1/1` to `Et1/1` or
    `Eth1/1` in their tables and take either form on the command line."""
    return _SHORT_ETHERNET.sub("Ethernet", name)
