"""What takes something down or destroys data on a Linux host (a GPU node, the operator's machine,
a SONiC or Cumulus switch's shell): the reviewed forms, per program, judged on the words a
command really runs with (`shell.simple_commands` has removed the quotes; `commands` here has
unwrapped `sudo`, `env`, `nohup`, `timeout`, …).

Each rule is a function of the arguments; it returns why the command is destructive (what it
does, in the words of a prompt: "reboots the machine"), or None. The list is in
`docs/destructive-commands.md` beside an example of each form, and the tests run every example.
"""

from __future__ import annotations

import re
from collections.abc import Callable

Rule = Callable[[list[str]], str | None]


def _options(args: list[str], with_value: frozenset[str] = frozenset()) -> list[str]:
    """`args` without options (and without the values of the options in `with_value`)."""
    out: list[str] = []
    skip = False
    ended = False
    for arg in args:
        if skip:
            skip = False
        elif ended or not arg.startswith("-") or arg == "-":
            out.append(arg)
        elif arg == "--":
            ended = True
        elif arg in with_value:
            skip = True
    return out


def _short_flags(args: list[str]) -> set[str]:
    """Every single-letter flag in `args` (`-rf` gives r and f) and every long option."""
    flags: set[str] = set()
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("--"):
            flags.add(arg.split("=", 1)[0])
        elif arg.startswith("-") and len(arg) > 1:
            flags.update(arg[1:])
    return flags


def _prefix_of(word: str, full: str, shortest: int = 1) -> bool:
    """`word` abbreviates `full` (as `ip` and switch CLIs take `l` for `link`)."""
    return shortest <= len(word) <= len(full) and full.startswith(word)


def power(args: list[str]) -> str | None:
    return None if "-c" in args or "--help" in args else "reboots or powers off the machine"


def init(args: list[str]) -> str | None:
    runlevel = _options(args)
    return "changes the runlevel: halts or reboots the machine" \
        if runlevel and runlevel[0] in ("0", "6", "1", "s", "S", "single") else None


_SYSTEMCTL_VALUES = frozenset({"-H", "--host", "-M", "--machine", "-t", "--type", "-p",
                               "--property", "-s", "--signal", "-n", "--lines", "-o",
                               "--output", "--kill-whom", "--root", "--job-mode"})
_SYSTEMCTL_STOPS = frozenset({
    "stop", "restart", "try-restart", "reload-or-restart", "try-reload-or-restart",
    "condrestart", "force-reload", "disable", "mask", "kill", "isolate", "reboot", "poweroff",
    "halt", "kexec", "emergency", "rescue", "suspend", "hibernate", "hybrid-sleep",
    "soft-reboot", "switch-root", "default", "exit", "clean", "freeze"})


def systemctl(args: list[str]) -> str | None:
    words = _options(args, _SYSTEMCTL_VALUES)
    if words and words[0] in _SYSTEMCTL_STOPS:
        what = " ".join(words[1:]) or "the machine"
        return f"systemctl {words[0]}: stops or restarts {what}"
    return None


def service(args: list[str]) -> str | None:
    words = _options(args)
    if len(words) >= 2 and words[1] in ("stop", "restart", "force-reload", "try-restart"):
        return f"{words[1]}s the {words[0]} service"
    return None


def init_script(args: list[str]) -> str | None:
    words = _options(args)
    return f"{words[0]}s a service" if words and words[0] in ("stop", "restart",
                                                                 "force-reload") else None


_IP_OBJECTS = ("address", "addrlabel", "link", "route", "rule", "neighbour", "netns", "tunnel",
               "maddress", "mroute", "ntable", "xfrm", "monitor", "tuntap", "l2tp", "fou",
               "macsec", "tcp_metrics", "token", "netconf", "ila", "vrf", "sr", "nexthop",
               "mptcp", "ioam", "stats")
_IP_VALUES = frozenset({"-n", "-netns", "-b", "-batch", "-rc", "-rcvbuf", "-l", "-loops",
                        "-f", "-family"})


def ip(args: list[str]) -> str | None:
    words = _options(args, _IP_VALUES)
    if not words:
        return None
    obj = next((o for o in _IP_OBJECTS if _prefix_of(words[0], o)), words[0])
    verb = words[1] if len(words) > 1 else ""
    if obj == "link" and _prefix_of(verb, "set") and "down" in words[2:]:
        return "takes a network interface down"
    if obj == "link" and verb and _prefix_of(verb, "delete"):
        return "deletes a network interface"
    if obj in ("address", "route", "rule", "neighbour", "nexthop") and verb and \
            (_prefix_of(verb, "flush") or _prefix_of(verb, "delete", 1)
             or verb in ("replace", "change")):
        return f"removes or rewrites the host's {obj}es" if obj == "address" \
            else f"removes or rewrites the host's {obj}s"
    return None


def ifconfig(args: list[str]) -> str | None:
    return "takes a network interface down" if "down" in args[1:] else None


def nmcli(args: list[str]) -> str | None:
    words = _options(args)
    hit = next((w for w in words if w in ("down", "disconnect", "delete", "off")), None)
    return f"nmcli {hit}: takes networking down" if hit else None


def rm(args: list[str]) -> str | None:
    flags = _short_flags(args)
    if flags & {"r", "R", "--recursive"}:
        return "deletes directory trees (rm recursive)"
    return None


def find(args: list[str]) -> str | None:
    return "deletes the files it finds (find -delete)" if "-delete" in args else None


def mkfs(args: list[str]) -> str | None:
    return "writes a new file system: the device's data is gone"


def wipe(args: list[str]) -> str | None:
    return "erases a disk or its partition table"


def partition(args: list[str]) -> str | None:
    listing = {"-l", "--list", "-s", "--show-size", "print"} & set(args)
    return None if listing else "rewrites a disk's partition table"


def dd(args: list[str]) -> str | None:
    out = next((a[3:] for a in args if a.startswith("of=")), "")
    return f"writes raw data onto {out}" if dangerous_path(out) else None


def kill(args: list[str]) -> str | None:
    rest = args
    if rest and rest[0] in ("-s", "-n", "--signal"):
        rest = rest[2:]
    elif rest and rest[0].startswith("-") and rest[0] != "--" and \
            (rest[0][1:].isdigit() or rest[0][1:].isupper() or rest[0][1:].startswith("SIG")):
        rest = rest[1:]  # the signal
    words = [a for a in rest if a != "--"]
    return "kills every process the user may signal (pid -1)" if "-1" in words else None


def kill_by_name(args: list[str]) -> str | None:
    return "kills processes by name (a training job's too)"


def modules(args: list[str]) -> str | None:
    return "unloads a kernel module (its devices go away)"


def modprobe(args: list[str]) -> str | None:
    return modules(args) if _short_flags(args) & {"r", "--remove"} else None


_ETHTOOL_SETS = frozenset({
    "-s", "--change", "-r", "--negotiate", "-G", "--set-ring", "-L", "--set-channels", "-A",
    "--pause", "-K", "--features", "--offload", "-E", "--change-eeprom", "-f", "--flash",
    "--reset", "--set-priv-flags", "--set-fec", "--set-eee", "-C", "--coalesce", "-X",
    "--set-rxfh-indir", "--rxfh", "--set-module"})


def ethtool(args: list[str]) -> str | None:
    hit = next((a for a in args if a in _ETHTOOL_SETS), None)
    return f"ethtool {hit}: changes the link or NIC settings (the link may flap)" if hit else None


_NVIDIA_SMI_CHANGES = frozenset({
    "-r", "--gpu-reset", "-e", "--ecc-config", "-mig", "--multi-instance-gpu", "-c",
    "--compute-mode", "-p", "--reset-ecc-errors", "-pm", "--persistence-mode", "-pl",
    "--power-limit", "-lgc", "--lock-gpu-clocks", "-rgc", "-lmc", "-rmc", "-ac",
    "--applications-clocks", "-rac"})


def nvidia_smi(args: list[str]) -> str | None:
    if args and args[0] == "drain":
        return "drains a GPU (takes it out of use)"
    if args and args[0] == "mig" and any(a.startswith(("-d", "--destroy")) for a in args[1:]):
        return "destroys MIG instances"
    if args and not args[0].startswith("-"):
        return None  # another subcommand (`nvlink -e` reads error counters): its own options
    hit = next((a.split("=", 1)[0] for a in args if a.split("=", 1)[0] in _NVIDIA_SMI_CHANGES),
               None)
    return f"nvidia-smi {hit}: resets or reconfigures a GPU" if hit else None


def devlink(args: list[str]) -> str | None:
    words = _options(args)
    if "reload" in words:
        return "reloads the device's driver (its links go down)"
    if "show" not in words[:3] and any(w in ("set", "del", "split", "unsplit", "recover",
                                             "flash") for w in words):
        return "changes the device's configuration"
    return None


# --- Mellanox / NVIDIA networking tools ------------------------------------------------
_MLXCONFIG_VALUES = frozenset({"-d", "--dev", "-b", "--db", "-f", "--file", "-p", "--profile",
                               "-a", "--private_key", "-k", "--key", "-u", "--user"})


def mlxconfig(args: list[str]) -> str | None:
    words = _options(args, _MLXCONFIG_VALUES)
    verb = words[0].lower() if words else ""
    if verb in ("s", "set", "r", "reset", "set_raw", "apply", "clear_semaphore"):
        return f"mlxconfig {verb}: changes the NIC's firmware configuration (takes effect at " \
            "the next reset)"
    return None


def fwreset(args: list[str]) -> str | None:
    words = _options(args, frozenset({"-d", "--device", "-l", "--level", "-t", "--type"}))
    return None if words and words[0] in ("q", "query") else \
        "resets the NIC's firmware (its links go down)"


def flint(args: list[str]) -> str | None:
    words = _options(args, frozenset({"-d", "--device", "-i", "--image", "--key"}))
    verbs = {"b", "burn", "bb", "e", "erase", "ww", "wb", "sg", "smg", "sv", "set_key",
             "swreset", "rw", "cs", "hw", "ri"}
    hit = next((w for w in words if w.lower() in verbs), None)
    return f"{hit}: writes the NIC's firmware" if hit else None


def mlxlink(args: list[str]) -> str | None:
    for index, arg in enumerate(args):
        value = args[index + 1].upper() if index + 1 < len(args) else ""
        if arg in ("-a", "--port_state") and value in ("DN", "DS", "TG", "RS"):
            return f"mlxlink {arg} {value}: takes the link down or toggles it"
        if arg in ("--speeds", "--link_mode_force", "--fec", "--test_mode", "--tm", "--prbs",
                   "--set_serdes", "--serdes_tx", "--pprt", "--pptt", "--write", "--gw"):
            return f"mlxlink {arg}: changes the link's settings (the link goes down)"
    return None


def mlxreg(args: list[str]) -> str | None:
    return "writes a device register" if "--set" in args or "-s" in args else None


def mst(args: list[str]) -> str | None:
    return "stops or restarts the mst driver" if args and args[0] in ("stop", "restart") \
        else None


def ibportstate(args: list[str]) -> str | None:
    changes = {"disable", "reset", "off", "speed", "espeed", "fdr10", "width", "vls", "mtu",
               "lid", "smlid", "lmc", "mkey", "mkeylease", "mkeyprot"}
    hit = next((a for a in _options(args) if a in changes), None)
    return f"ibportstate {hit}: takes an InfiniBand port down or changes it" if hit else None


def mlnx_qos(args: list[str]) -> str | None:
    words = [a.split("=", 1)[0] for a in args if a.startswith("-")]
    changes = [w for w in words if w not in ("-i", "--interface", "-a", "-h", "--help")]
    return "changes the NIC's QoS (trust, PFC, ETS): lossless traffic may break" if changes \
        else None


# --- Slurm and Kubernetes ---------------------------------------------------------------
_SLURM_DOWN_STATES = ("down", "drain", "fail", "failing", "power_down", "power_down_asap",
                      "power_down_force", "reboot")


def scontrol(args: list[str]) -> str | None:
    words = _options(args)
    verb = words[0].lower() if words else ""
    if verb in ("reboot", "reboot_nodes", "shutdown", "requeue", "requeuehold", "suspend",
                "takeover", "delete", "cancel"):
        return f"scontrol {verb}: stops jobs or takes nodes out of service"
    if verb == "update":
        for word in words[1:]:
            key, _, value = word.partition("=")
            if key.lower() == "state" and value.lower().startswith(_SLURM_DOWN_STATES):
                return f"takes nodes out of service (state={value})"
    return None


def scancel(args: list[str]) -> str | None:
    return "cancels jobs"


def sacctmgr(args: list[str]) -> str | None:
    words = [a.lower() for a in _options(args)]
    return "deletes accounting records" if words and words[0] in ("delete", "remove") else None


def kubectl(args: list[str]) -> str | None:
    words = _options(args, frozenset({"-n", "--namespace", "--context", "-l", "--selector",
                                      "--kubeconfig", "-o"}))
    if words and words[0] in ("drain", "cordon", "delete", "taint", "replace", "scale"):
        return f"kubectl {words[0]}: takes nodes or workloads out of service"
    return None


def firewall(args: list[str]) -> str | None:
    hit = next((a for a in args if a in ("-F", "--flush", "-X", "--delete-chain", "-P",
                                         "--policy", "-D", "--delete")), None)
    return f"{hit}: rewrites the firewall (the management path may go)" if hit else None


def nft(args: list[str]) -> str | None:
    words = _options(args)
    return "rewrites the firewall (the management path may go)" if words and \
        words[0] in ("flush", "delete", "destroy", "replace") else None


# --- SONiC and Cumulus, which are Linux too -----------------------------------------------
def sonic_config(args: list[str]) -> str | None:
    """SONiC's `config`: every subcommand changes the switch (click takes unique prefixes:
    `config int shut`). Safe: bringing an interface back up (`startup`, the end of a repair)
    and its description (a label)."""
    words = _options(args)
    if len(words) >= 2 and _prefix_of(words[0], "interface", 3) and \
            (_prefix_of(words[1], "startup", 4) or _prefix_of(words[1], "description", 4)):
        return None  # a port back up, a port's label: nothing goes down
    if not words:
        return None
    return f"config {' '.join(words[:2])}: changes the switch's configuration"


def sonic_reboot(args: list[str]) -> str | None:
    return "reboots the switch"


def sfputil(args: list[str]) -> str | None:
    words = _options(args)
    return f"sfputil {words[0]}: resets or powers down an optic" if words and \
        words[0] in ("reset", "lpmode", "write-eeprom", "firmware") else None


def nv(args: list[str]) -> str | None:
    """Cumulus NVUE: `nv set`/`nv unset` stage a change and `nv config apply` makes it; bringing
    a link back up (`nv set interface X link state up`) is the one safe set."""
    words = _options(args)
    verb = words[0] if words else ""
    if verb in ("set", "unset"):
        if verb == "set" and words[-2:] == ["state", "up"] and "link" in words:
            return None
        return f"nv {verb}: changes the switch's configuration"
    if verb == "config" and len(words) > 1 and words[1] in ("apply", "replace", "patch",
                                                            "delete", "restore"):
        return f"nv config {words[1]}: applies a configuration to the switch"
    if verb == "action" and len(words) > 1 and words[1] not in ("clear",):
        return f"nv action {words[1]}: resets, reboots or changes the switch"
    return None


RULES: dict[str, Rule] = {
    "reboot": power, "shutdown": power, "poweroff": power, "halt": power,
    "init": init, "telinit": init, "systemctl": systemctl, "service": service,
    "ip": ip, "ifdown": lambda a: "takes a network interface down", "ifconfig": ifconfig,
    "nmcli": nmcli, "rm": rm, "find": find, "shred": wipe, "wipefs": wipe,
    "blkdiscard": wipe, "sgdisk": partition, "fdisk": partition, "sfdisk": partition,
    "gdisk": partition, "parted": partition, "dd": dd, "kill": kill, "killall": kill_by_name,
    "killall5": kill_by_name, "pkill": kill_by_name, "rmmod": modules, "modprobe": modprobe,
    "ethtool": ethtool, "nvidia-smi": nvidia_smi, "devlink": devlink,
    "kexec": lambda a: "boots another kernel", "mlxconfig": mlxconfig,
    "mstconfig": mlxconfig, "mlxfwreset": fwreset, "mstfwreset": fwreset, "flint": flint,
    "mstflint": flint, "mlxlink": mlxlink, "mstlink": mlxlink, "mlxreg": mlxreg,
    "mstreg": mlxreg, "mst": mst, "ibportstate": ibportstate, "mlnx_qos": mlnx_qos,
    "scontrol": scontrol, "scancel": scancel, "sacctmgr": sacctmgr, "kubectl": kubectl,
    "iptables": firewall, "ip6tables": firewall, "nft": nft,
    "config": sonic_config, "fast-reboot": sonic_reboot, "warm-reboot": sonic_reboot,
    "soft-reboot": sonic_reboot, "sfputil": sfputil, "nv": nv,
}
"""Program name (its basename) -> rule."""

PREFIXED: tuple[tuple[str, Rule], ...] = (("mkfs", mkfs), ("mke2fs", mkfs), ("mkswap", mkfs))
"""Programs judged by the start of their name (`mkfs.ext4`)."""

_DANGEROUS_PATH = re.compile(
    r"^/proc/sysrq-trigger$|"
    r"^/dev/(?!null$|zero$|stdout$|stderr$|stdin$|tty|fd/|pts/|shm/|random$|urandom$)\S|"
    r"^/sys/\S*/(?:remove|reset|unbind|sriov_numvfs|power/control)$|"
    r"^/sys/class/net/\S+/(?:operstate|carrier|flags|mtu)$|"
    r"^/boot/|^/etc/(?:fstab|passwd|shadow|sudoers)$")


def dangerous_path(path: str) -> bool:
    """True when writing to `path` crashes, reboots or erases something (the SysRq trigger,
    a disk device, a PCI device's remove or reset, boot files)."""
    return bool(_DANGEROUS_PATH.search(path))


def rule_for(path: str) -> Rule | None:
    """The rule judging the program at `path` (a name or a path), or None: nothing known
    destructive."""
    if "/init.d/" in path or path.startswith("rc."):
        return init_script
    program = path.rsplit("/", 1)[-1]
    found = RULES.get(program)
    if found is not None:
        return found
    return next((rule for prefix, rule in PREFIXED if program.startswith(prefix)), None)
