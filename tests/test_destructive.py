"""The one classifier of destructive commands: every reviewed form gated however it is spelled,
reads left alone, and the documented list judged example by example."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fabtui.destructive import judge

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "destructive-commands.md"

REVIEWED = [
    # The 28 variants of the reliability review (H3): every one passed the old gate.
    "re''boot", r"r\eboot", "$(printf 'reb%s' oot)", "X=reb; ${X}oot",
    'bash -c "$(echo cmVib290|base64 -d)"', """python3 -c "import os; os.system('re'+'boot')" """,
    "ip link set dev eth0 down", "ip l s eth0 down", "ifconfig eth0 down",
    "rm -fr /nonexistent", "rm -r -f /nonexistent", "rm --recursive --force /nonexistent",
    "systemctl --no-block stop sshd", "systemctl -q restart openibd",
    "mlxconfig -d mlx5_0 -y s SRIOV_EN=1", "mlxconfig -d mlx5_0 reset",
    "echo b > /proc/sysrq-trigger", "dd if=/dev/zero of=/dev/nvme0n1",
    "nvidia-smi drain -p 0000:01:00.0 -m 1", "ethtool -s eth0 speed 100000", "kill -9 -1",
    "scontrol update nodename=node001 state=down reason=x",
    "sudo reboot",  # what `sudo {{ action }}` renders to with action=reboot
    "sudo mlxfwreset -d mlx5_0 -y reset", "X=mlxfw; ${X}reset -d mlx5_0 -y reset",
    # New ones: other spellings, launchers, substitutions that run.
    "sudo -u root -- /sbin/reboot", "env -i PATH=/sbin reboot", "nohup reboot &",
    "timeout -s KILL 5 ip link set eth0 down", "echo $(shutdown -r now)", "echo `reboot`",
    "true && reboot", "false || poweroff", "if true; then halt; fi", "(cd /; rm -rf data)",
    "ssh node002 'sudo reboot'", "pdsh -w node[01-08] systemctl restart openibd",
    "su -c 'reboot'", "sudo sh -c 'echo b > /proc/sysrq-trigger'",
    "echo c | sudo tee /proc/sysrq-trigger", "$'\\x72eboot'", "sudo -s reboot",
    "find / -name x -exec rm -rf {} +", "xargs -a nodes.txt -I{} ssh {} reboot",
    "watch -n 1 ip link set eth0 down", "mlxlink -d mlx5_0 --port_state DN",
    "mlxlink -d mlx5_0 -a tg", "nvidia-smi --gpu-reset -i 0", "ip link del bond0",
    "ip -4 addr flush dev eth0", "modprobe --remove mlx5_core", "killall python",
    "scancel -u mlops", "mkfs.xfs -f /dev/nvme1n1", "kubectl cordon node001",
    "bash <<EOF\nreboot\nEOF", "bash <<< 'reboot'", "eval reboot", "eval \"$CMD\"",
]


@pytest.mark.parametrize("command", REVIEWED)
def test_every_reviewed_destructive_form_is_gated(command: str) -> None:
    assert judge(command), f"{command!r} ran ungated"


SWITCH = [
    ("config reload -y", "sonic"), ("config load_minigraph -y", "sonic"),
    ("config int shut Ethernet0", "sonic"), ("sudo config interface shutdown Ethernet0", "sonic"),
    ("reload now", "eos"), ("configure terminal\ninterface Ethernet1/1\nshutdown", "eos"),
    ("conf t\nint Et1/1\nshut", "eos"), ("conf\ninterface Ethernet1/1\nspeed forced 100gfull",
                                           "eos"),
    ("reload", "nxos"), ("conf t\nint eth1/1\nshut", "nxos"), ("run bash sudo reboot", "nxos"),
    ("bash sudo ip link set et1 down", "eos"), ("write erase", "eos"),
    ("reset factory", "onyx"), ("configure terminal\ninterface ethernet 1/1 shutdown", "onyx"),
    ("nv set interface swp1 link state down", "nvue"), ("nv config apply", "nvue"),
    ("reload now", None), ("config reload -y", None),
]


@pytest.mark.parametrize(("lines", "flavor"), SWITCH)
def test_a_switch_cli_change_is_gated_on_its_flavor(lines: str, flavor: str | None) -> None:
    assert judge(lines, flavor=flavor, switch=True), f"{lines!r} on {flavor} ran ungated"


READS = [
    "ethtool -S eth0", "ibstat", "mlxlink -d mlx5_0 -m -c -e", "nvidia-smi -q -d ECC",
    "nvidia-smi nvlink -e", "scontrol show job 4242", "scontrol update nodename=n1 state=resume",
    "for i in $(seq 1 8); do echo $i; done", "cat /sys/class/net/eth0/operstate",
    "dmesg | tail -n 50 > /tmp/out", "tail -n 2000 /var/log/syslog | grep -i pfc",
    "echo \"$(date)\" > run.txt", "mlxconfig -d mlx5_0 q", "ip -s link show dev eth0",
    "kill -1 1234", "command -v reboot", "ssh $HOST uptime", "rm -f /tmp/fabtui.lock",
    "mlnx_qos -i eth0", "sudo mlxfwreset -d mlx5_0 q", "grep -c reboot /var/log/messages",
    "echo 'reboot needed' | logger", "shutdown -c", "nv show interface swp1",
    "sudo config interface startup Ethernet0", "printf '%s\\n' 'rm -rf /'",
    "mlxlink -d mlx5_3 --pc",  # clears the counters, the link stays up (optic-replacement)
]


@pytest.mark.parametrize("command", READS)
def test_reads_and_the_end_of_a_repair_are_not_gated(command: str) -> None:
    assert judge(command) == [], command


@pytest.mark.parametrize(("lines", "flavor"), [
    ("show interfaces status", "eos"), ("sh int counters errors", "nxos"),
    ("conf t\ninterface Ethernet1/1\nno shutdown\nend", "eos"),
    ("configure terminal\ninterface Ethernet1/1\ndescription to node003\nexit\nend", "eos"),
    ("clear counters", "eos"), ("show interfaces ethernet 1/1 transceiver", "onyx"),
])
def test_cisco_like_reads_and_bringing_a_port_up_are_not_gated(lines: str,
                                                               flavor: str) -> None:
    assert judge(lines, flavor=flavor, switch=True) == []


def _documented() -> list[tuple[str, str]]:
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if len(cells) == 3 and cells[2].startswith("`"):
            example = "\n".join(part.strip().strip("`") for part in cells[2].split("<br>"))
            rows.append((cells[0], example.replace("\\|", "|")))
    return rows


def test_the_documented_list_is_what_the_classifier_gates() -> None:
    rows = _documented()
    assert len(rows) >= 80
    ungated = [(platform, example) for platform, example in rows
               if not judge(example, flavor=None if platform == "shell" else platform,
                            switch=platform != "shell")]
    assert ungated == []


def test_every_program_rule_is_documented() -> None:
    from fabtui.destructive.linux import RULES

    text = DOC.read_text(encoding="utf-8")
    missing = [name for name in RULES if not re.search(rf"(?<![\w-]){re.escape(name)}\b", text)]
    assert missing == []
