"""The selection database and the fleet check (issue 41, point 3): reviewed rows with their
sources, combinations read from the demo fabric through the probes, each one outside the
matrix named with its source and fix; the healthy fabric has none."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from fabtui.config import load_settings, with_scenario
from fabtui.errors import InputError
from fabtui.intent.scenario import configs_dir
from fabtui.intent.selection import (
    STATUSES,
    Combination,
    FleetReport,
    MatrixClass,
    Row,
    check,
    load_matrix,
)
from fabtui.runbooks.functions import template
from fabtui.workspace import Workspace


def _fleet(scenario: str, devices: tuple[str, ...] = ()) -> FleetReport:
    with Workspace(with_scenario(load_settings(None), scenario)) as ws:
        return asyncio.run(ws.fleet_check(devices))


def test_every_shipped_row_has_a_source_a_date_and_a_known_status() -> None:
    matrix = load_matrix()
    assert set(matrix) == {"nic-firmware", "driver-firmware", "gpu-driver", "switch-os",
                           "optics"}
    for klass in matrix.values():
        assert klass.rows, klass.name
        for row in klass.rows:
            assert row.status in STATUSES and row.source.strip() and row.date
    # the fleet's own pin is validated: fleet.toml and the matrix agree
    fleet = template("fleet")["nic"]
    assert any(r.status == "validated" and r.values == {"nic": fleet["model"],
                                                        "firmware": fleet["firmware"]}
               for r in matrix["nic-firmware"].rows)


def test_a_row_without_its_source_is_refused_at_its_line(tmp_path: Path) -> None:
    folder = tmp_path / "selection"
    shutil.copytree(configs_dir() / "selection", folder)
    path = folder / "optics.toml"
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("source = "))
    del lines[at]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as caught:
        load_matrix(folder)
    problem = caught.value.problems[0]
    assert problem.source.endswith("optics.toml") and "source" in problem.message
    assert problem.line == lines.index("[[row]]") + 1


def test_verdicts_of_the_check() -> None:
    rows = (Row({"nic": "CX7", "firmware": "28.39.*"}, "validated", "s1", "2026-01-01", "",
                "f:1"),
            Row({"nic": "CX7", "firmware": "28.36.1010"}, "not-recommended", "s2",
                "2026-01-01", "old", "f:2"),
            Row({"nic": "CX7", "firmware": "28.42.1000"}, "unverified", "s3", "2026-01-01",
                "", "f:3"))
    matrix = {"nic-firmware": MatrixClass("nic-firmware", "", ("nic", "firmware"), rows,
                                          "burn {validated[firmware]} on {target}")}

    def one(firmware: str, nic: str = "CX7") -> FleetReport:
        return check(matrix, [Combination("nic-firmware", "n1:mlx5_0",
                                          {"nic": nic, "firmware": firmware})])

    assert not one("28.39.2048").findings and not one("28.39.2048").notes
    bad = one("28.36.1010").findings[0]
    assert bad.verdict == "not recommended" and "s2" in bad.source and "old" in bad.source
    assert bad.fix == "burn 28.39.* on mlx5_0"
    assert one("28.40.1000").findings[0].verdict == "outside the matrix"
    assert one("28.42.1000").notes[0].verdict == "unverified"
    uncovered = one("16.35.2000", nic="CX5")
    assert not uncovered.findings and uncovered.notes[0].verdict == "not covered"


def test_healthy_fleet_has_no_finding_and_reads_every_class() -> None:
    report = _fleet("healthy")
    assert report.findings == [] and report.unread == []
    # 64 NICs x (firmware, driver, optic), 8 nodes' GPUs, 10 switches' OS, 8 leaves x 16 optics
    assert report.checked == 64 * 3 + 8 + 10 + 8 * 16
    assert {n.cls for n in report.notes} == {"driver-firmware", "switch-os"}


def test_bad_firmware_node_is_named_with_source_and_fix() -> None:
    report = _fleet("new-node-bad-firmware")
    assert {f.component for f in report.findings} == {f"node008:mlx5_{i}" for i in range(8)}
    line = next(f for f in report.findings if f.component == "node008:mlx5_3")
    assert line.verdict == "not recommended" and "28.36.1010" in line.combination
    assert "mftv4230" in line.source
    assert line.fix.startswith("mlxfwmanager -d mlx5_3 -u -i <fw-ConnectX-7-28.39.1002.bin>, "
                               "then mlxfwreset -d mlx5_3 reset")


@pytest.mark.parametrize("scenario", ["qos-misconfig", "ecn-off", "mtu-mismatch",
                                      "headroom-short", "nccl-env-misconfig"])
def test_configuration_faults_are_not_version_findings(scenario: str) -> None:
    assert _fleet(scenario).findings == []


def test_cli(run: Callable[..., Result]) -> None:
    bad = run("--scenario", "new-node-bad-firmware", "fleet", "check", "--device", "node008")
    assert bad.exit_code == 1
    assert "node008:mlx5_0  nic ConnectX-7 × firmware 28.36.1010: not recommended" in bad.stdout
    good = run("--scenario", "healthy", "fleet", "check", "--device", "node001")
    assert good.exit_code == 0 and "0 outside the validated matrix" in good.stdout
