"""The simulator's long-lived server: answers the thin device clients (`fabtui.sim.client`).

One server per interpreter and version of the simulator's code serves every state file: it
imports the simulator once and keeps each fabric's `Sim` built until its state file changes,
so a node command costs milliseconds and a switch session no start-up. Each connection is one
node command or one switch session, in its own thread; the simulated device's latency is slept
in that thread (the client waits, and can be killed, meanwhile).

Side effects: listens on a Unix socket (a private folder under the temporary directory),
detaches from its starter (its own session, reparented), and exits by itself after
`IDLE_S` seconds without any connection open, or when its socket is removed or replaced.
A server on its way out first removes its socket (a new client starts a new server), then
serves to their end the connections it had already been given: it never drops one.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import socket
import socketserver
import struct
import sys
import threading
import time
import traceback
from pathlib import Path

from fabtui.errors import InputError
from fabtui.sim import latency
from fabtui.sim.client import decode_request
from fabtui.sim.core import Sim
from fabtui.sim.state import NO_STATE, TIME_VAR, FabricCache, SimState, sim_time
from fabtui.sim.switch_session import StreamTerminal

IDLE_S = float(os.environ.get("FABTUI_SIM_SERVER_IDLE", "20"))
"""Seconds without an open connection after which the server exits."""
_LOCK = threading.RLock()
"""The simulator's code is not written for threads: building a fabric or computing a reply
holds this lock (re-entrant: a session's reply takes the fabric under it)."""


FABRICS = FabricCache()


def frame(kind: bytes, payload: bytes) -> bytes:
    """One frame of the protocol (see `fabtui.sim.client`)."""
    return kind + struct.pack(">I", len(payload)) + payload


class Request:
    """One client's request, read from the start of its connection."""

    def __init__(self, payload: bytes) -> None:
        self.device, self.name, self.state, self.env, self.skew, self.argv = \
            decode_request(payload)

    def delay(self) -> float:
        """The device's added latency, as the client's environment configures it."""
        return latency.parse(self.env.get(latency.LATENCY_VAR, "")).of(self.name)

    def now(self, state: SimState) -> float:
        """Simulation time for this request (pinned by the client's `FABTUI_SIM_TIME`), moved on
        by the skew its probe skipped."""
        return sim_time(state, self.env.get(TIME_VAR), self.skew)


class Handler(socketserver.StreamRequestHandler):
    """Serves one connection: a node command or a switch session."""

    server: Server

    def handle(self) -> None:
        self.server.opened()
        try:
            self._serve()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client was killed (a cancelled command): nothing to answer
        except Exception:  # a bug in the simulator: say so on the device's stderr
            with contextlib.suppress(OSError):
                self.send(b"e", traceback.format_exc().encode())
                self.send(b"x", b"1")
        finally:
            self.server.closed()

    def send(self, kind: bytes, payload: bytes) -> None:
        """Write one frame to the client."""
        self.connection.sendall(frame(kind, payload))

    def _serve(self) -> None:
        size = struct.unpack(">I", self.rfile.read(4))[0]
        request = Request(self.rfile.read(size))
        try:
            delay = request.delay()
            fabric = _fabric(request.state)
        except InputError as exc:
            self._fail(exc)
            return
        if fabric is None:
            self.send(b"e", f"{request.state}: {NO_STATE}\n".encode())
            self.send(b"x", b"2")
            return
        if request.device == "switch":
            self._switch(request, delay)
            return
        if not self.pause(delay):
            return
        with _LOCK:
            fabric = _fabric(request.state) or fabric
            state, sim = fabric
            from fabtui.sim.node_commands import answer

            # A counter clear (`mlxlink --pc`) is written to the state file, as in-process.
            out, err, status = answer(sim, Path(request.state), request.name, request.argv,
                                      request.now(state))
        if out:
            self.send(b"o", out.encode())
        if err:
            self.send(b"e", err.encode())
        self.send(b"x", str(status).encode())

    def pause(self, seconds: float) -> bool:
        """Wait `seconds` (the device's latency); False as soon as the client has gone.

        A killed client (a cancelled command) must not hold a thread, or keep the server
        from going idle, for the rest of a long latency.
        """
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([self.connection], [], [], remaining)
            if ready:
                try:
                    if not self.connection.recv(1, socket.MSG_PEEK):
                        return False
                except OSError:
                    return False
                time.sleep(remaining)  # keys typed ahead in a session: they wait their turn
                return True
        return True

    def _fail(self, exc: InputError) -> None:
        self.send(b"e", "".join(f"{p}\n" for p in exc.problems).encode())
        self.send(b"x", b"2")

    def _switch(self, request: Request, delay: float) -> None:
        from fabtui.sim.switch_session import serve

        term = SocketTerminal(self)
        status = serve(Path(request.state), term, request.name, delay,
                       fabric=lambda: _fabric(request.state),
                       now=lambda state: request.now(state) + term.skew, lock=_LOCK,
                       shut_clock=request.now)
        self.send(b"x", str(status).encode())


def _fabric(path: str) -> tuple[SimState, Sim] | None:
    with _LOCK:
        return FABRICS.get(path)


class SocketTerminal(StreamTerminal):
    """A switch session's terminal: the client's keys and frames over its connection."""

    def __init__(self, handler: Handler) -> None:
        super().__init__()
        self.handler = handler

    def write(self, text: str) -> None:
        """Frames of stdout to the client."""
        self.handler.send(b"o", text.encode())

    def error(self, text: str) -> None:
        """Frames of stderr to the client."""
        self.handler.send(b"e", text.encode())

    def pause(self, seconds: float) -> bool:
        """The device's latency; False when the client has gone meanwhile."""
        return self.handler.pause(seconds)

    def read(self) -> bytes:
        """One byte the client typed (b'' at its end)."""
        return self.handler.rfile.read(1)


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """Threads per connection; counts open connections to know when it is idle.

    The connection threads are joined on close: a session accepted while the server was
    stopping is served to its end, not cut off by the process exiting under it.
    """

    daemon_threads = False
    block_on_close = True

    def __init__(self, path: str) -> None:
        super().__init__(path, Handler)
        self.path = path
        self.inode = os.stat(path).st_ino
        self._open = 0
        self._last = time.monotonic()
        self._count = threading.Lock()

    def opened(self) -> None:
        """A connection started."""
        with self._count:
            self._open += 1

    def closed(self) -> None:
        """A connection ended."""
        with self._count:
            self._open -= 1
            self._last = time.monotonic()

    def should_stop(self) -> bool:
        """Idle for `IDLE_S`, or the socket is no longer ours (removed, or a new server's)."""
        try:
            if os.stat(self.path).st_ino != self.inode:
                return True
        except OSError:
            return True
        with self._count:
            return self._open == 0 and time.monotonic() - self._last > IDLE_S

    def retire(self) -> None:
        """Remove the socket when it is still ours: from now on a client that connects
        reaches a new server, never this one on its way out."""
        with contextlib.suppress(OSError):
            if os.stat(self.path).st_ino == self.inode:
                os.unlink(self.path)

    def close_serving_all(self) -> None:
        """Stop listening, once every connection already given to this server is served.

        The connections queued before `retire` that `serve_forever` did not take are taken
        now: closing the listening socket over them would reset them, and the client would
        read a healthy switch as a dropped connection. Returns when the last one has ended.
        """
        self.retire()
        self._drain()
        self.server_close()  # joins the connection threads

    def _drain(self) -> None:
        self.socket.setblocking(False)
        while True:
            try:
                request, address = self.socket.accept()
            except OSError:  # BlockingIOError: none left
                return
            request.setblocking(True)
            self.process_request(request, address)


def _watch(server: Server) -> None:
    while not server.should_stop():
        time.sleep(1.0)
    server.retire()
    server.shutdown()


def main(argv: list[str] | None = None) -> int:
    """Listen on `--socket`, detach, serve until idle."""
    parser = argparse.ArgumentParser(prog="python -m fabtui.sim.server")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--foreground", action="store_true", help="do not detach (debugging)")
    args = parser.parse_args(argv)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(args.socket)  # a dead server's (the starter holds the lock)
    server = Server(args.socket)
    if not args.foreground and os.fork():
        os._exit(0)  # the starter sees us listening; we are reparented and outlive it
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    threading.Thread(target=_watch, args=(server,), daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.5)
    finally:
        server.close_serving_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
