"""The Grafana dashboards for the workspace's fabric (`fabtui prom dashboards OUTDIR`): built by
`fabtui.prom.dashboards` from the topology, with the `[prometheus]` table's label mapping and
metric names when the config has one (the defaults otherwise: no Prometheus is asked), and
written one JSON file per dashboard.

Side effects: `write` creates OUTDIR and writes its files (atomically, `fabtui.paths`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fabtui.errors import RequestError
from fabtui.paths import make_output_folder, write_output
from fabtui.prom.dashboards import Board, SiteError, boards
from fabtui.prom.labels import LabelMap
from fabtui.workspace.core import Workspace


def build(ws: Workspace) -> list[Board]:
    """Every dashboard for the workspace's fabric and label mapping (RequestError when the
    topology's rails cannot be told apart by NIC device name)."""
    prom = ws.settings.prometheus
    labels = LabelMap(**dict(prom.labels)) if prom is not None else LabelMap()
    names = dict(prom.metrics) if prom is not None else {}
    try:
        return boards(ws.graph(), labels, names)
    except SiteError as exc:
        raise RequestError(f"{ws.settings.topology}: {exc}") from None


@dataclass(frozen=True)
class Written:
    """One dashboard written: where, and how many panels (rows not counted) it has."""

    board: Board
    path: Path
    panels: int


def write(ws: Workspace, folder: Path) -> list[Written]:
    """Write every dashboard to `folder` (created), one `fabtui-<name>.json` each. A folder
    that cannot be written is a RequestError saying why."""
    built = build(ws)
    make_output_folder(folder)
    written = []
    for board in built:
        path = folder / board.filename
        write_output(path, board.json())
        written.append(Written(board, path, board.panel_count))
    return written
