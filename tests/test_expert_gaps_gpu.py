"""Issue 35, Deliver 4 (gap 4) and the simulator's GPU limits (S5): SRAM ECC rules with a
recovery action per GPU, and temperatures judged against each GPU's own limits.

The rules run on real `nvidia-smi -q -x` output (tests/fixtures/nvidia-smi-q, telegraf's
A100 capture) with the counters a faulty GPU prints, and on the demo fabric (a throttled H100
at its 89 °C slowdown limit). docs/thresholds.md gives each rule's source.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fabtui.model.probe import Metric
from fabtui.parsers.registry import parse
from tests.support.evaluation import evaluated
from tests.support.sim import Fabric

FIXTURES = Path(__file__).parent / "fixtures" / "nvidia-smi-q"
A100 = FIXTURES / "telegraf-nvidia-smi-q-x-a100-sxm4-80gb-mig.xml"


def _judge(text: str) -> list[Metric]:
    return evaluated("gpu.smi_q", "node001", "nvidia-smi-q", parse(text, "nvidia-smi-q"))


def _gpu_ecc(old: str, new: str) -> str:
    """The A100 capture with `old` replaced by `new` in the GPU's own ECC block (its volatile
    counters come first; the MIG devices' counters above it are left alone)."""
    head, _, tail = A100.read_text(encoding="utf-8").partition("<ecc_errors>")
    return head + "<ecc_errors>" + tail.replace(old, new, 1)


def _named(metrics: list[Metric], name: str) -> list[Metric]:
    return [m for m in metrics if m.name == name]


def test_a_real_a100_reads_its_own_temperature_limits_and_clean_sram() -> None:
    parsed: Any = parse(A100.read_text(encoding="utf-8"), "nvidia-smi-q")
    gpu = parsed.gpus[0]
    assert (gpu.temperature_shutdown_c, gpu.temperature_slowdown_c,
            gpu.temperature_max_operating_c, gpu.memory_temperature_max_c) == (92, 89, 85, 95)
    metrics = _judge(A100.read_text(encoding="utf-8"))
    assert {m.verdict.value for m in _named(metrics, "ecc.sram_uncorrectable")} == {"ok"}
    assert not _named(metrics, "recovery_action")
    temperature = _named(metrics, "temperature_c")[0]
    assert temperature.limit == 89 and "slowdown 89" in str(temperature.source)


def test_an_sram_uncorrectable_error_fails_and_tells_to_reset_the_gpu() -> None:
    metrics = _judge(_gpu_ecc("<sram_uncorrectable>0</sram_uncorrectable>",
                              "<sram_uncorrectable>1</sram_uncorrectable>"))
    assert _named(metrics, "ecc.sram_uncorrectable")[0].verdict.value == "fail"
    action = _named(metrics, "recovery_action")
    assert len(action) == 1 and str(action[0].value).startswith("reset GPU")


def test_sram_correctable_errors_fail_only_above_ten_thousand() -> None:
    def correctable(count: int) -> str:
        return _named(_judge(_gpu_ecc("<sram_correctable>0</sram_correctable>",
                                      f"<sram_correctable>{count}</sram_correctable>")),
                      "ecc.sram_correctable")[0].verdict.value

    assert (correctable(10000), correctable(10001)) == ("ok", "fail")


def test_a_pending_row_remap_and_a_failed_one_name_different_actions() -> None:
    base = A100.read_text(encoding="utf-8").replace(
        "<remapped_rows>N/A</remapped_rows>",
        "<remapped_rows><remapped_row_corr>0</remapped_row_corr><remapped_row_unc>1"
        "</remapped_row_unc><remapped_row_pending>Yes</remapped_row_pending>"
        "<remapped_row_failure>No</remapped_row_failure></remapped_rows>")
    pending = _named(_judge(base), "recovery_action")
    failed = _named(_judge(base.replace("<remapped_row_failure>No", "<remapped_row_failure>Yes")),
                    "recovery_action")
    assert str(pending[0].value).startswith("reset GPU: row remap pending")
    assert str(failed[0].value).startswith("replace GPU (RMA)")


def test_a_gpu_past_its_field_diagnostic_sram_threshold_is_replaced() -> None:
    text = (FIXTURES / "synthetic-nvidia-smi-q-h100-560-two-gpus.txt").read_text(
        encoding="utf-8").replace("SRAM Threshold Exceeded       : No",
                                  "SRAM Threshold Exceeded       : Yes", 1)
    metrics = _judge(text)
    assert _named(metrics, "ecc.sram_threshold_exceeded")[0].verdict.value == "fail"
    assert str(_named(metrics, "recovery_action")[0].value).startswith("replace GPU (RMA)")


def test_a_throttled_demo_h100_at_its_slowdown_limit_fails_by_its_own_limits(
        tmp_path: Path) -> None:
    fabric = Fabric("slow-node", tmp_path)
    try:
        hot = fabric.probe("gpu.smi_q", "node004")
        cool = fabric.probe("gpu.smi_q", "node001")
    finally:
        fabric.close()
    readings = {(m.value, m.verdict.value) for m in _named(hot.metrics, "temperature_c")}
    # max operating 87, slowdown 89, shutdown 92: 88 is past max operating (warn), 89 is the
    # slowdown (fail); the fixed 84 / 90 warned on both
    assert (89, "fail") in readings and (88, "warn") in readings
    assert {m.verdict.value for m in _named(cool.metrics, "temperature_c")} == {"ok"}
    assert not _named(cool.metrics, "recovery_action")
