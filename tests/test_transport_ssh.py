"""The ssh transport against a real OpenSSH server on loopback."""

from __future__ import annotations

import asyncio
import subprocess
import time
import tracemalloc
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from fabtui.model.transport import ErrorKind
from fabtui.transports.ssh import SshTarget, SshTransport
from tests.support.sshd_server import SshServer, require_sshd

T = TypeVar("T")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    require_sshd()
    base = tmp_path_factory.mktemp("sshd")
    base.chmod(0o700)
    srv = SshServer(base)
    yield srv
    srv.stop()


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def test_a_command_runs_and_hostile_arguments_stay_data(server: SshServer) -> None:
    ssh = SshTransport(server.options())
    hostile = ["a b", "x; rm -rf /tmp/nothing", "$(id)", "`id`", "quote'\"", "new\nline", "*"]
    result = run(ssh.run(server.target(), ["printf", "[%s]", *hostile]))
    assert result.ok, result.describe()
    assert result.output == "".join(f"[{h}]" for h in hostile)
    assert result.transport == "ssh" and result.target == "testhost"


def test_exit_status_and_stderr_come_back(server: SshServer) -> None:
    result = run(SshTransport(server.options()).run(
        server.target(), ["sh", "-c", "echo out; echo oops >&2; exit 7"]))
    assert result.exit_status == 7 and result.error is ErrorKind.COMMAND
    assert result.output == "out\n" and "oops" in result.stderr
    assert result.error_message == "exit status 7: oops"


def test_a_slow_command_times_out(server: SshServer) -> None:
    start = time.monotonic()
    result = run(SshTransport(server.options()).run(
        server.target(), ["sh", "-c", "echo started; sleep 30"], timeout=1.5))
    assert time.monotonic() - start < 5
    assert result.error is ErrorKind.TIMEOUT and result.exit_status is None
    assert result.output == "started\n"


def test_a_connection_killed_mid_command_is_retried_once(server: SshServer,
                                                         tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    script = (f"if [ -e {marker} ]; then echo second try; "
              f"else touch {marker}; echo first try; kill -9 $PPID; sleep 5; fi")
    result = run(SshTransport(server.options()).run(server.target(), ["sh", "-c", script]))
    assert result.ok, result.describe()
    assert result.attempts == 2 and result.output == "second try\n"


def test_a_dropped_connection_is_reported_when_retry_is_off(server: SshServer,
                                                            tmp_path: Path) -> None:
    result = run(SshTransport(server.options(multiplex=False)).run(
        server.target(), ["sh", "-c", "echo bye; kill -9 $PPID; sleep 5"], retry_on_drop=False))
    assert result.error is ErrorKind.UNREACHABLE
    assert "connection dropped" in (result.error_message or "")


def test_fifty_megabytes_of_output_are_capped_and_memory_stays_flat(server: SshServer) -> None:
    cap = 1024 * 1024
    ssh = SshTransport(server.options(cap=cap))
    tracemalloc.start()
    result = run(ssh.run(server.target(), ["sh", "-c", "head -c 50000000 /dev/zero | tr '\\0' x"],
                         timeout=60))
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result.ok, result.describe()
    assert result.output_bytes == 50_000_000 and result.truncated
    assert len(result.output) < cap + 200 and "bytes of output omitted" in result.output
    assert peak < 8 * cap, f"peak Python allocation {peak / 1e6:.1f} MB"


def test_a_changed_host_key_is_refused(server: SshServer, tmp_path: Path) -> None:
    other = tmp_path / "other"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.0.0.1]:{server.port} {(tmp_path / 'other.pub').read_text()}")
    for trusted in (False, True):  # trusting new keys never accepts a changed one
        result = run(SshTransport(server.options(known_hosts=known)).run(
            server.target(trusted=trusted), ["true"]))
        assert result.error is ErrorKind.HOST_KEY
        assert "host key CHANGED" in (result.error_message or "")
        assert "ssh-keygen -R 127.0.0.1" in (result.error_message or "")


def test_an_unknown_host_key_is_refused_unless_trusted(server: SshServer,
                                                       tmp_path: Path) -> None:
    known = tmp_path / "empty_known_hosts"
    known.write_text("")
    refused = run(SshTransport(server.options(known_hosts=known)).run(server.target(), ["true"]))
    assert refused.error is ErrorKind.HOST_KEY
    assert "host key not known" in (refused.error_message or "")
    accepted = run(SshTransport(server.options(known_hosts=known)).run(
        server.target(trusted=True), ["echo", "ok"]))
    assert accepted.ok and accepted.output == "ok\n"
    assert str(server.port) in known.read_text()


def test_a_wrong_key_is_an_auth_error(server: SshServer, tmp_path: Path) -> None:
    wrong = tmp_path / "wrong"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(wrong)], check=True)
    result = run(SshTransport(server.options(identity=wrong, multiplex=False)).run(
        server.target(), ["true"]))
    assert result.error is ErrorKind.AUTH
    assert "authentication refused (publickey)" in (result.error_message or "")


def test_unreachable_host(server: SshServer) -> None:
    result = run(SshTransport(server.options(multiplex=False)).run(
        server.target(port=1), ["true"], timeout=10))
    assert result.error is ErrorKind.UNREACHABLE
    assert "Connection refused" in (result.error_message or "")


def test_connection_reuse_and_per_host_limit(server: SshServer) -> None:
    ssh = SshTransport(server.options(max_sessions_per_host=2))

    async def many() -> float:
        await ssh.run(server.target(), ["true"])  # opens the shared connection
        start = time.monotonic()
        results = await asyncio.gather(*(ssh.run(server.target(), ["sleep", "0.5"])
                                         for _ in range(6)))
        assert all(r.ok for r in results)
        return time.monotonic() - start

    elapsed = run(many())
    assert elapsed >= 1.4, "6 sleeps of 0.5 s with 2 at a time take at least 1.5 s"
    sockets = list(ssh.control_dir().iterdir())
    assert sockets, "a ControlMaster socket is kept for reuse"


def test_hosts_that_look_like_options_are_refused() -> None:


    with pytest.raises(ValueError, match="ssh can be given safely"):
        SshTarget(name="x", host="-oProxyCommand=touch /tmp/pwned")


@pytest.fixture(scope="module")
def password_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    require_sshd()
    base = tmp_path_factory.mktemp("sshd-pw")
    base.chmod(0o700)
    srv = SshServer(base, password_auth=True)
    yield srv
    srv.stop()


def test_a_password_prompt_without_credentials_is_an_auth_error(
        password_server: SshServer, tmp_path: Path) -> None:
    wrong = tmp_path / "wrong"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(wrong)], check=True)
    result = run(SshTransport(password_server.options(identity=wrong, multiplex=False)).run(
        password_server.target(), ["true"]))
    assert result.error is ErrorKind.AUTH
    assert "wants a password, but no credentials reference is configured" in \
        (result.error_message or "")


def test_a_configured_password_answers_the_prompt_and_never_leaks(
        password_server: SshServer, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "s3cret-Value-42"
    monkeypatch.setenv("FABTUI_TEST_PASSWORD", secret)
    target = password_server.target(credentials="env:FABTUI_TEST_PASSWORD")
    result = run(SshTransport(password_server.options()).run(target, ["echo", "hi"],
                                                              timeout=20))
    # The test server's account has no usable password: the answer is sent and refused.
    assert result.error is ErrorKind.AUTH
    assert result.error_message == "testhost (127.0.0.1): password refused"
    assert secret not in result.model_dump_json()


class _ScriptedSsh(SshTransport):
    """`ssh` replaced by a shell script playing a password login: how the output comes
    apart (the newline ssh echoes for the password, then the rest) is the script's."""

    def __init__(self, script: str) -> None:
        super().__init__()
        self.script = script

    def base_argv(self, target: SshTarget, *, batch: bool, tty: bool = False,
                  master: bool = False) -> list[str]:
        return ["sh", "-c", self.script]  # the remote command arrives as $0, unused


_PROMPT = "printf \"admin@leaf's password: \"; read -r answer; printf '\\r\\n'; "


def test_a_refusal_that_comes_after_the_passwords_newline_is_a_refusal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A loaded machine: the newline after the password arrives alone, the refusal and the
    next prompt later. Not taken for a login (it was, then the run ended as 'ssh failed')."""
    monkeypatch.setenv("FABTUI_TEST_PASSWORD", "s3cret")
    transport = _ScriptedSsh(_PROMPT + "sleep 0.3; "
                             "printf 'Permission denied, please try again.\\r\\n"
                             "admin@leaf\\047s password: '; read -r again")
    target = SshTarget(name="leaf", host="leaf", credentials="env:FABTUI_TEST_PASSWORD")
    result = run(transport.run(target, ["show", "version"], timeout=10))
    assert result.error is ErrorKind.AUTH
    assert result.error_message == "leaf (leaf): password refused"


def test_output_right_after_a_password_login_is_kept_whole(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What arrived with the first line after the login is output too (it was dropped: the
    reads after the login skipped what pexpect had buffered)."""
    monkeypatch.setenv("FABTUI_TEST_PASSWORD", "s3cret")
    transport = _ScriptedSsh(_PROMPT + "printf '  hi\\r\\nsecond\\r\\nthird'; sleep 0.3; "
                                       "printf ' and the rest\\r\\n'")
    target = SshTarget(name="leaf", host="leaf", credentials="env:FABTUI_TEST_PASSWORD")
    result = run(transport.run(target, ["cat", "motd"], timeout=10))
    assert result.ok, result.describe()
    assert result.output.split() == ["hi", "second", "third", "and", "the", "rest"]
    assert "s3cret" not in result.model_dump_json()


def test_an_unset_credential_is_named(password_server: SshServer,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FABTUI_NO_SUCH_VAR", raising=False)
    target = password_server.target(credentials="env:FABTUI_NO_SUCH_VAR")
    result = run(SshTransport(password_server.options()).run(target, ["true"]))
    assert result.error is ErrorKind.AUTH
    assert "environment variable FABTUI_NO_SUCH_VAR is not set" in (result.error_message or "")
