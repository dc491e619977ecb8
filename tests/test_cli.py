"""The `fabtui` command as users run it: the real console script and in-process runs.

`real` runs a command as a process of its own, forked from the tests' fork server
(tests/fabtui_fork.py) unless `binary=True` asks for a new process of the installed console
script: test_real_binary_check_exit_codes keeps one such test of the script itself (the
packaging and import-hygiene tests cover start-up and imports)."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import fabtui_fork
import pytest
from click.testing import Result

from fabtui.topology.loader import load_topology


def fabtui_command() -> list[str]:
    script = Path(sys.executable).parent / "fabtui"
    if script.exists():
        return [str(script)]
    found = shutil.which("fabtui")
    return [found] if found else [sys.executable, "-m", "fabtui"]


def real(*args: str, cwd: Path | None = None,
         binary: bool = False) -> subprocess.CompletedProcess[str]:
    """`fabtui ARGS` as a process of its own, in this environment without FABTUI_CONFIG and
    FABTUI_DEBUG: forked from the tests' fork server (tests/fabtui_fork.py: the command, its
    output and exit status, without the interpreter's start-up), or with `binary` a new
    process of the installed console script (start-up and packaging included)."""
    env = {k: v for k, v in os.environ.items() if k not in ("FABTUI_CONFIG", "FABTUI_DEBUG")}
    if not binary:
        return fabtui_fork.run(["fabtui", *args], cwd=cwd, env=env, timeout=120)
    return subprocess.run([*fabtui_command(), *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120, check=False)


def test_bare_fabtui_summarises_the_demo_fabric(tmp_path: Path) -> None:
    result = real(cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "showing the built-in demo fabric" in result.stdout
    assert "8 nodes, 64 GPUs (64x H100-SXM5-80GB)" in result.stdout
    assert "8 leaf, 2 spine" in result.stdout
    assert "0 errors, 0 warnings" in result.stdout
    assert result.stderr == ""


def test_real_binary_check_exit_codes(faulty: Path, demo: Path, tmp_path: Path) -> None:
    """The installed console script itself, a new process each time: exit 0, 1 and 2."""
    assert real("topo", "check", str(demo), binary=True).returncode == 0
    bad = real("topo", "check", str(faulty), binary=True)
    assert bad.returncode == 1 and "[rail-symmetry] node003:mlx5_2" in bad.stdout
    broken = tmp_path / "broken.yaml"
    broken.write_text("cluster: {name: x}\nnodes: [\n")
    unreadable = real("topo", "check", str(broken), binary=True)
    assert unreadable.returncode == 2
    assert unreadable.stderr.startswith(f"{broken}:")
    assert "Traceback" not in unreadable.stderr


def test_show_json_is_complete(run: Callable[..., Result]) -> None:
    data = json.loads(run("topo", "show", "--json").stdout)
    assert data["nodes"] == 8 and data["gpus"] == 64 and data["rails"] == list(range(8))
    assert data["switches"] == {"leaf": 8, "spine": 2}
    assert data["oversubscription"] == {"1.00:1": 8}
    assert len(data["leaves"]) == 8


def test_ports_table_csv_and_markdown(run: Callable[..., Result]) -> None:
    rows = list(csv.DictReader(io.StringIO(run("topo", "ports", "--format", "csv").stdout)))
    assert len(rows) == 64
    assert rows[0] == {"node": "node001", "nic": "mlx5_0", "netdev": "enp23s0f0np0", "rail": "0",
                       "plane": "", "gpus": "0", "leaf": "leaf-g00-r0", "port": "Ethernet0",
                       "speed": "400", "optic": "MT24000001"}
    md = run("topo", "ports").stdout.splitlines()
    assert md[0].startswith("| node | nic | netdev | rail |") and len(md) == 66


def test_path_text_and_errors(run: Callable[..., Result]) -> None:
    text = run("topo", "path", "0", "9").stdout
    assert "rank 0: node001 GPU0" in text and "32 equal-cost paths" in text
    assert "... 16 more listed with --json" in text
    result = run("topo", "path", "0", "99")
    assert result.exit_code == 2
    assert result.stderr.strip() == "fabtui: rank 99 is outside the job: ranks are 0-63"


def test_path_with_a_rank_file(run: Callable[..., Result],
                               write: Callable[[str, str], Path]) -> None:
    ranks = write("ranks.txt", "node005 slots=8\nnode001 slots=8\n")
    data = json.loads(run("topo", "path", "0", "8", "--ranks", str(ranks), "--json").stdout)
    assert (data["src"]["node"], data["dst"]["node"]) == ("node005", "node001")
    assert data["kind"] == "same-leaf"
    bad = write("bad.txt", "node005 slots=8\nnode042\n")
    result = run("topo", "path", "0", "8", "--ranks", str(bad))
    assert result.exit_code == 2 and "bad.txt:2: host 'node042'" in result.stderr


def test_generate_writes_a_file_that_loads_back(run: Callable[..., Result], tmp_path: Path,
                                                template: Callable[[str], Path]) -> None:
    out = tmp_path / "my.yaml"
    result = run("topo", "generate", "h100-256gpu-roce", "--param", "nodes=16", "-o", str(out))
    assert result.exit_code == 0
    assert "wrote" in result.stderr and "16 nodes" in result.stderr
    text = out.read_text()
    assert text.startswith("# Generated by fabtui")
    assert "--param nodes=16" in text.splitlines()[0]
    assert len(load_topology(out).topology.nodes) == 16
    assert run("topo", "check", str(out)).exit_code == 0


def test_generate_bare_generator_needs_nodes(run: Callable[..., Result]) -> None:
    result = run("topo", "generate", "rail-optimized")
    assert result.exit_code == 2
    assert "missing required template parameter 'nodes'" in result.stderr
    result = run("topo", "generate", "rail-optimized", "--param", "nodes=-3")
    assert result.exit_code == 2
    assert result.stderr.startswith("--param: nodes=-3: parameter nodes: Input should be greater")
    result = run("topo", "generate", "rail-optimized", "--param", "nodes")
    assert result.exit_code == 2 and "expected key=value" in result.stderr


def test_generate_json_and_unknown_template(run: Callable[..., Result]) -> None:
    data = json.loads(run("topo", "generate", "h100-1node", "--json").stdout)
    assert len(data["nodes"]) == 1 and len(data["links"]) == 8
    result = run("topo", "generate", "dragonfly")
    assert result.exit_code == 2 and "no template 'dragonfly'; known: rail-optimized" in \
        result.stderr


def test_templates_are_listed(run: Callable[..., Result]) -> None:
    data = json.loads(run("topo", "templates", "--json").stdout)
    assert {t["name"] for t in data["templates"]} >= {
        "h100-1node", "h100-32gpu", "h100-64gpu", "h100-256gpu-roce", "h100-1024gpu-rail",
        "b200-1node", "b300-64gpu-2plane"}
    assert "uplinks_per_leaf" in data["parameters"]
    assert "h100-1024gpu-rail" in run("topo", "templates").stdout


@pytest.mark.parametrize("args", [
    ("topo", "show"), ("topo", "path", "0", "63"), ("topo", "blast", "spine-01"),
    ("topo", "ports", "--format", "md"), ("config",),
])
def test_every_command_answers_json_and_text(run: Callable[..., Result],
                                             args: tuple[str, ...]) -> None:
    text = run(*args)
    assert text.exit_code == 0 and text.stdout.strip()
    as_json = run(*args, "--json")
    assert as_json.exit_code == 0
    json.loads(as_json.stdout)


def test_internal_errors_do_not_print_tracebacks(run: Callable[..., Result],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import fabtui.cli.topo as topo_cli

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(topo_cli, "summarize", broken)
    result = run("topo", "show")
    assert result.exit_code == 3
    assert "internal error: RuntimeError: boom" in result.stderr
    assert "Traceback" not in result.stderr


def test_peer_answers_both_directions(run: Callable[..., Result]) -> None:
    assert run("topo", "peer", "leaf-g00-r3:Ethernet16").stdout.strip() == \
        "leaf-g00-r3:Ethernet16 <-> node003:mlx5_3 (400G, optic MT24000027)"
    data = json.loads(run("topo", "peer", "node003:enp92s0f0np0", "--json").stdout)
    assert data["peer"] == "leaf-g00-r3:Ethernet16" and data["link"]["optic"] == "MT24000027"
    missing = run("topo", "peer", "leaf-g00-r3:Ethernet200")
    assert missing.exit_code == 2 and "no cable is plugged into leaf-g00-r3:Ethernet200" in \
        missing.stderr


def test_parse_lists_its_kinds_as_json_and_parses_the_shipped_example(
        run: Callable[..., Result]) -> None:
    from fabtui.paths import shipped_dir

    kinds = json.loads(run("parse", "--list", "--json").stdout)
    assert any(k["kind"] == "nccl-tests" and k["description"] for k in kinds)
    example = shipped_dir("examples") / "all_reduce.log"
    parsed = run("parse", str(example), "--json")
    assert parsed.exit_code == 0, parsed.output
    result = json.loads(parsed.stdout)
    assert result["kind"] == "nccl-tests" and result["status"] == "ok"
    assert run("parse", str(example), "--json", "--table").exit_code == 2


def test_an_internal_error_masks_the_secrets_it_quotes(run: Callable[..., Result],
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       write: Callable[[str, str], Path]) -> None:
    import fabtui.cli.topo as topo_cli

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("ssh failed: password=S3cr3tP@ss token corp-" + "A" * 24)

    monkeypatch.setattr(topo_cli, "summarize", broken)
    config = write("fabtui.toml", 'redact = ["corp-[A-Za-z0-9]{24}"]\n')
    result = run("--config", str(config), "topo", "show")
    assert result.exit_code == 3 and "internal error: RuntimeError: ssh failed" in result.stderr
    assert "S3cr3tP@ss" not in result.stderr and "corp-AAAA" not in result.stderr


@pytest.mark.parametrize(("argv", "message"), [
    (("probe", "run", "nic.ibstat", "--param", "count"), "--param 'count': expected key=value"),
    (("probe", "run", "nic.ibstat", "--param", "=3"), "--param '=3': expected key=value"),
    (("sim", "inject", "pfc-storm", "node001:mlx5_0", "--param", "rate"),
     "--param 'rate': expected key=value"),
    (("runbook", "run", "pfc-storm", "--input", "leaf"), "--input 'leaf': expected name=value"),
])
def test_a_malformed_key_value_option_is_one_line_naming_it(
        run: Callable[..., Result], argv: tuple[str, ...], message: str) -> None:
    result = run(*argv)
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in \
        result.stderr
