"""The simulated device programs' thin client: one command or session, served by the sim server.

`python -I -S fabtui/sim/client.py --state FILE node --name N -- argv...` (or `switch --name S`)
behaves as `python -m fabtui.sim` does (same output, exit status, latency, terminal handling) but
imports only the standard library: the fabric is answered by a long-lived server process
(`fabtui.sim.server`) reached over a Unix socket, started here when none is running. So a
command costs a Python start-up (~20 ms), not the simulator's imports and set-up (~0.5 s).

The client stays alive until its answer arrives (latency included), so killing it ends the
command as killing `ssh` does. Without `--state` it hands over to `python -m fabtui.sim`.

Protocol (one connection per command or session): the client sends the request
(`encode_request`), then, for a switch session, the keys typed; the server answers with frames:
`kind` (1 byte: o stdout, e stderr, x exit status) + length (4 bytes, big endian) + payload.
"""

from __future__ import annotations

import _socket as socket  # the C module: `socket` pulls in enum and selectors (8 ms)
import os
import select
import struct
import sys
import zlib

FORWARDED = ("FABTUI_SIM_LATENCY", "FABTUI_SIM_TIME")
"""Environment the server reads from each request, not from its own environment."""
SKEW_VAR = "FABTUI_SIM_SKEW"
"""Seconds added to the simulated clock for this command (a probe's interval, not slept)."""
SKEW_ESCAPE = "\x1b]fabtui-skew;{seconds}\x07"
"""Typed into a switch session: later commands run that many seconds ahead (never echoed)."""
_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_START_WAIT_S = 30.0


def socket_path() -> str:
    """The server's socket for this interpreter and this version of fabtui's code.

    Code that changed on disk (a checkout, an edit anywhere in fabtui) gets a new server; the
    old one times out. Raises `OSError` when the socket's folder is not private to this user.
    """
    stamp = [sys.executable, _PACKAGE, *_code_stamps(os.path.join(_PACKAGE, "fabtui"))]
    data = "\n".join(stamp).encode()
    digest = f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"  # zlib: hashlib costs 7 ms
    folder = os.path.join(os.environ.get("TMPDIR") or "/tmp", f"fabtui-sim-{os.getuid()}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    info = os.lstat(folder)
    if info.st_uid != os.getuid() or info.st_mode & 0o077 or not os.path.isdir(folder):
        # Someone else's folder under that name would hand them our commands.
        raise OSError(f"{folder} is not a private folder of this user; remove it")
    return os.path.join(folder, f"{digest}.sock")


def _code_stamps(folder: str) -> list[str]:
    """Name and modification time of every module under `folder` (~200 stats: < 1 ms)."""
    stamps = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir() and entry.name != "__pycache__":
                stamps += _code_stamps(entry.path)
            elif entry.name.endswith(".py"):
                stamps.append(f"{entry.path}:{entry.stat().st_mtime_ns}")
    return sorted(stamps)


def connect(path: str) -> socket.socket:
    """A connection to the server at `path`, starting the server when none answers."""
    sock = _try_connect(path)
    if sock is not None:
        return sock
    import fcntl

    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one client starts the server; the others wait
        sock = _try_connect(path)
        if sock is None:
            _start_server(path)
            sock = _try_connect(path)
    if sock is None:
        raise OSError(f"the simulator's server did not start (see {path}.log)")
    return sock


def _try_connect(path: str) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    return sock


def _start_server(path: str) -> None:
    """Run the server; it returns (daemonized, in its own session) once it listens."""
    import subprocess

    env = _server_env()
    with open(path + ".log", "ab") as log:  # why a server did not start, if it did not
        subprocess.run([sys.executable, "-m", "fabtui.sim.server", "--socket", path],
                       env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                       start_new_session=True, timeout=_START_WAIT_S, check=False)


def _server_env() -> dict[str, str]:
    """This environment, with this copy of fabtui first on the import path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE, env.get("PYTHONPATH")) if p)
    return env


def _frames(sock: socket.socket):  # type: ignore[no-untyped-def]
    """(kind, payload) frames from the server until it closes the connection."""
    buffer = b""
    while True:
        while len(buffer) >= 5:
            size = struct.unpack(">I", buffer[1:5])[0]
            if len(buffer) < 5 + size:
                break
            yield buffer[:1], buffer[5:5 + size]
            buffer = buffer[5 + size:]
        chunk = sock.recv(65536)
        if not chunk:
            return
        buffer += chunk


def _write(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def encode_request(device: str, name: str, state: str, env: list[str], skew: str,
                   argv: list[str]) -> bytes:
    """The request: its length, then its fields joined by NUL (no argument can hold one).

    Not JSON: importing `json` would double the client's start-up.
    """
    payload = "\0".join([device, name, state, *env, skew, *argv]).encode("utf-8",
                                                                         "surrogateescape")
    return struct.pack(">I", len(payload)) + payload


def decode_request(payload: bytes) -> tuple[str, str, str, dict[str, str], float, list[str]]:
    """(device, name, state file, forwarded environment, skew, argv) from a request."""
    fields = payload.decode("utf-8", "surrogateescape").split("\0")
    device, name, state = fields[:3]
    count = len(FORWARDED)
    env = {k: v for k, v in zip(FORWARDED, fields[3:3 + count], strict=True) if v}
    return device, name, state, env, float(fields[3 + count]), fields[4 + count:]


def main(argv: list[str]) -> int:
    """Entry point; returns the exit status."""
    args = list(argv)
    if len(args) < 4 or args[0] != "--state" or args[2] not in ("node", "switch") or \
            args[3] != "--name" or len(args) < 5:
        # Not a request this client forwards: the device program in its own process says why.
        os.execve(sys.executable, [sys.executable, "-m", "fabtui.sim", *args], _server_env())
    state, device, rest = args[1], args[2], args[3:]
    name, command = rest[1], rest[2:]
    if command[:1] == ["--"]:
        command = command[1:]
    request = encode_request(device, name, os.path.abspath(state),
                             [os.environ.get(k, "") for k in FORWARDED],
                             os.environ.get(SKEW_VAR) or "0", command)
    try:
        sock = connect(socket_path())
    except OSError as exc:
        sys.stderr.write(f"fabtui sim: {exc}\n")
        return 255
    try:
        sock.sendall(request)
        if device == "switch":
            with raw_terminal():
                return _session(sock)
        # The connection stays open both ways: the server sees a killed client as end of input.
        for kind, payload in _frames(sock):
            if kind == b"x":
                return int(payload)
            _write(1 if kind == b"o" else 2, payload)
    finally:
        sock.close()
    return 255  # the server went away mid-command: as a dropped ssh connection


def _session(sock: socket.socket) -> int:
    """Keys to the server, its frames to the terminal, until the server sends the status."""
    buffer = b""
    reading = True
    while True:
        watched: list[int | socket.socket] = [0, sock] if reading else [sock]
        ready, _, _ = select.select(watched, [], [])
        if 0 in ready:
            keys = os.read(0, 4096)
            if keys:
                sock.sendall(keys)
            else:
                sock.shutdown(socket.SHUT_WR)
                reading = False
        if sock in ready:
            chunk = sock.recv(65536)
            if not chunk:
                return 255
            buffer += chunk
            while len(buffer) >= 5:
                size = struct.unpack(">I", buffer[1:5])[0]
                if len(buffer) < 5 + size:
                    break
                kind, payload, buffer = buffer[:1], buffer[5:5 + size], buffer[5 + size:]
                if kind == b"x":
                    return int(payload)
                _write(1 if kind == b"o" else 2, payload)


class raw_terminal:
    """Keys one at a time and no terminal echo (the session echoes, as a switch does)."""

    def __enter__(self) -> None:
        self.saved = None
        try:
            import termios
            import tty

            self.saved = termios.tcgetattr(0)
            tty.setraw(0)
        except Exception:  # not a terminal: a pipe in tests
            self.saved = None

    def __exit__(self, *exc: object) -> None:
        if self.saved is not None:
            import termios

            termios.tcsetattr(0, termios.TCSADRAIN, self.saved)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
