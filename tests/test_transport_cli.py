"""CLI sessions against a real sshd whose login runs a fake switch CLI
(tests/support/fake_switch.py)."""

from __future__ import annotations

import asyncio
import sys
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from fabtui.model.transport import ErrorKind, TransportResult
from fabtui.transports.cli_session import CliTarget, CliTransport
from tests.support.sshd_server import SshServer, require_sshd

FAKE = Path(__file__).parent / "support" / "fake_switch.py"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    require_sshd()
    base = tmp_path_factory.mktemp("sshd-cli")
    base.chmod(0o700)
    srv = SshServer(base, force_command=f"{sys.executable} {FAKE}")
    yield srv
    srv.stop()


def target(server: SshServer, flavor: str, **ssh: object) -> CliTarget:
    return CliTarget(ssh=server.target(name=f"leaf-{flavor}", **ssh), flavor=flavor,
                     cli_command=flavor)


def run(transport: CliTransport, *calls: tuple[CliTarget, str, float]) -> list[TransportResult]:
    async def go() -> list[TransportResult]:
        try:
            return [await transport.run(t, c, timeout=limit) for t, c, limit in calls]
        finally:
            await transport.close()

    return asyncio.run(go())


@pytest.mark.parametrize("flavor", ["sonic", "nvue", "eos", "nxos", "onyx", "linux"])
def test_each_flavor_logs_in_pages_and_recognises_errors(server: SshServer, flavor: str) -> None:
    leaf = target(server, flavor)
    version, long, bad = run(CliTransport(server.options()), (leaf, "show version", 10),
                             (leaf, "show long 55", 10), (leaf, "show bogus", 10))
    assert version.ok, version.describe()
    assert version.output.strip() == f"Fake {flavor} switch 1.0\nUptime: 42 days"
    assert long.output.split() == [w for i in range(1, 56) for w in ("line", str(i))]
    assert bad.error is ErrorKind.COMMAND
    assert bad.error_message and bad.error_message.startswith(f"leaf-{flavor} rejected `show "
                                                              "bogus`")


def test_a_pager_left_on_is_answered(server: SshServer) -> None:
    from fabtui.transports import cli_flavors

    eos = cli_flavors.FLAVORS["eos"]
    quiet = cli_flavors.CliFlavor("eos", eos.prompt, (), eos.errors)  # never turns paging off
    cli_flavors.FLAVORS["eos-paging"] = quiet
    try:
        leaf = CliTarget(ssh=server.target(name="pager"), flavor="eos-paging", cli_command="eos")
        (result,) = run(CliTransport(server.options()), (leaf, "show long 70", 10))
    finally:
        del cli_flavors.FLAVORS["eos-paging"]
    assert result.ok and "--More--" not in result.output
    assert result.output.split()[-1] == "70" and result.output.count("line") == 70


def test_the_session_is_kept_across_polls(server: SshServer) -> None:
    transport = CliTransport(server.options())
    leaf = target(server, "eos")

    async def go() -> tuple[float, float, dict[str, bool]]:
        start = time.monotonic()
        await transport.run(leaf, "show version")
        first = time.monotonic() - start
        start = time.monotonic()
        for _ in range(5):
            await transport.run(leaf, "show version")
        again = (time.monotonic() - start) / 5
        alive = transport.sessions()
        await transport.close()
        return first, again, alive

    first, again, alive = asyncio.run(go())
    assert alive == {"leaf-eos": True}
    assert again < first, "later polls reuse the logged-in session"


def test_a_slow_command_times_out_and_the_session_recovers(server: SshServer) -> None:
    leaf = target(server, "eos")
    start = time.monotonic()
    slow, after = run(CliTransport(server.options()), (leaf, "show slow 20", 1.5),
                      (leaf, "show version", 10))
    assert time.monotonic() - start < 15
    assert slow.error is ErrorKind.TIMEOUT
    assert after.ok and "Fake eos switch" in after.output


def test_a_connection_killed_mid_command_reconnects_once(server: SshServer,
                                                         tmp_path: Path) -> None:
    leaf = target(server, "nxos")
    marker = tmp_path / "dropped"
    (result,) = run(CliTransport(server.options()), (leaf, f"show drop-once {marker}", 10))
    assert result.ok, result.describe()
    assert result.attempts == 2 and result.output.strip() == "recovered"


def test_fifty_megabytes_are_capped_and_memory_stays_flat(server: SshServer) -> None:
    cap = 1024 * 1024
    leaf = target(server, "linux")
    tracemalloc.start()
    (result,) = run(CliTransport(server.options(), cap=cap), (leaf, "show big 50", 120))
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result.ok, result.describe()
    assert result.output_bytes >= 50_000_000 and result.truncated
    assert len(result.output) < cap + 4096
    assert peak < 8 * cap, f"peak Python allocation {peak / 1e6:.1f} MB"


def test_a_changed_host_key_is_refused(server: SshServer, tmp_path: Path) -> None:
    import subprocess

    other = tmp_path / "other"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    known = tmp_path / "known_hosts"
    known.write_text(f"[127.0.0.1]:{server.port} {(tmp_path / 'other.pub').read_text()}")
    (result,) = run(CliTransport(server.options(known_hosts=known)),
                    (target(server, "eos"), "show version", 10))
    assert result.error is ErrorKind.HOST_KEY
    assert "host key CHANGED" in (result.error_message or "")


def test_a_wrong_key_is_an_auth_error(server: SshServer, tmp_path: Path) -> None:
    import subprocess

    wrong = tmp_path / "wrong"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(wrong)], check=True)
    (result,) = run(CliTransport(server.options(identity=wrong)),
                    (target(server, "eos"), "show version", 10))
    assert result.error is ErrorKind.AUTH


def test_unknown_flavor_is_refused(server: SshServer) -> None:
    with pytest.raises(ValueError, match="unknown CLI flavor 'ios'"):
        from fabtui.transports.cli_flavors import flavor

        flavor("ios")


def test_a_long_line_goes_through_real_ssh_whole_and_an_injected_one_never(
        server: SshServer) -> None:
    """4,000 characters are typed in chunks while the echo is read; the reply names them all.
    A line with a newline is refused before the session is even opened."""
    leaf = target(server, "eos")
    word = "x" * 4000
    long, injected = run(CliTransport(server.options()), (leaf, word, 20),
                         (leaf, "show version\nshow bogus", 20))
    assert long.error is ErrorKind.COMMAND
    assert long.output.strip() == f"% Invalid input (at token 0: '{word}')"  # echo removed
    assert injected.error is ErrorKind.UNSUPPORTED and injected.output == ""
    assert "holds a newline (\\n) at character 13" in (injected.error_message or "")


def test_sessions_type_without_pexpects_pauses_and_log_out_without_a_kill(
        server: SshServer) -> None:
    leaf = target(server, "sonic")
    transport = CliTransport(server.options())

    async def go() -> tuple[object, object]:
        result = await transport.run(leaf, "show version", timeout=10)
        assert result.ok, result.describe()
        child = transport._sessions[leaf.name].child
        assert isinstance(child, pexpect.spawn)  # ssh on a terminal of its own
        process = vars(child)["ptyproc"]  # its ptyprocess (pexpect's stubs leave it out)
        pauses = (child.delaybeforesend, process.delayafterclose)
        await transport.close()
        return pauses, (child.exitstatus, child.signalstatus)

    pauses, ended = asyncio.run(go())
    assert pauses == (None, 0.0)  # no 50 ms before every line, no 0.1 s on close
    assert ended == (0, None)  # `exit` ended it: nothing had to be killed
