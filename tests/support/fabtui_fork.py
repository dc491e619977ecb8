"""A fork server for the tests' `fabtui` commands: a process per command, without the start-up.

A `fabtui` process spends 0.35-0.8 s of CPU importing (click, pydantic's models, the runbook
engine, networkx, the case library) before a command that then takes milliseconds. Tests about
what a command does (its output, exit status and files, from a real process with its own
environment, folder and standard streams) do not need to pay that again each time: `run` asks one
helper process per pytest worker (the "zygote", started on first use) that has imported fabtui's
CLI and the modules its commands load once, and it forks a child per command. The child
replaces its environment wholly, changes folder, takes the request's stdin/stdout/stderr as fds
0-2, and runs `fabtui.cli.main` as the console script does, then ends as the interpreter ends
a process: its exit status, an uncaught exception's traceback on stderr, threads joined, atexit
handlers and the flushing of its output are a real process's (`_exit_status`; only the module
teardown is skipped, and with it what a `__del__` might print then).

Where start-up is what a test is about, it must start a real new process instead: the import
hygiene tests (what a command imports), packaging (the installed script and wheel), the tmux
tests (a terminal), and test_cli's `real(..., binary=True)` (the console script itself).

What a fork shares with the zygote, and how it is kept out of a command's way:
- modules are imported once, with a neutral environment (HOME and XDG_* pointing nowhere):
  a module that read the environment at import would keep the zygote's value, so only modules
  that read it when called are preloaded (`PRELOAD`; test_fabtui_fork checks a command sees the
  request's HOME/XDG_*/FABTUI_*). `fabtui.sim.server` (`IDLE_S` is read at import) and the TUI
  (textual and rich read the terminal's settings) are never preloaded.
- the zygote is single-threaded (numpy's OpenBLAS pool is kept to one thread), so a fork copies
  no lock held by another thread; children are forked from it, never from the pytest worker.
- `random` reseeds itself in a fork; `tempfile`'s cached folder and the time zone are reset.
  Not re-read: the interpreter's own PYTHON* settings (PYTHONPATH, PYTHONHASHSEED: the fork
  keeps the zygote's import path, this checkout first, and its hash seed).

If the zygote cannot start (fabtui itself fails to import) or dies, `run` starts it again, and
falls back to a real `python -m fabtui` process when that fails too. It exits when its socket
closes: `close` (called at the end of the test session), or the pytest worker's exit.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import locale
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

REPO = Path(__file__).resolve().parents[2]

PRELOAD = (
    "fabtui.cli.app", "fabtui.cli.topo", "fabtui.cli.parse", "fabtui.cli.probe",
    "fabtui.cli.sim", "fabtui.cli.runbook", "fabtui.cli.report", "fabtui.cli.cases",
    "fabtui.cli.triage", "fabtui.cli.prom",
    "fabtui.parsers.registry", "fabtui.parsers.nccl_log", "fabtui.parsers.nccl_tests",
    "fabtui.parsers.ibstat", "fabtui.parsers.ethtool_stats", "fabtui.parsers.switch_counters",
    "fabtui.parsers.transceiver_dom", "fabtui.parsers.mlxlink", "fabtui.parsers.perftest",
    "fabtui.probes.runner", "fabtui.probes.evaluators", "fabtui.runbooks.engine",
    "fabtui.runbooks.testing", "fabtui.runbooks.lint", "fabtui.topology.graph",
    "fabtui.topology.generate", "fabtui.cases.library", "fabtui.cases.index",
    "fabtui.cases.similar", "fabtui.cases.filing", "fabtui.reports.build", "fabtui.triage.run",
    "fabtui.sim.core", "fabtui.sim.state", "fabtui.sim.client", "fabtui.sim.transports",
    "fabtui.probes.catalog", "fabtui.probes.pfc_paths", "fabtui.parsers.kernel_log",
    "fabtui.parsers.lldp_neighbors", "fabtui.parsers.nvidia_smi_q", "fabtui.parsers.fec_stats",
    "fabtui.parsers.pfc_counters", "fabtui.topology.routes", "fabtui.topology.blast",
    "fabtui.triage.report", "fabtui.workspace.triaging", "fabtui.reports.markdown",
    "networkx", "numpy", "sqlite_utils", "pexpect", "pynvml", "markdown_it", "whoosh",
    "whoosh.searching", "whoosh.highlight", "whoosh.writing", "whoosh.classify",
    "whoosh.scoring", "whoosh.codec.whoosh3", "whoosh.filedb.compound",
    "whoosh.filedb.filetables", "whoosh.automata.lev", "whoosh.externalsort", "_strptime",
)
"""Modules the zygote imports before forking: every one reads the environment, the home folder
and the working folder only when called. A module that fails to import is left for the command
to import again (and to report as a real process would)."""

NEUTRAL = "/nonexistent/fabtui-zygote"
"""HOME and XDG_* of the zygote while it imports: a module that kept them would show this."""

_FRAME = 1 << 20


def run(args: Sequence[str], *, input: str | None = None, cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None, timeout: float | None = None,
        check: bool = False, capture_output: bool = True,
        text: bool = True) -> subprocess.CompletedProcess[str]:
    """`subprocess.run(args, capture_output=True, text=True, ...)` for a `fabtui` command line
    (`args[0]` names the program: `fabtui` or a path to it), run in a fork of the zygote.

    `env` replaces the environment wholly (None: this process's); stdin is `input`, or this
    process's own stdin as subprocess would hand it down. On `timeout` the command is killed and
    `subprocess.TimeoutExpired` raised, with the output so far.
    """
    if not capture_output or not text:
        raise ValueError("fabtui_fork.run captures text output only")
    if not args or Path(args[0]).name != "fabtui":
        raise ValueError(f"not a fabtui command line: {list(args)!r}")
    request = {"argv": [str(a) for a in args],
               "env": dict(os.environ if env is None else env),
               "cwd": os.path.abspath(cwd if cwd is not None else os.getcwd())}
    return _ZYGOTE.run(request, input, timeout, check)


def close() -> None:
    """Stop the zygote (if started); it takes no more commands. `run` may start it again."""
    _ZYGOTE.close()


def info() -> dict[str, Any]:
    """What the running zygote reported when it was ready: its pid, its threads, the modules
    it preloaded (started if need be)."""
    return _ZYGOTE.info()


class _Unavailable(Exception):
    """The zygote is gone or would not start: the caller may start a new one or fall back."""


class _Zygote:
    """The parent's side: starts the zygote, sends it requests, one at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._sock: socket.socket | None = None
        self._ready: dict[str, Any] = {}
        self._broken = False

    def info(self) -> dict[str, Any]:
        with self._lock:
            self._start()
            return dict(self._ready)

    def run(self, request: dict[str, Any], input: str | None, timeout: float | None,
            check: bool) -> subprocess.CompletedProcess[str]:
        with self._lock:
            for _ in range(2):
                if self._broken:
                    break
                try:
                    self._start()
                    result = self._run(request, input, timeout)
                except _Unavailable:
                    self._stop()
                    continue
                except subprocess.TimeoutExpired:
                    raise  # killed and reaped: the zygote takes the next command
                except BaseException:
                    # (a ^C, a lost zygote) the conversation is out of step: start afresh
                    self._stop()
                    raise
                break
            else:
                self._broken = True  # twice gone: every later command starts a real process
            if self._broken:
                result = _real_process(request, input, timeout)
        if check:
            result.check_returncode()
        return result

    def _start(self) -> None:
        if self._sock is not None:
            return
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("FABTUI_", "XDG_")) and k != "PYTHONPATH"}
        env.update(HOME=NEUTRAL, XDG_CONFIG_HOME=NEUTRAL, XDG_DATA_HOME=NEUTRAL,
                   XDG_CACHE_HOME=NEUTRAL, XDG_STATE_HOME=NEUTRAL, XDG_RUNTIME_DIR=NEUTRAL,
                   PYTHONPATH=str(REPO), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                   MKL_NUM_THREADS="1")
        with theirs:
            self._process = subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), str(theirs.fileno())],
                pass_fds=[theirs.fileno()], env=env, cwd="/", stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL)
        self._sock = ours
        ours.settimeout(120)
        try:
            self._ready = _receive(ours)
        except _Unavailable:
            self._broken = True  # fabtui itself cannot be imported: real processes say why
            self._stop()
            raise

    def _run(self, request: dict[str, Any], input: str | None,
             timeout: float | None) -> subprocess.CompletedProcess[str]:
        assert self._sock is not None
        encoding = locale.getpreferredencoding(False)
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
                _stdin(input, encoding) as stdin:
            self._sock.settimeout(120)
            try:
                socket.send_fds(self._sock, [json.dumps(request).encode()],
                                [stdin, out.fileno(), err.fileno()])
            except OSError as exc:
                raise _Unavailable from exc
            _receive(self._sock)  # forked: from here on the command's outcome is the answer
            self._sock.settimeout(timeout)
            try:
                status = _receive(self._sock, started=True)
            except TimeoutError:
                self._sock.settimeout(120)
                self._sock.send(b"kill")
                _receive(self._sock, started=True)
                raise subprocess.TimeoutExpired(request["argv"], timeout or 0,
                                                _text(out, encoding),
                                                _text(err, encoding)) from None
            return subprocess.CompletedProcess(request["argv"], int(status["status"]),
                                               _text(out, encoding), _text(err, encoding))

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _stop(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._process is not None:
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None


@contextlib.contextmanager
def _stdin(input: str | None, encoding: str) -> Iterator[int]:
    """The fd the command reads: a file holding `input`, or (None) this process's own stdin
    as subprocess hands it down (under pytest, /dev/null)."""
    if input is None:
        try:
            os.fstat(0)
        except OSError:
            with open(os.devnull, "rb") as null:
                yield null.fileno()
            return
        yield 0
        return
    with tempfile.TemporaryFile() as given:
        given.write(input.encode(encoding))
        given.seek(0)
        yield given.fileno()


def _receive(sock: socket.socket, *, started: bool = False) -> dict[str, Any]:
    """The zygote's next message. Raises `TimeoutError` past the socket's timeout, and when the
    zygote is gone `_Unavailable`, or, once it had forked the command, `RuntimeError` (the
    command's outcome is lost with it)."""
    try:
        data = sock.recv(_FRAME)
    except TimeoutError:
        if not started:
            raise _Unavailable from None
        raise
    except OSError:
        data = b""
    if not data:
        if started:
            raise RuntimeError("the fabtui fork server died while running a command")
        raise _Unavailable
    message: dict[str, Any] = json.loads(data)
    return message


def _text(file: IO[bytes], encoding: str) -> str:
    """What the command wrote, decoded as `subprocess.run(text=True)` decodes it."""
    file.seek(0)
    data = file.read().decode(encoding)
    return data.replace("\r\n", "\n").replace("\r", "\n")


def _real_process(request: dict[str, Any], input: str | None,
                  timeout: float | None) -> subprocess.CompletedProcess[str]:
    """The command as a new `python -m fabtui` process, when the zygote cannot serve it."""
    env = dict(request["env"])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "-m", "fabtui", *request["argv"][1:]],
                          input=input, capture_output=True, text=True, cwd=request["cwd"],
                          env=env, timeout=timeout, check=False)
    return subprocess.CompletedProcess(request["argv"], done.returncode, done.stdout,
                                       done.stderr)


_ZYGOTE = _Zygote()
atexit.register(close)


# The zygote's side, run as `python tests/support/fabtui_fork.py FD`.

def _serve(fd: int) -> None:
    """Preload, report ready, then fork a child for each request until the socket closes."""
    atexit.unregister(close)  # the parent's handler: the forks run only their command's
    sock = socket.socket(fileno=fd)
    here = str(Path(__file__).resolve().parent)
    sys.path[:] = [str(REPO), *(p for p in sys.path if p not in (here, str(REPO)))]
    preloaded = []
    for name in PRELOAD:
        try:
            __import__(name)
        except Exception:  # the command imports it again, and says why
            continue
        preloaded.append(name)
    import gc

    gc.collect()
    gc.freeze()  # the preloaded objects are never scanned again, in the zygote or a child
    sock.send(json.dumps({"pid": os.getpid(), "preloaded": preloaded,
                          "threads": len(os.listdir("/proc/self/task"))}).encode())
    while True:
        data, fds, _, _ = socket.recv_fds(sock, _FRAME, 3)
        if not data:
            return
        if data == b"kill":
            continue  # a kill for a child already gone
        pid = os.fork()
        if pid == 0:
            sock.close()
            _child(json.loads(data), fds)  # never returns
        for received in fds:
            os.close(received)
        _watch(sock, pid)


def _watch(sock: socket.socket, pid: int) -> None:
    """Tell the parent the child's pid, then its exit status; kill it when asked (a timeout)
    or when the parent is gone."""
    sock.send(json.dumps({"pid": pid}).encode())
    watch = select.poll()
    watch.register(sock, select.POLLIN)
    try:
        exited = os.pidfd_open(pid)
    except OSError:  # no pidfd (a kernel before 5.3): wake up now and then to look
        exited = -1
    else:
        watch.register(exited, select.POLLIN)
    try:
        while True:
            ready = {fd for fd, _ in watch.poll(20 if exited < 0 else None)}
            if sock.fileno() in ready:
                message = sock.recv(_FRAME)
                if message in (b"kill", b""):
                    os.kill(pid, signal.SIGKILL)
                if not message:  # the parent is gone: so is the zygote
                    os.waitpid(pid, 0)
                    raise SystemExit(0)
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
    finally:
        if exited >= 0:
            os.close(exited)
    sock.send(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode())


def _child(request: dict[str, Any], fds: list[int]) -> NoReturn:
    """Become the request's `fabtui` process, run the CLI and exit."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    import time

    time.tzset()
    tempfile.tempdir = None
    sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    sys.argv = list(request["argv"])
    _stdio()
    os._exit(_exit_status())


def _exit_status() -> int:
    """Run the CLI, then end as the interpreter ends a process, in the steps a command can see
    (CPython's Py_FinalizeEx): the exit status of `SystemExit`, or the traceback of any other
    exception and status 1; non-daemon threads joined; atexit handlers run; stdout and stderr
    flushed (status 120 when stdout cannot be). What comes after, the teardown of every module,
    is skipped: it rewrites the reference count of every object the zygote preloaded, copying
    its whole heap into the fork, and was nine tenths of a short command's time here."""
    try:
        from fabtui.cli import main

        main()
        status = 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            status = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            status = 1
    except BaseException as exc:  # as the interpreter reports one
        sys.excepthook(type(exc), exc, exc.__traceback__)
        status = -signal.SIGINT if isinstance(exc, KeyboardInterrupt) else 1
    getattr(threading, "_shutdown")()  # noqa: B009 - private, what the interpreter calls
    getattr(atexit, "_run_exitfuncs")()  # noqa: B009
    try:
        sys.stdout.flush()
    except Exception as exc:  # the interpreter's "Exception ignored"
        print(f"Exception ignored in: {sys.stdout!r}\n{type(exc).__name__}: {exc}",
              file=sys.stderr)
        status = 120
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    if status == -signal.SIGINT:  # an uncaught ^C ends the process by the signal itself
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return status


def _stdio() -> None:
    """sys.stdin/stdout/stderr anew on fds 0-2, as the interpreter makes them at start-up."""
    encoding = os.environ.get("PYTHONIOENCODING", "").partition(":")[0] or \
        locale.getpreferredencoding(False)
    streams = []
    for fd, mode in ((0, "rb"), (1, "wb"), (2, "wb")):
        binary = io.open(fd, mode, closefd=False)  # noqa: SIM115, UP020 - the process's own
        errors = "backslashreplace" if fd == 2 else "strict"
        streams.append(io.TextIOWrapper(binary, encoding=encoding, errors=errors,
                                        line_buffering=fd == 2 or os.isatty(fd)))
    for name, stream in zip(("stdin", "stdout", "stderr"), streams, strict=True):
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


if __name__ == "__main__":
    _serve(int(sys.argv[1]))
