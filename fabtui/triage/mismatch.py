"""Collective-mismatch reports: two ways the logs say ranks issued different collectives.

- PyTorch's `ProcessGroupWrapper` (`TORCH_DISTRIBUTED_DEBUG=DETAIL`) raises `Detected mismatch
  between collectives on ranks. Rank A is running collective: CollectiveFingerPrint(
  SequenceNumber=S, OpType=X, TensorShape=[...], TensorDtypes=T, ...), but Rank B is running
  collective: CollectiveFingerPrint(...)`: the ranks are ranks of the process group the
  collective ran on (global only in the default group).
- NCCL with `NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL` prints every call: `host:pid:tid [dev] NCCL
  INFO AllReduce: opCount 28c sendbuff ... count 9984512 datatype 7 op 0 root 0 comm 0x...
  [nranks=4] stream ...`. `opCount` counts the calls on one communicator, so processes of one
  communicator (same `nranks`) at the same count must be in the same call; one in another
  operation, count or datatype there has desynchronised. The lines name no rank: the process
  is told by host, pid and CUDA device.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fabtui.model.triage import Evidence

_SIDE = re.compile(r"Rank (\d+) is running (?:inconsistent )?collective:\s*CollectiveFingerPrint\(")
_FIELD = re.compile(r"(SequenceNumber|OpType|TensorShape|TensorDtypes)=(\[[^\]]*\]|[^,\s)]+)")
_COLL = re.compile(r"([A-Za-z0-9_.\-]+):(\d+):\d+ \[(\d+)\] NCCL INFO (\w+): opCount ([0-9a-fA-F]+)"
                   r".*?\bcount (\d+) datatype (\d+)(?: op (\d+))?(?: root (\d+))?"
                   r".*?\[nranks=(\d+)\]")
MAX_COLL_PER_PROCESS = 8
"""opCount lines kept per process and communicator size: the last few are the ones that hang."""


@dataclass(frozen=True)
class Fingerprint:
    """What one rank was running, as a mismatch report printed it."""

    rank: int
    seq: int | None
    op: str | None
    shape: str | None
    dtype: str | None

    def shape_text(self) -> str:
        parts = [self.op or "?"] + [p for p in (self.shape, self.dtype) if p]
        return " ".join(parts)

    def key(self) -> tuple[str | None, str | None, str | None]:
        return self.op, self.shape, self.dtype


@dataclass
class MismatchReport:
    """One `Detected mismatch between collectives` message."""

    sides: list[Fingerprint]
    reporter: int | None
    """The global rank whose log holds it (a launcher prefix), when known."""
    evidence: Evidence


@dataclass(frozen=True)
class CollCall:
    """One NCCL COLL-subsystem call line."""

    host: str
    pid: int
    device: int
    op: str
    op_count: int
    count: int
    datatype: int
    root: int | None
    nranks: int

    @property
    def process(self) -> str:
        return f"{self.host} pid {self.pid} (GPU {self.device})"

    def shape_text(self) -> str:
        return f"{self.op} count {self.count} datatype {self.datatype}"

    def key(self) -> tuple[str, int, int]:
        return self.op, self.count, self.datatype


def fingerprints(text: str) -> list[Fingerprint]:
    """The sides of a `Detected mismatch between collectives` message (empty if none)."""
    if "Detected mismatch between collectives" not in text:
        return []
    out: list[Fingerprint] = []
    sides = list(_SIDE.finditer(text))
    for index, found in enumerate(sides):
        # Each side runs to the next `Rank N is running` (its fields come first, before the
        # nested TensorOptions(...) that only repeat the device).
        end = sides[index + 1].start() if index + 1 < len(sides) else len(text)
        fields = dict(_FIELD.findall(text[found.end():end]))
        seq = fields.get("SequenceNumber")
        out.append(Fingerprint(rank=int(found.group(1)),
                               seq=int(seq) if seq and seq.isdigit() else None,
                               op=fields.get("OpType"), shape=fields.get("TensorShape"),
                               dtype=fields.get("TensorDtypes")))
    return out


def coll_call(text: str) -> CollCall | None:
    """The call an NCCL `COLL` INFO line reports, or None."""
    if ": opCount " not in text:
        return None
    found = _COLL.search(text)
    if found is None:
        return None
    return CollCall(host=found.group(1), pid=int(found.group(2)), device=int(found.group(3)),
                    op=found.group(4), op_count=int(found.group(5), 16),
                    count=int(found.group(6)), datatype=int(found.group(7)),
                    root=int(found.group(9)) if found.group(9) else None,
                    nranks=int(found.group(10)))
