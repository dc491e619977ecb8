"""Where the logs put each rank, and where a rank without a log most likely ran.

NCCL's init lines say each logged rank's host and CUDA device. A rank that left no log (its
process died, its file is missing) has no such line; when every logged rank sits in a regular
layout (ranks `k*L .. k*L+L-1` on one host each, rank `r` on device `r % L`, as `torchrun` and
`srun` place them), the missing rank's host is the one its block's other ranks ran on. That is
an inference, and callers mark it as one; an irregular layout infers nothing.

Addresses (the IPs RAS prints as `node`, a peer's IP or IPv4-mapped GID) are turned into host
names only through what is known: the OOB / bootstrap addresses the logs print and the
topology's NIC and management addresses. An address nothing names stays an address, never a
host.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True)
class Layout:
    """A regular rank layout: `per_node` consecutive ranks per host, rank `r` on device
    `r % per_node`; `hosts` maps block number (`rank // per_node`) to its host."""

    per_node: int
    hosts: dict[int, str]

    def place(self, rank: int) -> tuple[str, int] | None:
        """(host, device) of `rank`, when its block has a known host."""
        host = self.hosts.get(rank // self.per_node)
        return (host, rank % self.per_node) if host is not None else None

    def rank_of(self, host: str, device: int) -> int | None:
        """The rank this layout puts on `host`'s device `device`."""
        if not 0 <= device < self.per_node:
            return None
        for block, known in self.hosts.items():
            if known == host:
                return block * self.per_node + device
        return None


def regular_layout(hosts: dict[int, str], devices: dict[int, int]) -> Layout | None:
    """The layout `hosts` (rank -> host) and `devices` (rank -> CUDA device) follow, or None
    when they follow none (fewer than two hosts, a host holding ranks of two blocks, a block on
    two hosts, a device that is not `rank % per_node`)."""
    if len(set(hosts.values())) < 2:
        return None
    per_node = max(Counter(hosts.values()).values())
    blocks: dict[int, str] = {}
    owners: dict[str, int] = {}
    for rank, host in hosts.items():
        block = rank // per_node
        if blocks.setdefault(block, host) != host or owners.setdefault(host, block) != block:
            return None
        device = devices.get(rank)
        if device is not None and device != rank % per_node:
            return None
    return Layout(per_node=per_node, hosts=blocks)


def as_ip(text: str | None) -> str | None:
    """The IPv4/IPv6 address `text` is (an IPv4-mapped GID as its IPv4), or None."""
    if not text:
        return None
    try:
        address = ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(address)


def host_of(name: str | None, *known: dict[str, str]) -> str | None:
    """`name` as a host name: a name as it is, an address through the `known` address -> host
    maps (first match wins), else None (an address is never a host name)."""
    ip = as_ip(name)
    if ip is None:
        return name or None
    for table in known:
        if ip in table:
            return table[ip]
    return None
