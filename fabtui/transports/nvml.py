"""GPU state through NVML (pynvml, from the nvidia-ml-py distribution).

One call reads every GPU the driver sees: utilisation, memory, temperature, power, clocks and the
reasons they are held down, ECC counts, retired pages and remapped rows, XID events (those that
arrive while we listen, where the driver supports events), PCIe generation and width current vs
max, and the state of each NVLink. Each field is read on its own: a field the GPU or driver does
not support (or we may not read) is null. With no NVIDIA driver at all the result says so
(`error = no-driver`), so a laptop or a CPU node gets a clear answer. Any other NVML failure (the
kernel module not loaded, a GPU fallen off the bus, a driver/library mismatch, "unknown") is an
error result naming the GPU and the call, never read as "no GPUs" or a missing field.

NVML calls can block on a sick GPU, so the snapshot runs in a worker thread under a timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from fabtui.model.transport import ErrorKind, TransportResult

T = TypeVar("T")
_Read = Callable[..., Any]
"""`_call` bound to one GPU: `read(fn, *args, absent=...)`."""

_THROTTLE_REASONS = {
    "gpu_idle": 0x1, "applications_clocks_setting": 0x2, "sw_power_cap": 0x4,
    "hw_slowdown": 0x8, "sync_boost": 0x10, "sw_thermal_slowdown": 0x20,
    "hw_thermal_slowdown": 0x40, "hw_power_brake_slowdown": 0x80,
    "display_clock_setting": 0x100,
}
"""NVML clock event (throttle) reason bits, as defined in nvml.h."""

# NVML return codes (nvml.h; stable across driver versions).
NOT_SUPPORTED, NO_PERMISSION, NOT_FOUND, FUNCTION_NOT_FOUND = 3, 4, 6, 13
INVALID_ARGUMENT, DRIVER_NOT_LOADED, TIMEOUT, LIBRARY_NOT_FOUND = 2, 9, 10, 12
GPU_IS_LOST, LIB_RM_VERSION_MISMATCH = 15, 18
_ABSENT = frozenset({NOT_SUPPORTED, NO_PERMISSION, NOT_FOUND, FUNCTION_NOT_FOUND})
"""Codes that mean "this GPU or driver has no such field (for us)": the value is null."""
_HINTS = {
    DRIVER_NOT_LOADED: "the NVIDIA kernel module is not loaded (lsmod | grep nvidia; dmesg)",
    GPU_IS_LOST: "the GPU has fallen off the bus (dmesg: Xid 79): it needs a reset or a reboot",
    LIB_RM_VERSION_MISMATCH: "the NVML library and the kernel driver differ in version (an "
                             "upgrade without a reboot?)",
}

_NVML_LOCK = threading.Lock()
"""NVML init/shutdown is process-global; snapshots must not interleave them."""


class NvmlTransport:
    """Reads a snapshot of every local GPU through NVML."""

    name = "nvml"

    def __init__(self, target: str = "localhost", *, xid_listen_s: float = 0.0) -> None:
        self.target = target
        self.xid_listen_s = xid_listen_s
        """How long to listen for XID events (0: do not subscribe)."""

    async def snapshot(self, *, timeout: float = 30.0) -> TransportResult:
        """All GPUs' state, or a readable no-driver / timeout result."""
        started = datetime.now(UTC)
        try:
            values = await asyncio.wait_for(asyncio.to_thread(self._read), timeout)
        except TimeoutError:
            return self._result(started, error=ErrorKind.TIMEOUT,
                                message=f"NVML did not answer within {timeout:g}s (a GPU may "
                                        "be hung: check dmesg for Xid 79 / 'fallen off the bus')")
        except _NoDriver as exc:
            return self._result(started, error=ErrorKind.NO_DRIVER, message=str(exc))
        except NvmlFailure as exc:
            return self._result(started, error=ErrorKind.COMMAND, message=str(exc))
        return self._result(started, values=values)

    def _result(self, started: datetime, *, values: dict[str, Any] | None = None,
                error: ErrorKind | None = None, message: str | None = None) -> TransportResult:
        return TransportResult(target=self.target, transport=self.name, command="nvml snapshot",
                               started_at=started, ended_at=datetime.now(UTC), values=values,
                               error=error, error_message=message)

    def _read(self) -> dict[str, Any]:
        nvml = _load()
        with _NVML_LOCK:
            try:
                nvml.nvmlInit()
            except nvml.NVMLError as exc:
                if _code(exc) == LIBRARY_NOT_FOUND:
                    raise _NoDriver(f"no NVIDIA driver: NVML could not start ({_text(exc)})") \
                        from None
                raise NvmlFailure(_failure("NVML could not start", exc)) from None
            try:
                return self._read_all(nvml)
            finally:
                with contextlib.suppress(Exception):  # a failure already reported wins
                    nvml.nvmlShutdown()

    def _read_all(self, nvml: Any) -> dict[str, Any]:
        count = _call(nvml, nvml.nvmlDeviceGetCount, absent=frozenset()) or 0
        handles = [_call(nvml, nvml.nvmlDeviceGetHandleByIndex, i, gpu=i, absent=frozenset())
                   for i in range(count)]
        xids = self._listen_for_xids(nvml, handles) if self.xid_listen_s > 0 else None
        gpus = [_gpu(nvml, index, handle) for index, handle in enumerate(handles)]
        if xids is not None:
            for gpu in gpus:
                gpu["xid_events"] = xids.get(gpu["index"], [])
        return {
            "driver_version": _text(_call(nvml, nvml.nvmlSystemGetDriverVersion)),
            "nvml_version": _text(_call(nvml, nvml.nvmlSystemGetNVMLVersion)),
            "cuda_driver_version": _call(nvml, nvml.nvmlSystemGetCudaDriverVersion),
            "gpu_count": count,
            "gpus": gpus,
        }

    def _listen_for_xids(self, nvml: Any, handles: list[Any]) -> dict[int, list[int]] | None:
        """XID events during the listen window, by GPU index (None where unsupported)."""
        event_set = _call(nvml, nvml.nvmlEventSetCreate)
        if event_set is None:
            return None
        index_of: dict[str, int] = {}
        try:
            for index, handle in enumerate(handles):
                _call(nvml, nvml.nvmlDeviceRegisterEvents, handle,
                      nvml.nvmlEventTypeXidCriticalError, event_set, gpu=index)
                uuid = _text(_call(nvml, nvml.nvmlDeviceGetUUID, handle, gpu=index))
                index_of[uuid] = index
            found: dict[int, list[int]] = {}
            remaining_ms = int(self.xid_listen_s * 1000)
            while remaining_ms > 0:
                try:
                    event = nvml.nvmlEventSetWait_v2(event_set, min(remaining_ms, 1000))
                except nvml.NVMLError as exc:
                    if _code(exc) != TIMEOUT:
                        raise NvmlFailure(_failure("waiting for XID events", exc)) from None
                    remaining_ms -= 1000  # nothing this second
                    continue
                uuid = _text(_call(nvml, nvml.nvmlDeviceGetUUID, event.device))
                found.setdefault(index_of.get(uuid, -1), []).append(int(event.eventData))
                remaining_ms -= 1
            return found
        finally:
            with contextlib.suppress(Exception):
                nvml.nvmlEventSetFree(event_set)


class _NoDriver(Exception):
    pass


class NvmlFailure(Exception):
    """NVML failed in a way that is not "field not supported": the message says what and where."""


def _load() -> Any:
    try:
        import pynvml
    except ImportError:
        raise _NoDriver("no NVIDIA driver: the pynvml module (nvidia-ml-py) is not "
                        "installed") from None
    return pynvml


def _call(nvml: Any, fn: Callable[..., T], *args: Any, gpu: int | None = None,
          absent: frozenset[int] = _ABSENT) -> T | None:
    """One NVML read: None when the code is one of `absent` (not supported, not permitted, not
    found); any other NVML error raises `NvmlFailure` naming the call (and GPU)."""
    try:
        return fn(*args)
    except nvml.NVMLError as exc:
        if _code(exc) in absent:
            return None
        where = f" on GPU {gpu}" if gpu is not None else ""
        raise NvmlFailure(_failure(f"{getattr(fn, '__name__', 'NVML call')}{where}", exc)) \
            from None


def _code(exc: BaseException) -> int | None:
    value = getattr(exc, "value", None)
    return value if isinstance(value, int) else None


def _failure(what: str, exc: BaseException) -> str:
    code = _code(exc)
    hint = _HINTS.get(code) if code is not None else None
    return f"NVML: {what} failed: {_text(str(exc)) or type(exc).__name__}" + \
        (f" (NVML error {code})" if code is not None else "") + (f": {hint}" if hint else "")


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return "" if value is None else str(value)


def _gpu(nvml: Any, index: int, handle: Any) -> dict[str, Any]:
    """Everything fabtui reads about one GPU."""
    read = functools.partial(_call, nvml, gpu=index)
    util = read(nvml.nvmlDeviceGetUtilizationRates, handle)
    memory = read(nvml.nvmlDeviceGetMemoryInfo, handle)
    pci = read(nvml.nvmlDeviceGetPciInfo, handle)
    power = read(nvml.nvmlDeviceGetPowerUsage, handle)
    limit = read(nvml.nvmlDeviceGetEnforcedPowerLimit, handle)
    reasons_fn = getattr(nvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
        nvml.nvmlDeviceGetCurrentClocksThrottleReasons
    reasons = read(reasons_fn, handle)
    return {
        "index": index,
        "name": _text(read(nvml.nvmlDeviceGetName, handle)),
        "uuid": _text(read(nvml.nvmlDeviceGetUUID, handle)),
        "serial": _text(read(nvml.nvmlDeviceGetSerial, handle)) or None,
        "pci_bus_id": _text(pci.busId) if pci is not None else None,
        "utilization_gpu_pct": util.gpu if util is not None else None,
        "utilization_memory_pct": util.memory if util is not None else None,
        "memory_used_mib": memory.used // (1024 * 1024) if memory is not None else None,
        "memory_total_mib": memory.total // (1024 * 1024) if memory is not None else None,
        "temperature_c": read(nvml.nvmlDeviceGetTemperature, handle,
                               nvml.NVML_TEMPERATURE_GPU),
        "power_draw_w": power / 1000 if power is not None else None,
        "power_limit_w": limit / 1000 if limit is not None else None,
        "clocks_mhz": _clocks(nvml, handle, read),
        "clocks_event_reasons": ([name for name, bit in _THROTTLE_REASONS.items()
                                  if reasons & bit] if reasons is not None else None),
        "ecc": _ecc(nvml, handle, read),
        "retired_pages_pending": _pending(nvml, handle, read),
        "remapped_rows": _remapped(nvml, handle, read),
        "pcie": {
            "gen_current": read(nvml.nvmlDeviceGetCurrPcieLinkGeneration, handle),
            "gen_max": read(nvml.nvmlDeviceGetMaxPcieLinkGeneration, handle),
            "width_current": read(nvml.nvmlDeviceGetCurrPcieLinkWidth, handle),
            "width_max": read(nvml.nvmlDeviceGetMaxPcieLinkWidth, handle),
            "replay_counter": read(nvml.nvmlDeviceGetPcieReplayCounter, handle),
        },
        "nvlinks": _nvlinks(nvml, handle, read),
    }


def _clocks(nvml: Any, handle: Any, read: _Read) -> dict[str, int | None]:
    kinds = {"graphics": nvml.NVML_CLOCK_GRAPHICS, "sm": nvml.NVML_CLOCK_SM,
             "memory": nvml.NVML_CLOCK_MEM}
    clocks: dict[str, int | None] = {}
    for name, kind in kinds.items():
        clocks[f"{name}_current"] = read(nvml.nvmlDeviceGetClockInfo, handle, kind)
        clocks[f"{name}_max"] = read(nvml.nvmlDeviceGetMaxClockInfo, handle, kind)
    return clocks


def _ecc(nvml: Any, handle: Any, read: _Read) -> dict[str, int | None]:
    counts: dict[str, int | None] = {}
    for counter, counter_name in ((nvml.NVML_VOLATILE_ECC, "volatile"),
                                  (nvml.NVML_AGGREGATE_ECC, "aggregate")):
        for error, error_name in ((nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED, "correctable"),
                                  (nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, "uncorrectable")):
            counts[f"{counter_name}_{error_name}"] = read(nvml.nvmlDeviceGetTotalEccErrors,
                                                           handle, error, counter)
    return counts


def _pending(nvml: Any, handle: Any, read: _Read) -> bool | None:
    status = read(nvml.nvmlDeviceGetRetiredPagesPendingStatus, handle)
    return None if status is None else bool(status)


def _remapped(nvml: Any, handle: Any, read: _Read) -> dict[str, Any] | None:
    rows = read(nvml.nvmlDeviceGetRemappedRows, handle)
    if rows is None:
        return None
    correctable, uncorrectable, pending, failure = rows
    return {"correctable": correctable, "uncorrectable": uncorrectable,
            "pending": bool(pending), "failure": bool(failure)}


def _nvlinks(nvml: Any, handle: Any, read: _Read) -> list[dict[str, Any]] | None:
    links = []
    for link in range(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18)):
        # Past the GPU's last link NVML says "invalid argument": there is no such link.
        state = read(nvml.nvmlDeviceGetNvLinkState, handle, link,
                     absent=_ABSENT | {INVALID_ARGUMENT})
        if state is None:
            continue
        links.append({"link": link, "active": bool(state),
                      "version": read(nvml.nvmlDeviceGetNvLinkVersion, handle, link)})
    return links or None
