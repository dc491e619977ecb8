"""The runbook expression language: what it evaluates, what it refuses, and shell quoting."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fabtui.runbooks.expr import Evaluator, ExprError, Unknown, UnknownValue, names
from fabtui.runbooks.functions import fabric_functions
from fabtui.runbooks.templates import render, render_shell, shell_problems

DOM = {"verdict": "fail", "metrics": [
    {"name": "rx_power_dbm", "value": None, "component": "leaf:Ethernet16/lane1",
     "verdict": "fail"},
    {"name": "rx_power_dbm", "value": -2.1, "component": "leaf:Ethernet16/lane2",
     "verdict": "ok"},
    {"name": "optic_serial", "value": "MT1", "component": "leaf:Ethernet16", "verdict": "ok"}]}


def evaluate(text: str, **scope: object) -> object:
    return Evaluator(scope, fabric_functions(None)).evaluate(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("1 + 2 * 3", 7),
    ("dom.verdict == 'fail' and not ok", True),
    ("value(dom, 'optic_serial')", "MT1"),
    ("[m.component for m in metrics(dom, 'rx_power_dbm') if m.verdict == 'fail']",
     ["leaf:Ethernet16/lane1"]),
    ("port_of(first(failing(dom)))", "leaf:Ethernet16"),
    ("dom.missing is None", True),
    ("'x' if dom.verdict in ['fail', 'warn'] else 'y'", "x"),
    ("len(dom.metrics) > 2", True),
    ("'node003:mlx5_5'.split(':')[0]", "node003"),
    ("regex('rank (?P<rank>\\\\d+)', 'stuck rank 21 here').rank", "21"),
    ("None < 3", False),
    ("true and not false", True),
])
def test_evaluates(text: str, expected: object) -> None:
    assert evaluate(text, dom=DOM, ok=False) == expected


@pytest.mark.parametrize("text", [
    "__import__('os').system('true')",
    "dom.__class__",
    "(lambda: 1)()",
    "open('/etc/passwd')",
    "eval('1')",
    "[x for x in range(10)]",
    "'a' * 10**9",
    "dom.verdict.__len__()",
])
def test_refuses_what_is_not_the_language(text: str) -> None:
    with pytest.raises(ExprError):
        evaluate(text, dom=DOM)


def test_undefined_names_are_reported_and_listed() -> None:
    with pytest.raises(ExprError, match="'port' is not defined"):
        evaluate("port + 1")
    assert names("metric(dom, 'x').value > limit and [m for m in ms if m]") == \
        {"dom", "limit", "ms"}


def test_work_is_bounded() -> None:
    many = list(range(100))
    with pytest.raises(ExprError, match="too much work"):
        evaluate("[a for a in xs for b in xs for c in xs]", xs=many)


HOSTILE = ["; rm -rf /tmp/never", "$(touch {marker})", "`touch {marker}`", "a\nb; touch {marker}",
           "it's \"quoted\" $HOME", "--help", ""]


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_values_reach_the_shell_as_data(value: str, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    value = value.format(marker=marker)
    evaluator = Evaluator({"v": value})
    for template in ('printf "%s" {{ v }}', 'printf "%s" "pre {{ v }} post"'):
        script = render_shell(template, evaluator)
        done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True)
        expected = value if "pre" not in template else f"pre {value} post"
        assert done.stdout == expected
    assert not marker.exists()


def test_single_quotes_cannot_hold_a_substitution() -> None:
    with pytest.raises(ExprError, match="single quotes"):
        render_shell("echo '{{ v }}'", Evaluator({"v": "x"}))
    assert shell_problems("echo '{{ v }}' {{ w }}") == \
        ["{{ v }} inside single quotes cannot be quoted safely"]


def test_plain_templates() -> None:
    assert render("{{ a }} and {{ b }} and {{ c }}", Evaluator({"a": 1.0, "b": None,
                                                                 "c": [1, 2]})) == "1 and  and 1,2"


def test_an_unknown_value_stays_named_and_never_becomes_empty() -> None:
    unknown = Unknown("serial", "captured from the output of step 2 block 'dom'")
    scope = Evaluator({"serial": unknown, "port": "leaf:Ethernet16"}, fabric_functions(None))
    with pytest.raises(UnknownValue) as raised:
        scope.evaluate("serial.split(':')[0]")
    assert raised.value.unknown is unknown
    assert scope.evaluate("port if true else serial") == "leaf:Ethernet16"
    with pytest.raises(UnknownValue):
        render("{{ serial }}", scope)  # a real run never renders a placeholder
    seen: list[tuple[str, Unknown]] = []
    assert render("old {{ serial }} in {{ port }}", scope, seen) == \
        "old ‹serial› in leaf:Ethernet16"
    assert render_shell("echo {{ serial }} {{ port.split(':')[1] }}", scope, seen) == \
        "echo ‹serial› Ethernet16"
    assert seen == [("‹serial›", unknown)]
    assert unknown.derived("s2").why == "set from serial, captured from the output of step 2 " \
        "block 'dom'"


FIXTURES = Path(__file__).parent / "fixtures"


def test_hca_links_reads_ibstat_among_other_tools_and_gives_a_down_port_no_speed() -> None:
    """A configuration read runs `ibv_devinfo`, `ibstat` and `show_gids` in one block: the ports
    come from ibstat's part only (ibv_devinfo's `state: PORT_ACTIVE` must not land on them), and
    a port that is down has no speed (real ibstat prints `Rate: 10` there), only its states."""
    output = "\n".join((FIXTURES / path).read_text() for path in (
        "ibstat/github-b300-host-ibstat-cx8-mt4131-cx7-mt4129.txt",
        "ibv_devinfo/felixfu-ibv_devinfo-cx3-ib.txt",
        "show-gids/slurmv4-show_gids-mlx5_0-roce.txt"))
    links = Evaluator({"out": output}, fabric_functions(None)).evaluate("hca_links(out)")
    by_device = {link["device"]: link for link in links}
    down = by_device["mlx5_0"]
    assert (down["up"], down["rate"]) == (False, None)
    assert down["evidence"] == "ibstat State: Down, Physical state: Disabled"
    up = by_device["mlx5_2"]
    assert (up["up"], up["rate"], up["state"]) == (True, 100, "Active")
    assert "mlx4_0" not in by_device  # ibv_devinfo's device, not ibstat's
    # ibstat's last port (mlx5_9) is followed by ibv_devinfo's `state: PORT_ACTIVE (4)`.
    assert (by_device["mlx5_9"]["state"], by_device["mlx5_9"]["up"]) == ("Down", False)
    assert Evaluator({"out": "no ibstat here"}, fabric_functions(None)).evaluate(
        "hca_links(out)") == []
