"""NCCL INFO lines: the init facts and tallies they give (ranks, NET devices, channels, settings).

Most INFO lines are only counted or aggregated (transports, GPUDirect RDMA per NET device,
channel counts, NCCL settings); Init COMPLETE lines (a sample of them) and NET plugin load
failures become events. Each reader returns what reading the same line again would do (a
`Replay`), and messages whose reading again would change nothing are remembered as inert.
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache

from fabtui.parsers.nccl_log._records import Event, Interface, NetDevice, Rank
from fabtui.parsers.nccl_log._state import (
    DROPPED_INFO,
    GDR_ENABLED,
    INERT_MAX,
    INFO,
    INIT_DROPPED,
    MESSAGE_MAX,
    ChannelFacts,
    Replay,
    State,
    add_event,
    add_host,
    int_group,
    line_prefix,
    note_host,
    note_version,
    plain_prefix,
)
from fabtui.parsers.nccl_log._warn import event_from_prefix

_LOADED_PLUGIN = re.compile(r"[Ll]oaded net plugin\s+(.+?)\s*$")
_NET_USING = re.compile(r"^NET/(\w+)\s*:\s*Using\s+(.*)$")
_NET_ENTRY = re.compile(r"\[(\d+)\]([^\s\[;]+)")
_IB_ENTRY = re.compile(r"^([^:]+):(\d+)/(\S+)$")
_SOCK_ENTRY = re.compile(r"^([^:]+):(.+?)(?:<\d+>)?$")
_OOB = re.compile(r"OOB\s+([^:\s]+):(\S+?)(?:<\d+>)?(?:\s|$)")
_BOOTSTRAP_USING = re.compile(r"^Bootstrap\s*:\s*Using\s+(?:\[\d+\])?([^:\s]+):(\S+?)(?:<\d+>)?"
                              r"(?:\s|$)")
_CHANNEL_NET = re.compile(r":\s*(\d+)(?:\[\d+\])?\s*->\s*(\d+)(?:\[\d+\])?\s*"
                          r"(?:\[(send|receive)\]\s*)?via NET/([^/]+)/(\d+)(?:\(\d+\))?(\S*)")
_RING_DEF = re.compile(r"^Channel (\d+)(?:/(\d+))? :[\s\d]+$")
_CHANNEL_COUNTS = re.compile(r"(\d+) (coll|collnet|nvls|p2p) channels(?!,? per)|"
                             r"(\d+) p2p channels per peer")
_INIT = re.compile(r"\brank (\d+) nranks (\d+)", re.IGNORECASE)
_COMM_TOPO = re.compile(r"^comm (0x[0-9a-fA-F]+) rank (\d+) nRanks (\d+) nNodes (\d+) "
                        r"localRanks (\d+) localRank (\d+)(?: MNNVL (\d+))?")
"""`comm 0x.. rank 0 nRanks 4 nNodes 1 localRanks 4 localRank 0 MNNVL 1`: NVIDIA/nccl `src/init.cc`
`INFO(NCCL_INIT, "comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d")`;
real lines in NVIDIA/nccl#2303 (2.30.7) and the 2.27.5 sample; older logs end at localRank."""
_INIT_CANONICAL = re.compile(r"(?:ncclCommInitRank\w* )?comm (0x[0-9a-fA-F]+) rank (\d+) "
                             r"nranks (\d+) cudaDev (\d+)(?: nvmlDev \d+)? busId (\w+) "
                             r"commId (0x[0-9a-fA-F]+)\b")
"""NCCL's own Init START / COMPLETE message (`src/init.cc`: `ncclCommInitRank comm %p rank %d
nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init START`): one match for what the
five searches of `_init_facts` find in any other wording."""
_CUDA_DEV = re.compile(r"cudaDev (\d+)")
_BUS_ID = re.compile(r"busId (\w+)")
_COMM_ID = re.compile(r"commId (0x[0-9a-fA-F]+)")
_COMM_PTR = re.compile(r"\bcomm (0x[0-9a-fA-F]+)")
_ENV = re.compile(r"^(NCCL_\w+) set (?:by environment )?to (.*?)\.?\s*$")
_RING_GDR = re.compile(r"use ring PXN \d+ GDR (\d)")
_OFI_VERSION = re.compile(r"NET/OFI (?:Using|Initializing) (aws-ofi-nccl \S+)")
_OFI_PROVIDER = re.compile(r"NET/OFI Selected [Pp]rovider is ([^,(]+?)\s*(?:[,(]|$)")
_CACHE_MAX = 200000


def info_line(state: State, number: int, line: str, pos: int, msg: str) -> Replay | None:
    """Dispatch an INFO line (`msg`: its message, not a channel line, counted by the caller) on
    its message start; most lines are only tallied. Returns what reading the same line again
    would do (None: it must be read again)."""
    if ": opCount " in msg:
        name = msg.split(":", 1)[0]
        state.calls[name] = state.calls.get(name, 0) + 1
        return Replay(info=1, call=name)
    if "Init " in msg and ("Init COMPLETE" in msg or "Init START" in msg):
        return _init_line(state, number, line, pos, msg)
    if msg.startswith("NCCL version"):
        note_version(state, msg)
        note_host(state, line, pos)
        _inert(state, msg, notes_host=True)
    elif msg.startswith("NET/"):
        return _net_info(state, number, line, pos, msg)
    elif msg.startswith("Bootstrap"):
        _bootstrap_info(state, line, pos, msg)
    elif msg.startswith("NCCL_") and " set " in msg:
        env = _ENV.match(msg)
        if env and env.group(1) not in state.env:
            state.env[env.group(1)] = env.group(2)
        _inert(state, msg)  # the first setting of a variable is the one kept
    else:
        return _misc_info(state, line, pos, msg)
    return INFO


def channel_line(state: State, msg: str, cached: ChannelFacts | None) -> None:
    """Tally a channel connection line; identical lines (common) are read once and cached
    (`cached`: what the cache holds for `msg`)."""
    if cached is None:
        cached = _read_channel(state, msg)
        if len(state.channel_cache) < _CACHE_MAX:
            state.channel_cache[msg] = cached
    name, key, owner = cached
    if name is None:
        return
    state.channel_transports[name] = None
    if key is None:
        return
    use = state.channel_use.get(key)
    if use is None:
        use = state.channel_use[key] = [0, set()]
    use[0] += 1
    if owner is not None:
        use[1].add(owner)


def _read_channel(state: State, msg: str) -> ChannelFacts:
    via = msg.find(" via ")
    if via < 0:
        ring = _RING_DEF.match(msg)
        if ring:
            total = int(ring.group(2)) if ring.group(2) else int(ring.group(1)) + 1
            if total > state.channels.get("ring", 0):
                state.channels["ring"] = total
        return None, None, None
    parts = msg[via + 5:].split("/", 2)
    name = f"{parts[0]}/{parts[1]}" if parts[0] in ("NET", "P2P") and len(parts) > 1 \
        else parts[0]
    match = _CHANNEL_NET.search(msg) if parts[0] == "NET" else None
    if match is None:
        return name.strip(), None, None
    src, dst, direction, net, nic, rest = match.groups()
    owner = int(dst) if direction == "receive" else int(src)
    return name.strip(), (net, int(nic), "GDRDMA" in rest), owner


def _init_line(state: State, number: int, line: str, pos: int, msg: str) -> Replay | None:
    """Init START / COMPLETE: the rank map (rank -> host, pid, GPU) and init_complete events."""
    prefix = plain_prefix(line[:pos])
    host = prefix.host
    if host:
        state.hosts.setdefault(host, None)
    facts = _init_facts(msg)
    if facts is None:
        return INFO
    rank, nranks, device, bus, comm, pointer = facts
    seen = (rank, nranks, host, prefix.pid)
    key = (seen, comm)
    ranks = state.ranks
    if key not in ranks:
        # The `comm 0x.. rank R nRanks N nNodes ..` line of the same communicator came first
        # (no Init START in the log): replace its entry, which only knew the comm pointer. No
        # replay is made wrong by this: reading that comm line again would not add its entry
        # back (`rank_seen` holds the rank), nor would reading this line again change anything.
        if pointer is not None:
            ranks.pop((seen, pointer), None)
        state.rank_seen.add(seen)
        ranks[key] = Rank(rank, nranks, host, prefix.pid, device, bus, comm)
    if prefix.pid is not None:
        known = state.pid_rank.get((prefix.host, prefix.pid))
        if known is None or nranks > known[0]:
            pair = (nranks, rank)
            state.pid_rank[(prefix.host, prefix.pid)] = state.rank_pairs.setdefault(pair, pair)
    if state.nranks is None or nranks > state.nranks:
        state.nranks = nranks
    if "Init COMPLETE" in msg:
        # One per rank and communicator: a big job prints thousands. Keep a sample so they
        # never crowd out the failures that matter (`max_events` caps all events together).
        state.init_events += 1
        if state.init_events > state.init_events_max:
            state.dropped += 1
            return INIT_DROPPED
        added = add_event(state, Event(
            type="init_complete", rank=rank, rank_source="init", host=prefix.host, seq=None,
            op=None, timeout_ms=None, peer=None, status=None, line=number,
            message=msg[:MESSAGE_MAX], pid=prefix.pid,
            device=device if device is not None else prefix.device, nranks=nranks,
            bus_id=bus, comm_id=comm))
        return None if added else INIT_DROPPED
    return INFO


def _init_facts(msg: str) -> tuple[int, int, int | None, str | None, str | None, str | None] \
        | None:
    """An Init START / COMPLETE message's rank, nranks, CUDA device, bus id, comm id (else its
    pointer) and comm pointer; None when it names no rank. Not cached: each message names its
    communicator's pointer and id, new in every process and restart, so a cache of them only
    cost its upkeep (6% of a big job's parse); a line read again is replayed, not re-read."""
    canonical = _INIT_CANONICAL.match(msg)
    if canonical is not None:  # (every field where each search below would find it first)
        pointer, rank, nranks, device, bus, comm_id = canonical.groups()
        return (_number(rank), _number(nranks), int(device), sys.intern(bus),
                sys.intern(comm_id), pointer)
    init = _INIT.search(msg)
    if init is None:
        return None
    comm_pointer = _COMM_PTR.search(msg)
    pointer = comm_pointer.group(1) if comm_pointer else None
    comm_id = _COMM_ID.search(msg)
    # Each rank entry keeps these (hundreds of thousands in a big job's log): the commId
    # and bus id strings, and the numbers, are one object each, not one per message read.
    bus = _bus_id(msg)
    return (_number(init.group(1)), _number(init.group(2)), int_group(_CUDA_DEV.search(msg)),
            None if bus is None else sys.intern(bus),
            sys.intern(comm_id.group(1)) if comm_id else pointer, pointer)


def _bus_id(msg: str) -> str | None:
    match = _BUS_ID.search(msg)
    return match.group(1) if match else None


@lru_cache(maxsize=65536)
def _number(text: str) -> int:
    """`int(text)`, one object per value (rank numbers and sizes, held by every rank entry)
    for the 65,536 texts read last: a pure function's cache, so no parse sees another's
    state (a module-level pool that parses filled was shared by every parse)."""
    return int(text)


def _net_info(state: State, number: int, line: str, pos: int, msg: str) -> Replay | None:
    if not msg.startswith("NET/Plugin: Failed to find"):
        note_host(state, line, pos)
    using = _NET_USING.match(msg)
    if using:
        _net_using(state, line, pos, using.group(1), using.group(2))
        return INFO
    if msg.startswith("NET/Plugin"):
        lowered = msg.lower()
        if "could not find" in lowered or "no plugin found" in lowered \
                or "plugin load returned" in lowered or "failed to load" in lowered \
                or "dlopen" in lowered:
            capped = len(state.events) >= state.max_events
            event = event_from_prefix(state, number, line, pos, "plugin_not_found", msg)
            return DROPPED_INFO if capped else Replay(info=1, event=event) if event else None
        loaded = _LOADED_PLUGIN.search(msg)
        if loaded:
            state.plugins[loaded.group(1)] = None
        _inert(state, msg, notes_host=not msg.startswith("NET/Plugin: Failed to find"))
        return INFO
    if msg.startswith("NET/OFI"):
        version = _OFI_VERSION.search(msg)
        if version:
            state.plugins[version.group(1)] = None
        provider = _OFI_PROVIDER.search(msg)
        if provider and state.ofi_provider is None:
            state.ofi_provider = provider.group(1)
        _inert(state, msg, notes_host=True)  # the plugin and the first provider are kept
        return INFO
    if "GPU Direct RDMA" in msg:
        return _gdr_line(state, msg)  # counted on every line
    _inert(state, msg, notes_host=True)
    return INFO


def _net_using(state: State, line: str, pos: int, transport: str, rest: str) -> None:
    host = line_prefix(line[:pos]).host
    if host:
        _per_host(state, line[pos + 10:].strip())
        read = (host, transport, rest)
        if read in state.host_read:
            return
        if len(state.host_read) < INERT_MAX:
            state.host_read.add(read)
    add_host(state, host)
    devices, _, oob = rest.partition(";")
    if "[RO]" in devices:
        state.relaxed_ordering = True
    # Every process prints the same device list: parse each distinct list once.
    keys = state.using_cache.get((transport, devices))
    if keys is None:
        keys = []
        for index, entry in _NET_ENTRY.findall(devices):
            device = _net_device(transport, int(index), entry)
            if device is None:
                continue
            found: tuple[object, ...] = (device.transport, device.index, device.device,
                                         device.port, device.link_layer, device.address)
            state.net_devices.setdefault(found, device)
            keys.append(found)
        state.using_cache[(transport, devices)] = keys
    for key in keys:
        known = state.net_devices[key]
        if host and (id(known), host) not in state.host_seen:
            state.host_seen.add((id(known), host))
            known.hosts.append(host)
    for interface, address in _OOB.findall(oob):
        _add_interface(state, state.oob, interface, address, host)


def _net_device(transport: str, index: int, entry: str) -> NetDevice | None:
    if entry == "RO":
        return None
    ib = _IB_ENTRY.match(entry)
    if ib:
        return NetDevice(transport=transport, index=index, device=ib.group(1),
                         port=int(ib.group(2)), link_layer=ib.group(3))
    sock = _SOCK_ENTRY.match(entry)
    if sock:
        return NetDevice(transport=transport, index=index, device=sock.group(1), port=None,
                         link_layer=None, address=sock.group(2))
    return NetDevice(transport=transport, index=index, device=entry, port=None,
                     link_layer=None)


def _add_interface(state: State, target: dict[tuple[str, str], Interface], interface: str,
                   address: str, host: str | None) -> None:
    known = target.setdefault((interface, address),
                              Interface(interface=interface, address=address))
    if host and (id(known), host) not in state.host_seen:
        state.host_seen.add((id(known), host))
        known.hosts.append(host)


def _bootstrap_info(state: State, line: str, pos: int, msg: str) -> None:
    using = _BOOTSTRAP_USING.match(msg)
    if using is None:
        _inert(state, msg)  # `Bootstrap timings ...`, say: read for nothing
        return
    host = line_prefix(line[:pos]).host
    if host:
        _per_host(state, msg)
        read = (host, msg)
        if read in state.host_read:
            return  # this host's interface, already noted
        if len(state.host_read) < INERT_MAX:
            state.host_read.add(read)
    add_host(state, host)
    _add_interface(state, state.bootstrap, using.group(1), using.group(2), host)


def _gdr_line(state: State, msg: str) -> Replay:
    if "Disabled" in msg:
        if len(state.gdr_disabled) < 50:
            state.gdr_disabled[msg] = None
    elif "Enabled" in msg:
        state.gdr_enabled += 1
        return GDR_ENABLED
    return INFO


def _per_host(state: State, msg: str) -> None:
    """Remember that reading `msg` again on a host whose line with `msg` was read would change
    nothing (each process of a node prints the same `NET/IB : Using ...`)."""
    if len(state.per_host) < INERT_MAX:
        state.per_host.add(msg)


def _inert(state: State, msg: str, *, notes_host: bool = False) -> None:
    """Remember that reading `msg` again would change nothing but, with `notes_host`, note its
    line's host (the scan then does only that)."""
    if len(state.inert) < INERT_MAX:
        state.inert[msg] = notes_host


def _misc_info(state: State, line: str, pos: int, msg: str) -> Replay:
    # Branches that note the line's host or count lines return; the others (maxima, sets,
    # first values) read the same message to the same effect, so it is remembered as inert.
    if "coll channels" in msg or "p2p channels" in msg:
        for number, kind, per_peer in _CHANNEL_COUNTS.findall(msg):
            name, value = ("p2p_per_peer", per_peer) if per_peer else (kind, number)
            if int(value) > state.channels.get(name, -1):
                state.channels[name] = int(value)
    elif msg.startswith("comm ") and "nRanks" in msg:
        _comm_topology(state, line, pos, msg)
        return INFO
    elif msg.startswith("Connected all rings") and "GDR" in msg:
        gdr = _RING_GDR.search(msg)
        if gdr:
            state.ring_gdr.add(int(gdr.group(1)))
    elif msg.startswith("GPU Direct RDMA"):
        return _gdr_line(state, msg)
    elif msg.startswith("Using network "):
        state.networks[msg[len("Using network "):].strip()] = None
    elif msg.startswith("cudaDriverVersion") and state.cuda_driver is None:
        note_host(state, line, pos)
        value = msg.split()[-1]
        state.cuda_driver = int(value) if value.isdigit() else None
        return INFO
    elif msg.startswith("Successfully loaded external plugin"):
        state.plugins[msg.rsplit(" ", 1)[-1]] = None
    elif "NCCL version" in msg:
        note_version(state, msg)
    _inert(state, msg)
    return INFO


def _comm_topology(state: State, line: str, pos: int, msg: str) -> None:
    topo = _topology_facts(msg)
    if topo is None:
        return
    pointer, rank, nranks, facts, mnnvl = topo
    nodes, local_ranks, _ = facts
    prefix = plain_prefix(line[:pos])
    # A big job's log has a communicator entry per process and restart (hundreds of
    # thousands): its key is one tuple for both tables, and its values come from a pool.
    where = (prefix.host, prefix.pid, pointer)
    shared = state.shared
    facts = shared.setdefault(facts, facts)
    if mnnvl is not None:
        value = (nranks, mnnvl)
        state.mnnvl[where] = shared.setdefault(value, value)
    add_host(state, prefix.host)
    if state.topo.setdefault(where, facts) != facts:
        state.topo[where] = facts
        state.replay_broken = True
    # The largest seen (plain comparisons: `max` costs a call, on every comm line).
    if state.n_nodes is None or nodes > state.n_nodes:
        state.n_nodes = nodes
    if state.local_ranks is None or local_ranks > state.local_ranks:
        state.local_ranks = local_ranks
    if state.nranks is None or nranks > state.nranks:
        state.nranks = nranks
    seen = (rank, nranks, prefix.host, prefix.pid)
    if seen not in state.rank_seen:
        state.rank_seen.add(seen)
        key = (seen, pointer)  # (the `seen` tuple shared, not a second one per rank)
        state.ranks[key] = Rank(rank, nranks, prefix.host, prefix.pid, prefix.device, None,
                                pointer)
    if prefix.pid is not None:
        known = state.pid_rank.get((prefix.host, prefix.pid))
        if known is None or nranks > known[0]:
            pair = (nranks, rank)
            state.pid_rank[(prefix.host, prefix.pid)] = state.rank_pairs.setdefault(pair, pair)


def _topology_facts(msg: str) -> tuple[str, int, int, tuple[int, int, int], bool | None] \
        | None:
    """A `comm 0x.. rank R nRanks N nNodes ..` message's comm pointer, rank, nranks, (nNodes,
    localRanks, localRank) and MNNVL (None when not printed); None when it is not one. Not
    cached, as `_init_facts`."""
    topo = _COMM_TOPO.match(msg)
    if topo is None:
        return None
    pointer, rank, nranks, nodes, local_ranks, local_rank, mnnvl = topo.groups()
    return (pointer, _number(rank), _number(nranks),
            (int(nodes), int(local_ranks), int(local_rank)),
            None if mnnvl is None else mnnvl != "0")
