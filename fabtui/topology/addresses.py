"""Host names and management addresses, checked when a topology is read.

A node's `hostname` (or its `mgmt`) and a switch's `name` (or its `mgmt`) become the destination
of an `ssh` command line. The transport already refuses an option-like or blank destination, but
only at probe time and without a line; here the same values are held to what a real fabric uses,
so `n2;touch${IFS}x`, `-oProxyCommand=...` or `$(reboot)` are input errors of the topology file:

- a host name: dot-separated RFC 1123 labels (letters, digits, `-` inside), 253 characters at most;
- a management address: a host name, an IPv4 or an IPv6 address (a `%zone` allowed), optionally
  preceded by `user@` (ssh reads the login from the destination). A `:port` is refused with a hint:
  the transport passes the address to ssh as it is, and ssh takes a port only from `-p` or its
  config file.

Pure functions: each returns a one-line reason, or None when the value is acceptable.
"""

from __future__ import annotations

import ipaddress
import re

_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_NUMERIC = re.compile(r"[0-9.]+")
_USER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,31}")
_PORT = re.compile(r"(?P<host>[^:]+|\[[^\]]*\]):(?P<port>[0-9]+)")
_HOSTNAME_RULE = "use letters, digits and '-' in dot-separated labels (RFC 1123)"


def hostname_problem(name: str) -> str | None:
    """Why `name` is not a host name ssh can be given, or None."""
    if len(name) > 253:
        return f"is {len(name)} characters long; a host name has at most 253"
    bad = sorted({c for c in name if not (c.isascii() and (c.isalnum() or c in "-."))})
    if bad:
        shown = " ".join(repr(c) for c in bad[:5])
        return f"is not a host name: {shown} not allowed; {_HOSTNAME_RULE}"
    labels = name.split(".")
    if _NUMERIC.fullmatch(name):
        try:
            ipaddress.IPv4Address(name)
        except ValueError:
            return "is neither a host name nor a valid IPv4 address"
        return None
    for label in labels:
        if not _LABEL.fullmatch(label):
            why = "an empty label" if not label else \
                "a label longer than 63 characters" if len(label) > 63 else \
                f"label {label!r} starts or ends with '-'"
            return f"is not a host name: {why}; {_HOSTNAME_RULE}"
    return None


def mgmt_problem(address: str) -> str | None:
    """Why `address` is not a management address ssh can be given, or None."""
    user, at, host = address.rpartition("@")
    if at and not _USER.fullmatch(user):
        return (f"login {user!r} before '@' is not a user name (letters, digits, '_', '.', '-'; "
                "not starting with '-' or a digit)")
    if ":" in host:
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            port = _PORT.fullmatch(host)
            if port is not None:
                return (f"names port {port.group('port')}, which fabtui cannot pass on: give the "
                        "address alone and set the port in ~/.ssh/config (Host ... Port ...)")
            return "is not an IPv6 address"
        return None
    reason = hostname_problem(host)
    if reason is None:
        return None
    return reason.replace("is not a host name:", "is not a host name or address:", 1)
