"""`dcgmi diag`: per-test verdicts, failed GPUs, wrapped messages, DCGM 2/3/4 and JSON layouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.model.parsed.dcgmi_diag import DcgmiDiag
from fabtui.parsers import dcgmi_diag as diag
from fabtui.parsers.errors import ParseError

FIXTURES = Path(__file__).parent / "fixtures" / "dcgmi-diag"


def _parse(name: str) -> DcgmiDiag:
    return diag.parse((FIXTURES / name).read_text())


def test_dcgm3_all_pass_with_empty_stress_section() -> None:
    result = _parse("awsome-dcgmi-diag-r2-p4de-nvlinks-expected.txt")
    assert result.overall == "pass" and result.level == "2"
    assert (result.dcgm_version, result.driver_version) == ("3.3.3", "535.104.12")
    assert result.gpu_device_ids == ["20b2"] * 8
    assert result.sections["Stress"] == [] and result.sections["Integration"] == ["PCIe"]
    assert len(result.tests) == 11 and set(result.tests.values()) == {"pass"}


def test_published_fail_fragments() -> None:
    result = _parse("mlengineering-dcgmi-diag-fail-excerpts.txt")
    assert result.overall == "fail"
    assert result.tests == {"GPU Memory": "fail"}
    assert result.failed_gpus == {"GPU Memory": [0]}
    assert result.gpu_results["GPU Memory"]["7"] == "pass"
    (message,) = result.details["GPU Memory"]
    assert "totaling 13.3 seconds started at 9.7 seconds" in message
    assert message.endswith("and any other components.")
    assert result.errors == [
        "Error: GPU 3 has uncorrectable memory errors and row remappings are pending"]
    assert result.level is None  # the `dcgmi diag -r 2` in a comment is not a command line


def test_dcgm4_per_gpu_lines_and_test_level_failure() -> None:
    result = _parse("synthetic-dcgmi-diag-r2-dcgm4-per-gpu-fail.txt")
    assert result.overall == "fail"
    assert result.tests == {"software": "pass", "memory": "fail", "pcie": "fail"}
    assert result.failed_gpus == {"memory": [2]}
    assert result.gpu_results["pcie"] == {str(i): "pass" for i in range(4)}
    assert result.details["pcie"][0].endswith(
        "exited with non-zero status 1' Check DCGM and system logs for errors. Reset GPU. "
        "Restart DCGM. Rerun diagnostics.")
    assert result.details["memory"][0] == (
        "Warning: GPU 2 had uncorrectable memory errors and row remapping failed. Drain the GPU "
        "and reset it or reboot the node.")


def test_dcgm2_warn_and_skip() -> None:
    result = _parse("synthetic-dcgmi-diag-r3-dcgm2-blacklist-warn.txt")
    assert result.overall == "warn" and result.level == "3"
    assert result.tests["Targeted Power"] == "warn" and result.tests["SM Stress"] == "skip"
    assert result.tests["Blacklist"] == "pass"
    assert "desired power minimum targeted_power.target_power_min_ratio of 285.0" in \
        result.details["Targeted Power"][0]


def test_json_output() -> None:
    result = _parse("synthetic-dcgmi-diag-r2-json-dcgm3.txt")
    assert result.overall == "fail" and result.dcgm_version == "3.3.5"
    assert result.failed_gpus == {"Page Retirement/Row Remap": [3]}
    assert result.gpu_results["PCIe"]["3"] == "skip"


def test_summary_never_overrides_a_failed_test() -> None:
    raw = (FIXTURES / "mlengineering-dcgmi-diag-fail-excerpts.txt").read_text()
    result = diag.parse(raw + "\nResult: Pass\n")
    assert result.summary == "pass" and result.overall == "fail"


def test_all_skipped_is_not_a_pass() -> None:
    text = ("| Diagnostic                | Result                                         |\n"
            "+-----  Hardware  ----------+------------------------------------------------+\n"
            "| memory                    | Skip                                           |\n")
    assert diag.parse(text).overall == "warn"


def test_mixed_gpu_results_and_launcher_prefix() -> None:
    text = "\r\n".join("node7: " + line for line in [
        "| Diagnostic                | Result                                         |",
        "+-----  Hardware  ----------+------------------------------------------------+",
        "| GPU Memory                | Pass - GPUs: 0, 1, 3                           |",
        "|                           | Fail - GPUs: 2, 4                              |"])
    result = diag.parse(text)
    assert result.tests["GPU Memory"] == "fail" and result.failed_gpus["GPU Memory"] == [2, 4]


def test_refusals() -> None:
    with pytest.raises(ParseError, match=r"no diagnostic result rows.*Unable to complete"):
        diag.parse("Error: Unable to complete diagnostic for group 2147483647. Return: (-3) "
                   "Bad parameter passed to function.\n")
    with pytest.raises(ParseError) as caught:
        diag.parse('{"DCGM GPU Diagnostic": {"test_categories": [ }\n')
    assert caught.value.line == 1


def test_detect() -> None:
    assert diag.detect((FIXTURES / "mlengineering-dcgmi-diag-fail-excerpts.txt").read_text()) \
        > 0.9
    assert diag.detect("| NVIDIA-SMI 550.127.05   Driver Version: 550.127.05 |") == 0.0
