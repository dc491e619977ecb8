"""`nvidia-smi nvlink -e` on a simulated node: per GPU, 18 links of Replay / Recovery / CRC
error counters, in the driver's layout (tests/fixtures/nvlink-errors, from stas00/ml-engineering:
`GPU 0: NAME (UUID: ...)` then `\\t Link N: Replay Errors: 0` lines). Zero on a healthy node; an
`nvlink-errors` fault makes them grow with time (the links stay up)."""

from __future__ import annotations

from fabtui.model.topology import Node
from fabtui.sim.core import Sim, gpu_product
from fabtui.sim.scenario import FaultKind

LINKS = 18
"""NVLinks per H100 / B200 GPU (fourth and fifth generation NVLink: 18 links)."""


def _errors(sim: Sim, host: str, gpu: int, link: int, t: float) -> tuple[int, int, int]:
    """(replay, recovery, CRC) counters of `link` at `t`: what the nvlink-errors faults on
    this GPU have added since each started."""
    replay = recovery = crc = 0
    for fault in sim.faults:
        if fault.kind is not FaultKind.NVLINK_ERRORS or fault.host != host:
            continue
        if fault.gpu is not None and fault.gpu != gpu:
            continue
        start = fault.spec.at
        end = t if fault.spec.until is None else min(t, fault.spec.until)
        lasted = max(0.0, end - start)
        params = fault.spec.params
        if link == 0:
            replay += int(lasted * float(params.get("replay_per_s", 40)))
            crc += int(lasted * float(params.get("crc_per_s", 12)))
            recovery += int(lasted // float(params.get("recovery_every_s", 300)))
    return replay, recovery, crc


def nvlink_errors(sim: Sim, node: Node, t: float) -> str:
    """The `nvidia-smi nvlink -e` text of `node` at `t`."""
    lines = []
    for gpu in node.gpus:
        lines.append(f"GPU {gpu.index}: {gpu_product(gpu.model).name} "
                     f"(UUID: GPU-sim-{gpu.index})")
        for link in range(LINKS):
            replay, recovery, crc = _errors(sim, node.hostname, gpu.index, link, t)
            lines += [f"\t Link {link}: Replay Errors: {replay}",
                      f"\t Link {link}: Recovery Errors: {recovery}",
                      f"\t Link {link}: CRC Errors: {crc}"]
    return "\n".join(lines) + "\n"
