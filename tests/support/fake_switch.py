"""A tiny interactive switch CLI for the CLI-session transport tests (not the demo fabric).

Started by a test sshd as its ForceCommand; the flavor comes from the ssh command line
(`ssh -tt host eos`). It prints the flavor's prompt, pages long replies with the flavor's pager
prompt until paging is turned off, rejects unknown commands the way the flavor does, and has a
few commands that misbehave on purpose (slow, huge, or dropping the connection).
"""

from __future__ import annotations

import os
import sys
import time

PROMPTS = {
    "sonic": "admin@sonic:~$ ", "nvue": "cumulus@leaf01:mgmt:~$ ", "eos": "leaf01#",
    "nxos": "leaf01# ", "onyx": "leaf01 [standalone: master] # ", "linux": "root@host:~# ",
}
ERRORS = {
    "sonic": 'Error: No such command "{cmd}".', "nvue": "Error: '{cmd}' is not one of ['show']",
    "eos": "% Invalid input (at token 0: '{cmd}')", "nxos": "% Invalid command at '^' marker.",
    "onyx": '% Unrecognized command "{cmd}".', "linux": "bash: {cmd}: command not found",
}
PAGING_OFF = ("terminal length 0", "no cli session paging enable", "export PAGER=cat")
PAGE = 20


def out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def paged(lines: list[str], paging: bool, flavor: str) -> None:
    for i, line in enumerate(lines, start=1):
        out(line + "\r\n")
        if paging and i % PAGE == 0 and i < len(lines):
            more = "(END)" if flavor in ("sonic", "nvue") else " --More-- "
            out(more)
            key = os.read(0, 1).decode(errors="replace")
            out("\r" + " " * len(more) + "\r")
            if key == "q":
                return


def main() -> None:
    flavor = (os.environ.get("SSH_ORIGINAL_COMMAND") or "eos").split()[0]
    prompt = PROMPTS[flavor]
    paging = True
    os.system("stty -icanon -echo min 1 2>/dev/null")  # keys one by one; we echo ourselves
    out("Last login: never\r\n" + prompt)
    buffer = ""
    while True:
        char = os.read(0, 1).decode(errors="replace")
        if not char:
            return
        if char not in "\r\n":
            buffer += char
            out(char)  # echo, as a terminal does
            continue
        out("\r\n")
        command, buffer = buffer.strip(), ""
        words = command.split()
        if not command:
            pass
        elif command in ("exit", "logout"):
            return
        elif any(command.startswith(p) for p in PAGING_OFF) or command.startswith("terminal"):
            paging = False if not command.startswith("terminal width") else paging
        elif command == "show version":
            out(f"Fake {flavor} switch 1.0\r\nUptime: 42 days\r\n")
        elif words[:2] == ["show", "long"]:
            paged([f"line {i}" for i in range(1, int(words[2]) + 1)], paging, flavor)
        elif words[:2] == ["show", "slow"]:
            time.sleep(float(words[2]))
            out("slow reply\r\n")
        elif words[:2] == ["show", "big"]:
            row = "x" * 99 + "\r\n"
            for _ in range(int(words[2]) * 10_000):
                sys.stdout.write(row)
            sys.stdout.flush()
        elif words[:2] == ["show", "drop-once"]:
            if os.path.exists(words[2]):
                out("recovered\r\n")
            else:
                open(words[2], "w").close()
                out("partial\r\n")
                os._exit(1)
        else:
            out(ERRORS[flavor].format(cmd=words[0]) + "\r\n")
        out(prompt)


if __name__ == "__main__":
    main()
