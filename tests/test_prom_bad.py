"""Bad answers from Prometheus, each a clear state, never a hang: unreachable, a query timeout
(ours and Prometheus's own), missing series, a stale scrape, a rejected query, credentials.

A small fake Prometheus HTTP API answers here (the real server is in test_prom_live.py); it
returns what a broken or empty Prometheus returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from fabtui.config import load_settings
from fabtui.model.probe import ProbeResult
from fabtui.prom import queries as promql
from fabtui.prom.client import PromClient, PromError
from fabtui.views.fabricmap import FabricMap
from fabtui.views.status import FabricStatus, Health, PollState
from fabtui.views.updates import Quiet, Results, SourceFailed, StatusUpdate
from fabtui.workspace import Workspace
from fabtui.workspace.promsource import DISCOVER_EVERY, PrometheusSource, live_source
from tests.support.prom_server import free_port

Answer = tuple[int, dict[str, Any], float]
"""HTTP status, JSON body, seconds to wait first."""


def vector(result: list[dict[str, Any]]) -> dict[str, Any]:
    return {"status": "success", "data": {"resultType": "vector", "result": result}}


class FakePrometheus:
    """Answers `/api/v1/query` with `answer(query)`; remembers the requests' headers."""

    def __init__(self, answer: Callable[[str], Answer]) -> None:
        self.headers: list[dict[str, str]] = []
        self.asked: list[tuple[float, str, str]] = []
        """(when, path, query) of every request, in the order they came."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urllib.parse.urlparse(self.path)
                query = urllib.parse.parse_qs(url.query)
                fake.headers.append(dict(self.headers))
                fake.asked.append((time.time(), url.path, query.get("query", [""])[0]))
                status, body, delay = answer(query.get("query", [""])[0])
                time.sleep(delay)
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (its timeout)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # Prometheus's (Go's) listen backlog is the system's,
            # not socketserver's 5: a refresh's concurrent queries are not dropped connects

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        # polled every 50 ms for `stop`: socketserver's 0.5 s was each test's teardown
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


StartFake = Callable[[Callable[[str], Answer]], FakePrometheus]
"""The `fake` fixture: starts a `FakePrometheus` answering with the function given."""


@pytest.fixture
def fake() -> Iterator[StartFake]:
    started: list[FakePrometheus] = []

    def start(answer: Callable[[str], Answer]) -> FakePrometheus:
        started.append(FakePrometheus(answer))
        return started[-1]

    yield start
    for server in started:
        server.stop()


def workspace(tmp_path: Path, url: str, **extra: str) -> Workspace:
    """A workspace reading Prometheus at `url`. Its query timeout is generous (a loaded
    machine answers the fake late): a test of the timeout sets its own."""
    table = {"url": url, "timeout": "20s", "stale_after": "30s", **extra}
    config = tmp_path / "config.toml"
    config.write_text('source = "prometheus"\n[prometheus]\n' +
                      "".join(f'{k} = "{v}"\n' for k, v in table.items()))
    return Workspace(load_settings(config))


def poll(source: PrometheusSource) -> list[StatusUpdate]:
    async def collect() -> list[StatusUpdate]:
        async with contextlib.aclosing(source.poll()) as stream:
            return [item async for item in stream]

    return asyncio.run(collect())


def results_of(updates: list[StatusUpdate]) -> list[ProbeResult]:
    """The probe results among a poll's updates."""
    return [u.result for u in updates if isinstance(u, Results)]


def snapshot_after(ws: Workspace, results: list[StatusUpdate]) -> Any:
    status = FabricStatus(FabricMap.build(ws.graph()))
    for update in results:
        status.take(update)
    return status.snapshot(1, PollState.WAITING)


def source_of(ws: Workspace) -> PrometheusSource:
    found = live_source(ws)
    assert found is not None
    return found


def test_unreachable_prometheus_makes_every_device_unreachable(tmp_path: Path) -> None:
    ws = workspace(tmp_path, f"http://127.0.0.1:{free_port()}")
    source = source_of(ws)
    started = time.monotonic()
    results = poll(source)
    assert time.monotonic() - started < 5
    snapshot = snapshot_after(ws, results)
    assert snapshot.of("node001") is Health.UNREACHABLE
    assert snapshot.of("leaf-g00-r0") is Health.UNREACHABLE
    assert "Connection refused" in (snapshot.states["node001"].error or "")
    assert source.notes and source.notes[0].startswith("prometheus unreachable: ")
    # and the round itself failed: the poller shows it (red header, a notice) and backs off
    failed = results[-1]
    assert isinstance(failed, SourceFailed)
    assert failed.reason.startswith("prometheus unreachable: ")


def test_a_query_that_takes_too_long_times_out(tmp_path: Path, fake: StartFake) -> None:
    server = fake(lambda q: (200, vector([]), 5.0))
    ws = workspace(tmp_path, server.url, timeout="1s")
    source = source_of(ws)
    started = time.monotonic()
    results = poll(source)
    assert time.monotonic() - started < 4  # 1 s timeout, queries run concurrently
    assert snapshot_after(ws, results).of("node002") is Health.UNREACHABLE
    assert source.notes[0].startswith("prometheus timeout: ")
    assert "no answer within 1s" in source.notes[0]


def test_prometheus_own_query_timeout_is_a_timeout(fake: StartFake) -> None:
    server = fake(lambda q: (503, {"status": "error", "errorType": "timeout",
                                   "error": "query timed out in expression evaluation"}, 0))
    with pytest.raises(PromError) as caught:
        PromClient(server.url, 2).query("up")
    assert caught.value.kind == "timeout"
    assert "query timed out" in str(caught.value)


def test_a_rejected_query_says_why(fake: StartFake) -> None:
    server = fake(lambda q: (400, {"status": "error", "errorType": "bad_data",
                                   "error": "1:5: parse error: unexpected <by>"}, 0))
    with pytest.raises(PromError) as caught:
        PromClient(server.url, 2).query("sum by")
    assert caught.value.kind == "bad-query"
    assert "sum by: 1:5: parse error" in str(caught.value)


def test_no_series_leaves_elements_unknown_and_says_so(tmp_path: Path, fake: StartFake) -> None:
    server = fake(lambda q: (200, vector([]), 0))
    ws = workspace(tmp_path, server.url)
    source = source_of(ws)
    results = poll(source)
    assert results == []
    snapshot = snapshot_after(ws, results)
    assert snapshot.of("node001:mlx5_0") is Health.UNKNOWN
    assert any("no series matched the fabric" in n for n in source.notes)
    missing = source.check()
    graph = ws.graph()
    gpus = sum(len(n.gpus) for n in graph.nodes.values())
    assert len([m for m in missing if m.exporter == "dcgm-exporter"]) == gpus


def test_an_old_scrape_is_stale_at_once(tmp_path: Path, fake: StartFake) -> None:
    """Series still answer, but their newest sample is 10 minutes old (an exporter that
    serves cached data with its timestamps): the GPU is stale, not ok. (The first refresh
    dates the GPU by its element's newest sample, the presence; later ones by the device
    clock: both answered.)"""
    old = time.time() - 600

    def answer(query: str) -> Answer:
        labels = {"Hostname": "node001", "instance": "node001:9400", "gpu": "0"}
        if query.startswith("max by (Hostname, instance, gpu) (timestamp("):  # the presence
            return 200, vector([{"metric": labels, "value": [time.time(), str(old)]}]), 0
        if query.startswith("max by (Hostname, instance) (timestamp("):
            device = {k: v for k, v in labels.items() if k != "gpu"}
            return 200, vector([{"metric": device, "value": [time.time(), str(old)]}]), 0
        if "DCGM_FI_DEV_GPU_TEMP" in query:
            return 200, vector([{"metric": labels, "value": [time.time(), "61"]}]), 0
        return 200, vector([]), 0

    server = fake(answer)
    ws = workspace(tmp_path, server.url, stale_after="60s")
    results = poll(source_of(ws))
    assert [r.target for r in results_of(results)] == ["node001"]
    assert results_of(results)[0].ended_at.timestamp() == pytest.approx(old)  # its scrape
    snapshot = snapshot_after(ws, results)
    assert snapshot.of("node001:gpu0") is Health.STALE
    assert snapshot.of("node002:gpu0") is Health.UNKNOWN


def test_bearer_token_is_sent_and_never_shown(tmp_path: Path, fake: StartFake,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABTUI_TEST_PROM_TOKEN", "s3cr3t-token")
    server = fake(lambda q: (401, {"status": "error", "error": "unauthorized"}, 0))
    ws = workspace(tmp_path, server.url, bearer="env:FABTUI_TEST_PROM_TOKEN")
    source = source_of(ws)
    results = poll(source)
    assert server.headers[0]["Authorization"] == "Bearer s3cr3t-token"
    assert "check the Prometheus credentials reference" in source.notes[0]
    assert all("s3cr3t" not in (r.error or "") for r in results_of(results))
    assert "s3cr3t" not in repr(source.client)


def test_cli_check_unreachable_is_one_line_and_exit_2(tmp_path: Path,
                                                      run: Callable[..., Result]) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[prometheus]\nurl = "http://127.0.0.1:{free_port()}"\n'
                      'timeout = "1s"\n')
    result = run("--config", str(config), "prom", "check")
    assert result.exit_code == 2
    assert result.output.strip().startswith("fabtui: prometheus unreachable: http://127.0.0.1:")
    assert "Traceback" not in result.output


def test_cli_check_timeout_is_one_line_and_exit_2(tmp_path: Path, run: Callable[..., Result],
                                                  fake: StartFake) -> None:
    server = fake(lambda q: (200, vector([]), 5.0))
    config = tmp_path / "config.toml"
    config.write_text(f'[prometheus]\nurl = "{server.url}"\ntimeout = "1s"\n')
    started = time.monotonic()
    result = run("--config", str(config), "prom", "check")
    assert time.monotonic() - started < 4
    assert result.exit_code == 2
    assert "prometheus timeout:" in result.output and "no answer within 1s" in result.output


def test_cli_check_without_prometheus_config(run: Callable[..., Result]) -> None:
    result = run("prom", "check")
    assert result.exit_code == 2
    assert "no [prometheus] table in the config" in result.output


def test_config_errors_point_at_their_lines(tmp_path: Path, run: Callable[..., Result]) -> None:
    config = tmp_path / "config.toml"
    config.write_text('source = "prometheus"\n[prometheus]\nurl = "http://x:9090"\n'
                      'timeout = "soon"\nmetrics = { "sonic.pfc_rxx" = "a" }\n')
    result = run("--config", str(config), "prom", "check")
    assert result.exit_code == 2
    assert f"{config}:4: prometheus.timeout: 'soon'" in result.output
    assert f"{config}:5: prometheus.metrics: unknown mapping key 'sonic.pfc_rxx' " \
           "(did you mean 'sonic.pfc_rx'?)" in result.output


def test_tui_source_prometheus_without_a_table_is_exit_2(run: Callable[..., Result]) -> None:
    result = run("tui", "--source", "prometheus")
    assert result.exit_code == 2
    assert 'source = "prometheus" needs a [prometheus] table' in result.output


def test_tui_with_unresolvable_credentials_is_exit_2(tmp_path: Path,
                                                     run: Callable[..., Result]) -> None:
    config = tmp_path / "config.toml"
    config.write_text('source = "prometheus"\n[prometheus]\nurl = "http://127.0.0.1:9"\n'
                      'bearer = "env:FABTUI_TEST_UNSET_TOKEN"\n')
    result = run("--config", str(config), "tui")
    assert result.exit_code == 2
    assert "prometheus credentials: environment variable FABTUI_TEST_UNSET_TOKEN is not set" \
        in result.output


def test_recorded_mode_without_the_rules_says_to_load_them(tmp_path: Path, fake: StartFake) -> None:
    """`mode = "recorded"` against a Prometheus without fabtui's rules: nothing is judged and
    the note names the missing rule file, instead of a fabric that looks quiet."""
    queries: list[str] = []

    def answer(query: str) -> Answer:
        queries.append(query)
        return 200, vector([]), 0

    server = fake(answer)
    ws = workspace(tmp_path, server.url, mode="recorded")
    source = source_of(ws)
    assert poll(source) == []
    assert '{__name__=~"fabtui:sieve:.+"}' in queries and "fabtui:clock:port" in queries
    assert not any(">=" in q for q in queries)  # no sieve comparison evaluated per refresh
    assert any("fabtui prom rules" in n for n in source.notes)


@pytest.mark.parametrize("rule_file", ["current", "older"])
def test_recorded_devices_are_dated_by_the_recorded_device_clocks(
        tmp_path: Path, fake: StartFake, rule_file: str) -> None:
    """Recorded: devices are dated by `fabtui:device_clock:*`, a plain selector each. A rule
    file from before those series (per-element clocks only) still dates them, from the
    per-element clocks, and the note says to re-generate it."""
    queries: list[str] = []
    nics = ["mlx5_0", "mlx5_1"]

    def answer(query: str) -> Answer:
        queries.append(query)
        now = time.time()
        dated = "fabtui:device_clock:nic" if rule_file == "current" else \
            "max by (instance) (fabtui:clock:nic)"
        if query == dated:
            return 200, vector([{"metric": {"instance": "node001:9100"},
                                 "value": [now, str(now - 1)]}]), 0
        if query == "fabtui:clock:nic":
            return 200, vector([{"metric": {"instance": "node001:9100", "device": d},
                                 "value": [now, str(now - 1)]} for d in nics]), 0
        return 200, vector([]), 0

    server = fake(answer)
    source = source_of(workspace(tmp_path, server.url, mode="recorded"))
    marks = {u.device: list(u.keys) for u in poll(source) if isinstance(u, Quiet)}
    assert marks["node001"] == ["node001:mlx5_0", "node001:mlx5_1"]
    assert "fabtui:device_clock:nic" in queries
    regenerate = [n for n in source.notes if "fabtui:device_clock:*" in n]
    if rule_file == "current":
        assert "max by (instance) (fabtui:clock:nic)" not in queries and not regenerate
    else:
        assert regenerate and \
            regenerate[0].startswith("prometheus: re-generate the rule file (`fabtui prom rules`)")


def test_cli_rules_is_a_rule_file_prometheus_accepts(tmp_path: Path,
                                                     run: Callable[..., Result]) -> None:
    import shutil
    import subprocess

    config = tmp_path / "config.toml"
    config.write_text('[prometheus]\nurl = "http://127.0.0.1:9"\nwindow = "2m"\n')
    result = run("--config", str(config), "prom", "rules", "--interval", "30s")
    assert result.exit_code == 0, result.output
    assert "    interval: 30s\n" in result.output
    assert "      - record: fabtui:sieve:sonic:pfc_rx\n" in result.output
    assert "      - record: fabtui:clock:nic\n" in result.output
    # after the clocks it aggregates: a group's rules are evaluated in order
    assert result.output.index("record: fabtui:device_clock:nic\n") > \
        result.output.index("record: fabtui:clock:nic\n")
    assert '        expr: "max by (instance) (fabtui:clock:nic)"\n' in result.output
    assert "[2m]" in result.output
    if shutil.which("promtool"):
        rules = tmp_path / "rules.yml"
        rules.write_text(result.output)
        checked = subprocess.run(["promtool", "check", "rules", str(rules)],
                                 capture_output=True, text=True, check=False)
        assert checked.returncode == 0, checked.stdout + checked.stderr
    as_json = run("--config", str(config), "prom", "rules", "--json")
    group = json.loads(as_json.output)["groups"][0]
    assert group["name"] == "fabtui" and "interval" not in group
    assert {"record": "fabtui:clock:nic", "expr": "max by (instance, device) "
            "(timestamp(node_ethtool_received_prio3_pause{}))"} in group["rules"]
    bad = run("--config", str(config), "prom", "rules", "--interval", "soon")
    assert bad.exit_code == 2
    assert "--interval 'soon': a duration like 30s, 1m or 2h" in bad.output


def test_presence_is_read_in_full_once_then_a_slice_of_the_devices_per_refresh(
        tmp_path: Path, fake: StartFake) -> None:
    """Devices are dated each refresh by one sample per scrape target; which elements have
    series (per element, ~41,000 samples at 1,024 nodes) is read once for every device, with
    its first sieve (here the first refresh sieves them all). Then each refresh re-reads the
    elements of a slice of the devices, each device once every `presence_every` refreshes (an
    element whose series went away loses its ok mark at its device's turn); a new target's
    elements are read at once, a gone target's dropped."""
    import re

    clock = "max by (instance) (timestamp(node_ethtool_received_prio3_pause{}))"
    stamp = "max by (instance, device) (timestamp(node_ethtool_received_prio3_pause{"
    targets = {f"node00{n}:9100": ["mlx5_0", "mlx5_1"] for n in range(1, 7)}
    targets["node003:9101"] = ["mlx5_2"]  # a second scrape target on one node
    asked: list[set[str]] = []  # per presence query, the targets it selects
    broken: set[str] = set()  # targets whose elements' query fails
    dated: list[set[str]] = []  # per device clock query, the targets it dates
    clocks: list[list[str]] = []  # per device clock query, its selectors

    def selected(term: str) -> set[str]:
        """The targets one selector's matchers select (of a cheap device clock: by instance,
        and by a NIC the target serves)."""
        found = set(targets)
        for label, how, value in re.findall(r'(instance|device)(=~|!~)"((?:[^"\\]|\\.)*)"',
                                            term):
            pattern = re.compile(value.replace("\\\\", "\\"))
            for t in list(found):
                values = [t] if label == "instance" else targets[t]
                if any(pattern.fullmatch(v) for v in values) is (how == "!~"):
                    found.discard(t)
        return found

    def answer(query: str) -> Answer:
        now = time.time()
        if query == clock or query.startswith(clock[:-4]):  # every series, or one a target
            terms = query.split("timestamp(")[1:]
            chosen = set().union(*(selected(t) for t in terms))
            dated.append(chosen)
            clocks.append(terms)
            return 200, vector([{"metric": {"instance": t}, "value": [now, str(now - 1)]}
                                for t in sorted(chosen)]), 0
        if query.startswith(stamp):
            wanted = re.findall(r'instance=~"((?:[^"\\]|\\.)*)"', query)
            patterns = [re.compile(w.replace("\\\\", "\\")) for w in wanted]
            chosen = {t for t in targets if not patterns or any(p.fullmatch(t) for p in patterns)}
            asked.append(chosen)
            if chosen & broken:
                return 503, {"status": "error", "error": "overloaded"}, 0
            return 200, vector([{"metric": {"instance": t, "device": d},
                                 "value": [now, str(now - 1)]}
                                for t in sorted(chosen) for d in targets[t]]), 0
        return 200, vector([]), 0

    def marks() -> dict[str, list[str]]:
        return {u.device: list(u.keys) for u in poll(source) if isinstance(u, Quiet)}

    server = fake(answer)
    source = source_of(workspace(tmp_path, server.url, mode="sieve"))
    source.presence_every = 4
    assert marks()["node001"] == ["node001:mlx5_0", "node001:mlx5_1"]
    assert asked == [set(targets)]  # the first refresh: every device's elements
    assert dated == [set(targets)] and clocks == [[clock.split("timestamp(")[1]]]  # every series
    dated.clear()
    clocks.clear()
    targets["node001:9100"] = ["mlx5_0"]  # one NIC's series are gone, its node still answers
    seen = [marks() for _ in range(4)]
    # dated from one series a target, each target by its own (node003's second serves mlx5_2)
    # (and every series at the NIC kind's turn of DISCOVER_EVERY: one of these 4 refreshes)
    assert len(dated) == 4 and all(d == set(targets) for d in dated)
    cheap = [terms for terms in clocks if all("instance=~" in t for t in terms)]
    assert len(cheap) == 3
    assert all(sum(bool(selected(t)) for t in terms) == 2 for terms in cheap)  # mlx5_0, mlx5_2
    assert all(any('device=~"mlx5_2"' in t and selected(t) == {"node003:9101"} for t in terms)
               for terms in cheap)
    slices = asked[1:]
    assert all(len(s) < len(targets) for s in slices)
    assert sorted(t for s in slices for t in s) == sorted(targets)  # each once in 4 refreshes
    turn = next(i for i, s in enumerate(slices) if "node001:9100" in s)
    assert all(m["node001"] == ["node001:mlx5_0", "node001:mlx5_1"] for m in seen[:turn])
    assert all(m["node001"] == ["node001:mlx5_0"] for m in seen[turn:])
    assert all(m["node002"] == ["node002:mlx5_0", "node002:mlx5_1"] for m in seen)
    assert all(m["node003"] == ["node003:mlx5_0", "node003:mlx5_1", "node003:mlx5_2"]
               for m in seen)
    asked.clear()
    # a new scrape target whose elements are all named otherwise than the known first ones
    # (mlx5_0, mlx5_2): found by a discovery's slice of every series (each discovery reads
    # one slice, never every series), within DISCOVER_EVERY x the slices; its elements read
    # at once
    targets["node007:9100"] = ["mlx5_3"]
    for _ in range(DISCOVER_EVERY * promql.DISCOVER_SLICES):
        if "node007" in (seen_now := marks()):
            break
    assert seen_now["node007"] == ["node007:mlx5_3"]
    assert {"node007:9100"} in asked and set(targets) not in asked
    assert all(len(terms) > 1 for terms in clocks[4:])  # never every series again
    del targets["node002:9100"]  # a target gone: its elements go with it, no query needed
    asked.clear()
    assert "node002" not in marks()
    assert all("node002:9100" not in s for s in asked)
    # answering again, with a known first element: found by the next discovery (it reads
    # that element's series on every target), within DISCOVER_EVERY refreshes
    targets["node002:9100"] = ["mlx5_0", "mlx5_1"]
    for _ in range(DISCOVER_EVERY):
        if "node002" in (seen_now := marks()):
            break
    assert seen_now["node002"] == ["node002:mlx5_0", "node002:mlx5_1"]
    targets["node008:9100"] = ["mlx5_5"]  # new, and reading its elements fails: read again
    broken.add("node008:9100")
    within = source._polls + DISCOVER_EVERY * promql.DISCOVER_SLICES
    while not any(n.startswith("prometheus unreachable") for n in source.notes):
        assert "node008" not in marks()
        assert source._polls < within
    broken.clear()
    assert marks()["node008"] == ["node008:mlx5_5"]


def test_the_full_read_asks_for_the_named_ports_not_their_cross_product(tmp_path: Path) -> None:
    """The sieve names Ethernet0 on one leaf and Ethernet4 on two others: the full read's
    matchers select those ports (one term per set of port names), not every named port name
    on every named switch."""
    from fabtui.prom.catalog import BY_KEY
    from fabtui.prom.client import Sample

    source = source_of(workspace(tmp_path, "http://127.0.0.1:9", mode="sieve"))
    sieved = [Sample({"instance": switch, "device": port}, 1.0, 0.0) for switch, port in
              (("leaf-g00-r0", "Ethernet0"), ("leaf-g00-r1", "Ethernet4"),
               ("leaf-g00-r2", "Ethernet4"))]
    flagged, named = source._flagged({"sonic.pfc_rx": sieved})
    assert named == {"leaf-g00-r0:Ethernet0", "leaf-g00-r1:Ethernet4", "leaf-g00-r2:Ethernet4"}
    # the values are escaped for RE2 inside a PromQL string (`-` as `\\-`)
    one, two = (r'instance=~"leaf\\-g00\\-r0", device=~"Ethernet0"',
                r'instance=~"leaf\\-g00\\-r1|leaf\\-g00\\-r2", device=~"Ethernet4"')
    assert flagged == {"port": [one, two]}
    query = source.query_of(BY_KEY["sonic.fec_pre_ber"], flagged["port"])
    assert query == (f"max by (instance, device) (sonic_interface_fec_pre_ber{{{one}}} or "
                     f"sonic_interface_fec_pre_ber{{{two}}})")
    assert source.query_of(BY_KEY["sonic.pfc_rx"], flagged["port"]).count("rate(") == 2


def test_a_steady_sieve_is_read_in_one_round_trip(tmp_path: Path, fake: StartFake) -> None:
    """The sieve names a NIC; its full read needs the sieve's answer on the first refresh. The
    next refresh asks the same full read together with the sieve (the storm goes on): it does
    not wait for the sieve's answer first, and reads the same values."""
    from fabtui.prom.rules import every_sieve, sieve_name

    sieve_answered: list[float] = []
    full_asked: list[float] = []
    delay = 1.0  # long beside the scheduling of a loaded 2-core CI machine (0.3 s flaked)

    def answer(query: str) -> Answer:
        now = time.time()
        if query == every_sieve():
            sieve_answered.append(now + delay)  # answered after its delay
            named = {"__name__": sieve_name("ethtool.tx_prio3_pause_duration"),
                     "instance": "node001:9100", "device": "mlx5_0"}
            return 200, vector([{"metric": named, "value": [now, "5000"]}]), delay
        if 'instance=~"node001:9100"' in query and "rate(" in query:
            if "prio3_pause{" not in query:  # not also a sparkline's (range) query
                full_asked.append(now)
            return 200, vector([{"metric": {"instance": "node001:9100", "device": "mlx5_0"},
                                 "value": [now, "5000"]}]), 0
        if query == "max by (instance) (fabtui:clock:nic)":
            return 200, vector([{"metric": {"instance": "node001:9100"},
                                 "value": [now, str(now - 1)]}]), 0
        return 200, vector([]), 0

    server = fake(answer)
    source = source_of(workspace(tmp_path, server.url, mode="recorded"))
    values = []
    for _ in range(2):
        nic = next(r for r in results_of(poll(source)) if r.probe == "nic.ethtool")
        values.append({(m.component, m.name): m.value for m in nic.metrics})
    asked = len(full_asked) // 2  # each refresh asks the NIC's metrics once
    assert len(full_asked) == 2 * asked and asked >= 1
    first, second = full_asked[:asked], full_asked[asked:]
    assert min(first) >= sieve_answered[0] - 0.05  # after the sieve's answer came
    assert max(second) < sieve_answered[1] - delay / 2  # beside the sieve, not after it
    assert values[0] == values[1] and values[0]


def test_a_first_raw_sieve_is_asked_with_the_clocks_and_the_past_with_the_full_read(
        tmp_path: Path, fake: StartFake) -> None:
    """Sieving raw series with the first sieve not spread (`first_sieve_elements = None`),
    the first refresh sieves every element kind whole whatever the
    device clocks say: its sieves are asked with the clocks, not after their answer (one round
    trip fewer, on the refresh where Prometheus has most to evaluate); and the sparklines' past
    of the NIC the sieve names is asked with that NIC's full read, not after it. Every answer
    of the clocks (on the first refresh: the presence, which dates the devices) and of the
    full read is slow (as a busy Prometheus's)."""
    delay = 3.0  # long beside the scheduling of a loaded 2-core CI machine (load 35: 1.3 s)
    answered: dict[str, list[float]] = {"clock": [], "full": []}
    nic = {"instance": "node001:9100", "device": "mlx5_0"}

    def answer(query: str) -> Answer:
        now = time.time()
        if query.startswith("max by (instance) (timestamp("):  # a device clock
            answered["clock"].append(now + delay)
            return 200, vector([{"metric": {"instance": "node001:9100"},
                                 "value": [now, str(now - 1)]}]), delay
        if query.startswith("max by (instance, device) (timestamp("):  # the presence
            answered["clock"].append(now + delay)
            return 200, vector([{"metric": nic, "value": [now, str(now - 1)]}]), delay
        if "transmitted_prio3_pause_duration{" in query and " >= " in query:  # its sieve
            return 200, vector([{"metric": nic, "value": [now, "5000"]}]), 0
        if 'instance=~"node001:9100"' in query:  # the full read of the NIC named
            answered["full"].append(now + delay)
            return 200, vector([{"metric": nic, "value": [now, "5000"]}]), delay
        return 200, vector([]), 0

    server = fake(answer)
    source = source_of(workspace(tmp_path, server.url, mode="sieve"))
    source.first_sieve_elements = None
    poll(source)
    sieves = set(source.sieves.values())
    sieved = [at for at, path, query in server.asked if query in sieves]
    assert len(sieved) == len(sieves) and answered["clock"]
    assert max(sieved) < min(answered["clock"]) - delay / 2  # beside the clocks
    past = [at for at, path, _ in server.asked if path.endswith("/query_range")]
    assert past and answered["full"]
    assert max(past) < min(answered["full"]) - delay / 2  # beside the full read
