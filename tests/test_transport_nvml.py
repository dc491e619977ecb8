"""NVML: a clear no-driver answer here, a full snapshot from a stand-in NVML library, and every
NVML failure that is not "not supported / not permitted" as an error the user sees."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest
from click.testing import Result

from fabtui.model.transport import ErrorKind, TransportResult
from fabtui.transports import nvml as nvml_transport
from fabtui.transports.nvml import NvmlTransport


class NVMLError(Exception):
    """As pynvml raises them: one class, the NVML return code in `value`."""

    TEXT: ClassVar[dict[int, str]] = {
        3: "Not Supported", 4: "Insufficient Permissions", 9: "Driver Not Loaded",
        12: "NVML Shared Library Not Found", 15: "GPU is lost", 999: "Unknown Error"}

    def __init__(self, value: int) -> None:
        super().__init__(self.TEXT.get(value, f"error {value}"))
        self.value = value


def NotSupported() -> NVMLError:
    return NVMLError(3)


class FakeNvml:
    """The parts of pynvml fabtui uses, for 2 GPUs; GPU 1 has pending remaps and a slow link."""

    NVMLError = NVMLError
    NVML_TEMPERATURE_GPU = 0
    NVML_CLOCK_GRAPHICS, NVML_CLOCK_SM, NVML_CLOCK_MEM = 0, 1, 2
    NVML_VOLATILE_ECC, NVML_AGGREGATE_ECC = 0, 1
    NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 0, 1
    NVML_NVLINK_MAX_LINKS = 4
    nvmlEventTypeXidCriticalError = 8

    def __init__(self) -> None:
        self.shutdowns = 0

    def nvmlInit(self) -> None: ...
    def nvmlShutdown(self) -> None:
        self.shutdowns += 1

    def nvmlDeviceGetCount(self) -> int:
        return 2

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:
        return i

    def nvmlSystemGetDriverVersion(self) -> str:
        return "550.127.05"

    def nvmlSystemGetNVMLVersion(self) -> str:
        return "12.550.127.05"

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return 12040

    def nvmlDeviceGetName(self, h: int) -> bytes:
        return b"NVIDIA H100 80GB HBM3"

    def nvmlDeviceGetUUID(self, h: int) -> str:
        return f"GPU-000{h}"

    def nvmlDeviceGetSerial(self, h: int) -> str:
        raise NotSupported()

    def nvmlDeviceGetPciInfo(self, h: int) -> Any:
        return SimpleNamespace(busId=f"00000000:{0x18 + h:02X}:00.0".encode())

    def nvmlDeviceGetUtilizationRates(self, h: int) -> Any:
        return SimpleNamespace(gpu=97, memory=40)

    def nvmlDeviceGetMemoryInfo(self, h: int) -> Any:
        return SimpleNamespace(used=1024**3, total=80 * 1024**3)

    def nvmlDeviceGetTemperature(self, h: int, sensor: int) -> int:
        return 61 + h

    def nvmlDeviceGetPowerUsage(self, h: int) -> int:
        return 612_500

    def nvmlDeviceGetEnforcedPowerLimit(self, h: int) -> int:
        return 700_000

    def nvmlDeviceGetCurrentClocksEventReasons(self, h: int) -> int:
        return 0x4 | 0x40 if h == 1 else 0

    def nvmlDeviceGetClockInfo(self, h: int, kind: int) -> int:
        return 1980 - 600 * h if kind == self.NVML_CLOCK_SM else 1593

    def nvmlDeviceGetMaxClockInfo(self, h: int, kind: int) -> int:
        return 1980

    def nvmlDeviceGetTotalEccErrors(self, h: int, error: int, counter: int) -> int:
        return 3 if (h, error) == (1, 1) else 0

    def nvmlDeviceGetRetiredPagesPendingStatus(self, h: int) -> int:
        raise NotSupported()  # Ampere and newer remap rows instead

    def nvmlDeviceGetRemappedRows(self, h: int) -> tuple[int, int, int, int]:
        return (0, 2, 1, 0) if h == 1 else (0, 0, 0, 0)

    def nvmlDeviceGetCurrPcieLinkGeneration(self, h: int) -> int:
        return 5 if h == 0 else 3

    def nvmlDeviceGetMaxPcieLinkGeneration(self, h: int) -> int:
        return 5

    def nvmlDeviceGetCurrPcieLinkWidth(self, h: int) -> int:
        return 16 if h == 0 else 8

    def nvmlDeviceGetMaxPcieLinkWidth(self, h: int) -> int:
        return 16

    def nvmlDeviceGetPcieReplayCounter(self, h: int) -> int:
        return 0

    def nvmlDeviceGetNvLinkState(self, h: int, link: int) -> int:
        if link >= 3:
            raise NVMLError(2)  # past the GPU's last link: "invalid argument"
        return 0 if (h, link) == (1, 2) else 1

    def nvmlDeviceGetNvLinkVersion(self, h: int, link: int) -> int:
        return 4

    def nvmlEventSetCreate(self) -> str:
        raise NotSupported()


def test_no_driver_is_a_clear_result_not_an_exception() -> None:
    result = asyncio.run(NvmlTransport().snapshot())
    if result.error is None:  # pragma: no cover - a machine with a GPU
        pytest.skip("this machine has an NVIDIA driver")
    assert result.error is ErrorKind.NO_DRIVER
    assert result.error_message and result.error_message.startswith("no NVIDIA driver")
    assert result.values is None and result.transport == "nvml"


def test_snapshot_reads_every_field(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeNvml()
    monkeypatch.setattr(nvml_transport, "_load", lambda: fake)
    result = asyncio.run(NvmlTransport("node001").snapshot())
    assert result.ok and result.values is not None
    values = result.values
    assert values["driver_version"] == "550.127.05" and values["gpu_count"] == 2
    healthy, sick = values["gpus"]
    assert healthy["pci_bus_id"] == "00000000:18:00.0" and healthy["serial"] is None
    assert healthy["power_draw_w"] == 612.5 and healthy["memory_total_mib"] == 81920
    assert healthy["clocks_event_reasons"] == []
    assert sick["clocks_event_reasons"] == ["sw_power_cap", "hw_thermal_slowdown"]
    assert sick["clocks_mhz"]["sm_current"] == 1380
    assert sick["ecc"]["volatile_uncorrectable"] == 3
    assert sick["remapped_rows"] == {"correctable": 0, "uncorrectable": 2, "pending": True,
                                     "failure": False}
    assert sick["retired_pages_pending"] is None
    assert sick["pcie"] == {"gen_current": 3, "gen_max": 5, "width_current": 8,
                            "width_max": 16, "replay_counter": 0}
    assert [link["active"] for link in sick["nvlinks"]] == [True, True, False]
    assert fake.shutdowns == 1


def test_a_hung_gpu_is_a_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeNvml()

    def hung() -> int:
        time.sleep(3)
        return 1

    monkeypatch.setattr(fake, "nvmlDeviceGetCount", hung)
    monkeypatch.setattr(nvml_transport, "_load", lambda: fake)
    result = asyncio.run(NvmlTransport().snapshot(timeout=0.5))
    assert result.error is ErrorKind.TIMEOUT and "hung" in (result.error_message or "")
    assert result.duration_s < 1.5


def _snapshot(monkeypatch: pytest.MonkeyPatch, fake: FakeNvml) -> TransportResult:
    monkeypatch.setattr(nvml_transport, "_load", lambda: fake)
    return asyncio.run(NvmlTransport().snapshot())


def test_a_field_we_may_not_read_is_null(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeNvml()

    def denied(h: int) -> int:
        raise NVMLError(4)

    monkeypatch.setattr(fake, "nvmlDeviceGetPowerUsage", denied)
    result = _snapshot(monkeypatch, fake)
    assert result.ok and result.values is not None
    assert result.values["gpus"][0]["power_draw_w"] is None


def test_a_lost_gpu_is_an_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeNvml()
    real = fake.nvmlDeviceGetTemperature

    def nvmlDeviceGetTemperature(h: int, sensor: int) -> int:
        if h == 1:
            raise NVMLError(15)
        return real(h, sensor)

    monkeypatch.setattr(fake, "nvmlDeviceGetTemperature", nvmlDeviceGetTemperature)
    result = _snapshot(monkeypatch, fake)
    assert result.error is ErrorKind.COMMAND and result.values is None
    assert result.error_message == ("NVML: nvmlDeviceGetTemperature on GPU 1 failed: GPU is "
                                    "lost (NVML error 15): the GPU has fallen off the bus "
                                    "(dmesg: Xid 79): it needs a reset or a reboot")
    assert fake.shutdowns == 1


@pytest.mark.parametrize("code, text", [(999, "Unknown Error (NVML error 999)"),
                                        (3, "Not Supported (NVML error 3)")])
def test_a_failed_gpu_count_is_not_zero_gpus(monkeypatch: pytest.MonkeyPatch, code: int,
                                             text: str) -> None:
    fake = FakeNvml()

    def nvmlDeviceGetCount() -> int:
        raise NVMLError(code)

    monkeypatch.setattr(fake, "nvmlDeviceGetCount", nvmlDeviceGetCount)
    result = _snapshot(monkeypatch, fake)
    assert result.error is ErrorKind.COMMAND and result.values is None
    assert result.error_message == f"NVML: nvmlDeviceGetCount failed: {text}"


def test_a_driver_that_is_not_loaded_is_not_no_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeNvml()

    def init() -> None:
        raise NVMLError(9)

    monkeypatch.setattr(fake, "nvmlInit", init)
    result = _snapshot(monkeypatch, fake)
    assert result.error is ErrorKind.COMMAND
    assert "NVML could not start failed: Driver Not Loaded (NVML error 9): the NVIDIA kernel " \
           "module is not loaded" in (result.error_message or "")

    def no_library() -> None:
        raise NVMLError(12)

    monkeypatch.setattr(fake, "nvmlInit", no_library)
    assert _snapshot(monkeypatch, fake).error is ErrorKind.NO_DRIVER


def test_the_probe_reports_a_broken_driver_and_exits_3(monkeypatch: pytest.MonkeyPatch,
                                                       run: Callable[..., Result]) -> None:
    fake = FakeNvml()

    def nvmlDeviceGetHandleByIndex(i: int) -> int:
        raise NVMLError(15)

    monkeypatch.setattr(fake, "nvmlDeviceGetHandleByIndex", nvmlDeviceGetHandleByIndex)
    monkeypatch.setattr(nvml_transport, "_load", lambda: fake)
    result = run("probe", "run", "gpu.nvml")
    assert result.exit_code == 3
    assert result.stdout.startswith("gpu.nvml on localhost: ERROR")
    assert "NVML: nvmlDeviceGetHandleByIndex on GPU 0 failed: GPU is lost" in result.stdout
