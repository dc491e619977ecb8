"""A NIC link that is down, read by a runbook through `ibstat`, reads as a link down with
ibstat's states, never as a speed: real ibstat prints `Rate: 10` on a down port.

customer-acceptance, cluster-bringup-audit and network-expansion pin this in their own declared
cases (optic-degrading at 50m); slow-node reaches its host read only on a slow node, so its case
is a scenario made here: node004 throttled, with the optic behind its mlx5_1 dead."""

from __future__ import annotations

import asyncio
from pathlib import Path

from fabtui.model.runbook import RunbookTest
from fabtui.paths import demo_topology, shipped_dir, shipped_templates
from fabtui.probes.catalog import load_catalog
from fabtui.runbooks.library import load_library
from fabtui.runbooks.testing import run_test

SLOW_WITH_A_DEAD_LINK = """\
name: slow-node-link-down
description: node004's GPUs throttled, and the optic behind its mlx5_1 dead
duration: 1h
start: 5m
timeline:
  - at: 2m
    fault: slow-node
    component: node004
    params: {job_factor: 0.55}
  - at: 3m
    fault: nccl-hang
    component: node004:gpu1
"""


def test_slow_node_names_a_down_link_of_the_suspect_as_down(tmp_path: Path) -> None:
    scenario = tmp_path / "slow-node-link-down.yaml"
    scenario.write_text(SLOW_WITH_A_DEAD_LINK, encoding="utf-8")
    book = load_library([shipped_dir("runbooks")]).runbooks["slow-node"]
    case = RunbookTest(name="slow node with a link down", scenario=str(scenario),
                       answers={"drained": "yes", "job-stopped": "yes"})
    outcome = asyncio.run(run_test(book, case, topology=demo_topology(),
                                   template_dirs=[shipped_templates()],
                                   catalog=load_catalog([shipped_dir("probes")])))
    assert outcome.summary is not None, outcome.problems
    text = outcome.summary.text()
    assert "read-the-host" in outcome.summary.path, text
    assert ("NIC links not up: node004:mlx5_1 link down (ibstat State: Down, Physical state: "
            "Polling)") in text
    assert " 10," not in text and "NIC rates" not in text  # no speed claimed for a down link
