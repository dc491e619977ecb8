"""What to do about a GPU after an Xid: the recovery action, named, with its source.

Two sources, the driver's own first:

- **Xid 154** ("GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)") is
  the driver summarising the action the other Xids need (NVIDIA Xid catalog, row 154: "seen in
  conjunction with other Xids and summarizes the recovery action required"). Its code is NVML's
  `nvmlDeviceGpuRecoveryAction_t`: 0 none, 1 GPU reset, 2 node reboot, 3 drain P2P, 4 drain P2P
  and reset, 5 recover IMEX domain, 6 PCIe bus reset, 7 system reboot (NVML API reference;
  cuda-python `DeviceGpuRecoveryAction`). The newest Xid 154 of a GPU is its current state.
- Otherwise the catalog's **immediate resolution bucket** of each Xid seen
  (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html): 46 RESET_GPU, 74
  WORKFLOW_NVLINK_ERR ("a GPU reset or node reboot is needed to clear this error"; the fault may
  be at the remote end of the link), 140 and 143 RESET_GPU, 144-150 (NVLink5, B200/GB200)
  WORKFLOW_NVLINK5_ERR (the action depends on the error status: follow the Xid 154 the driver
  prints with it). Codes not listed here get no action from fabtui: the catalog row for the
  installed driver says.

Pure functions over kernel-log events.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

CATALOG = "NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html)"

RECOVERY_ACTIONS: dict[int, tuple[str, str]] = {
    0: ("none", "no action: start new GPU work"),
    1: ("reset GPU", "drain the GPU's jobs, then reset it (nvidia-smi -r) or reboot the node"),
    2: ("reboot node", "drain the node and reboot it: the fault may have left the OS "
                       "inconsistent"),
    3: ("drain P2P", "stop peer-to-peer (NVLink) work with this GPU, then follow the next Xid "
                     "154"),
    4: ("drain P2P and reset GPU", "drain peer-to-peer work, then reset the GPU"),
    5: ("recover IMEX domain", "recover the node's IMEX (multi-node NVLink) domain"),
    6: ("reset PCIe bus", "reset the GPU's PCIe bus (node maintenance)"),
    7: ("reboot system", "drain the node and reboot it"),
}
"""NVML `nvmlDeviceGpuRecoveryAction_t` value -> (action, what the on-call does)."""

_BY_TEXT = {"none": 0, "gpu reset required": 1, "node reboot required": 2, "drain p2p": 3,
            "drain and reset": 4}
"""The texts the catalog lists for Xid 154, for a line whose code is not printed."""

CATALOG_ACTIONS: dict[int, tuple[str, str]] = {
    46: ("reset GPU", "GPU stopped processing: catalog RESET_GPU (then CONTACT_SUPPORT if it "
                      "recurs)"),
    74: ("reset GPU or reboot node", "NVLink error: catalog WORKFLOW_NVLINK_ERR, a GPU reset or "
                                     "node reboot clears it; check the link's far end (a GPU "
                                     "or NVSwitch) too"),
    140: ("reset GPU", "uncorrectable ECC escaped row remapping: catalog RESET_GPU, contact the "
                       "vendor if it persists (RMA)"),
    143: ("reset GPU", "GPU initialisation error: catalog RESET_GPU"),
    **{code: ("follow Xid 154", f"NVLink5 error (Xid {code}): catalog WORKFLOW_NVLINK5_ERR, the "
                                "action depends on the error status; the driver's Xid 154 says "
                                "it") for code in range(144, 151)},
}
"""Xid -> (action, why) from the catalog's immediate resolution bucket (verified rows only)."""

_RANK = {"none": 0, "follow Xid 154": 1, "drain P2P": 2, "recover IMEX domain": 2,
         "reset GPU": 3, "drain P2P and reset GPU": 3, "reset PCIe bus": 3,
         "reset GPU or reboot node": 4, "reboot node": 5, "reboot system": 5}

_XID154 = re.compile(r"recovery action changed from\s+(?P<old>0x[0-9a-fA-F]+|\d+)?\s*"
                     r"\((?P<old_text>[^)]*)\)\s+to\s+(?P<new>0x[0-9a-fA-F]+|\d+)?\s*"
                     r"\((?P<new_text>[^)]*)\)", re.IGNORECASE)


@dataclass(frozen=True)
class GpuAction:
    """The recovery action one GPU needs now."""

    gpu: str
    """The GPU as the log names it (its PCI address)."""
    action: str
    """`none`, `reset GPU`, `reboot node`, ... (RECOVERY_ACTIONS / CATALOG_ACTIONS)."""
    why: str
    source: str


def xid154_action(message: str) -> tuple[int, str] | None:
    """(NVML action code, the driver's text) of an Xid 154 message; None if it is not one."""
    found = _XID154.search(message)
    if not found:
        return None
    text = found.group("new_text").strip()
    raw = found.group("new")
    code = int(raw, 0) if raw else _BY_TEXT.get(text.lower())
    return (code, text) if code is not None else None


def gpu_actions(events: Iterable[Any]) -> list[GpuAction]:
    """Per GPU, the action its Xids call for: the newest Xid 154 where there is one, else the
    strongest catalog action of its Xids. GPUs with neither are left out."""
    latest_154: dict[str, tuple[int, str]] = {}
    catalog: dict[str, list[int]] = {}
    for event in events:
        if event.type != "xid" or event.code is None:
            continue
        gpu = event.pci or event.device or "?"
        if event.code == 154:
            parsed = xid154_action(event.message or event.text or "")
            if parsed is not None:
                latest_154[gpu] = parsed
        elif event.code in CATALOG_ACTIONS:
            catalog.setdefault(gpu, []).append(event.code)
    actions = []
    for gpu in sorted(set(latest_154) | set(catalog)):
        if gpu in latest_154:
            code, text = latest_154[gpu]
            action, why = RECOVERY_ACTIONS.get(code, (f"action {code}", "unknown recovery "
                                                      "action code: see the driver's NVML"))
            actions.append(GpuAction(gpu, action, f"the driver's Xid 154: {text} ({why})",
                                     "Xid 154 (NVIDIA Xid catalog row 154; NVML "
                                     "nvmlDeviceGpuRecoveryAction_t)"))
            continue
        codes = sorted(set(catalog[gpu]))
        best = max(codes, key=lambda c: _RANK.get(CATALOG_ACTIONS[c][0], 0))
        action, why = CATALOG_ACTIONS[best]
        actions.append(GpuAction(gpu, action, f"Xid {best}: {why}" + (
            f" (also Xid {', '.join(str(c) for c in codes if c != best)})"
            if len(codes) > 1 else ""), CATALOG))
    return actions
