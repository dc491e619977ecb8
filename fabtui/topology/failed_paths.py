"""Failed RDMA paths from the IB completion errors a hung job logged: the NIC they meet at, or the
switch they chain across.

One rule for every reader of those lines: `fabtui triage nccl` (`fabtui/triage/network.py`) and
the `nccl-log` evaluator the hang runbook reads (`suspect_nic`, `suspect_switch`).

What a completion error (`NET/IB : Got completion from peer P<port> with status=N ... localGid
L remoteGids R`) names, NCCL `net_ib` in every release since 2.12:

- `peer` is the address of the connection's socket (`ncclSocketGetAddr(&comm->sock)`): the far
  host's OOB interface (`NCCL_SOCKET_IFNAME`, printed at init as `OOB bond0:10.40.0.4`), not its
  RDMA NIC. It names a host, never a rail NIC.
- With RoCE, `localGid` and `remoteGids` are the GIDs of the two NICs of the failed path; an
  IPv4-mapped GID is the NIC's address. Only they name NICs.
- Status 5 (`IBV_WC_WR_FLUSH_ERR`) is teardown: a queue pair already in error flushes its posted
  work requests, on every connection of a rank that aborts. It names no failed path.

The rule (`path_groups`):

1. a path's ends are the addresses of the local and remote GIDs; where no remote GID is printed
   (InfiniBand, or an IB plugin that prints none) the peer stands for the far end: a host;
2. flushes are left out; the far end's report of a path already seen is that path again; each
   reporter (rank, host, HCA) counts with its first error;
3. paths that share an address are one group, chained transitively;
4. the group's NIC is the address in every path of it, led by the report made from it; a lone
   path's is the end that reported it;
5. a group whose paths chain over three or more addresses with none in all of them is no NIC's
   fault (`PathGroup.chained`): what its paths share is the switch they all cross (in a
   rail-optimised fabric, the rail's leaf: `shared_switch`), or PFC on it. The lines cannot tell
   which, nor a cause the NICs share (a firmware or driver pushed to all of them).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from fabtui.topology.graph import FabricGraph

FLUSHED = 5
"""`IBV_WC_WR_FLUSH_ERR` (rdma-core libibverbs/verbs.h): teardown after a QP went to error."""
CHAIN_MIN = 3
"""Addresses a group of paths must chain over, with none common to all, to be no NIC's fault."""


class CompletionError(Protocol):
    """What a failed-path rule reads of a logged failure (a parsed NCCL event, a triage
    warning): its type, status and the addresses it prints."""

    @property
    def type(self) -> str: ...

    @property
    def status(self) -> int | None: ...

    @property
    def local_gid(self) -> str | None: ...

    @property
    def remote_gid(self) -> str | None: ...

    @property
    def peer(self) -> str | None: ...


E = TypeVar("E", bound=CompletionError)


def address(text: str | None) -> str | None:
    """The IP an address or a GID names (`::ffff:10.0.1.5` -> `10.0.1.5`); other text as is."""
    if not text:
        return None
    bare = text.strip("[]")
    try:
        parsed = ipaddress.ip_address(bare)
    except ValueError:
        return bare
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    return str(parsed)


def is_flush(error: CompletionError) -> bool:
    """A flushed work request (status 5 of an IB completion error): teardown, no path."""
    return error.type == "ib_completion_error" and error.status == FLUSHED


def far_end(error: CompletionError) -> str | None:
    """The far end of the failed path: the remote GID's address (a NIC), else the peer's (the
    far host's socket address)."""
    return address(error.remote_gid) or address(error.peer)


def ends(error: CompletionError) -> frozenset[str]:
    """The addresses of the failed path's two ends, as far as the line prints them."""
    return frozenset(filter(None, (address(error.local_gid), far_end(error))))


@dataclass
class PathGroup(Generic[E]):
    """Failed paths that share an address: one fault."""

    members: list[E]
    """The first failure of each reporter, the lead first (see `nic`), else in logged order."""
    paths: list[frozenset[str]] = field(default_factory=list)
    """Each member's path ends, in `members` order."""
    nic: str | None = None
    """The address in every path (a lone path: the end that reported it), or None."""

    @property
    def addresses(self) -> list[str]:
        """Every address the group's paths hold, sorted."""
        return sorted({a for path in self.paths for a in path})

    @property
    def reported_from_nic(self) -> bool:
        """The lead member reported from the group's NIC (its local GID is that address)."""
        return self.nic is not None and address(self.members[0].local_gid) == self.nic

    @property
    def chained(self) -> bool:
        """Paths chained over three or more addresses with none in all of them."""
        return self.nic is None and len(self.addresses) >= CHAIN_MIN


def path_groups(errors: Iterable[E], reporter: Callable[[E], Hashable]) -> list[PathGroup[E]]:
    """The failed paths of `errors` (in the order they were logged), grouped by the rule of the
    module docstring; `reporter` says which errors come from one reporter (rank, host, HCA)."""
    firsts: dict[Hashable, E] = {}
    seen: list[frozenset[str]] = []
    for error in errors:
        if is_flush(error):
            continue
        path = ends(error)
        if path and path in seen:
            continue  # the far end reporting the same path
        key = reporter(error)
        if key not in firsts:
            firsts[key] = error
            seen.append(path)
    chains: list[tuple[set[str], list[E], list[frozenset[str]]]] = []
    for error, path in zip(firsts.values(), seen, strict=True):
        joined = [chain for chain in chains if chain[0] & path]
        if not joined:
            chains.append((set(path), [error], [path]))
            continue
        head = joined[0]
        head[0].update(path)
        head[1].append(error)
        head[2].append(path)
        for other in joined[1:]:  # a path that links two chains makes them one
            head[0].update(other[0])
            head[1].extend(other[1])
            head[2].extend(other[2])
            chains.remove(other)
    logged = {id(error): i for i, error in enumerate(firsts.values())}
    return [_group(members, paths, logged) for _, members, paths in chains]


def _group(members: list[E], paths: list[frozenset[str]], logged: dict[int, int]
           ) -> PathGroup[E]:
    """One chain as a group: its NIC, the report made from it first, else in logged order."""
    if len(members) == 1:
        own = address(members[0].local_gid)
        return PathGroup(members, paths, own if own in paths[0] else None)
    common = set.intersection(*(set(p) for p in paths))
    nic = next(iter(common)) if len(common) == 1 else None
    # The report made from the NIC every path meets at leads (the others are its symptoms);
    # otherwise, and after it, the order they were logged in (merged chains interleave).
    pairs = sorted(zip(members, paths, strict=True),
                   key=lambda mp: (nic is None or address(mp[0].local_gid) != nic,
                                   logged[id(mp[0])]))
    return PathGroup([m for m, _ in pairs], [p for _, p in pairs], nic)


def shared_switch(graph: FabricGraph, nics: Iterable[str]) -> tuple[str | None, int | None]:
    """The one switch every NIC of `nics` (addresses, or `node:nic`) is cabled to, and their
    rail; None for what they do not share or the topology does not know."""
    switches: set[str] = set()
    rails: set[int | None] = set()
    for nic in nics:
        found = graph.nic_ips.get(nic)
        attachment = graph.attachment_of(f"{found[0]}:{found[1]}" if found else nic)
        if attachment is None:
            return None, None
        switches.add(attachment.switch)
        rails.add(attachment.nic.rail)
    switch = next(iter(switches)) if len(switches) == 1 else None
    return switch, next(iter(rails)) if len(rails) == 1 else None
