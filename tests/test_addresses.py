"""Host names and management addresses: what ssh is given is held to what a real fabric uses."""

from __future__ import annotations

import pytest

from fabtui.topology.addresses import hostname_problem, mgmt_problem


@pytest.mark.parametrize("name", ["node01", "leaf-g00-r0", "gpu-a.pod1.example.net", "N1",
                                  "10.0.0.5", "a" * 63])
def test_host_names_people_use_pass(name: str) -> None:
    assert hostname_problem(name) is None


@pytest.mark.parametrize(("name", "why"), [
    ("n2;touch${IFS}x", "';' '{' '}' not allowed"),
    ("$(reboot)", "'$' '(' ')' not allowed"),
    ("-oProxyCommand", "starts or ends with '-'"),
    ("node_01", "'_' not allowed"),
    ("a..b", "an empty label"),
    ("a" * 64, "longer than 63"),
    ("10.0.0.300", "neither a host name nor a valid IPv4 address"),
    ("nöde", "'ö' not allowed"),
])
def test_anything_else_is_not_a_host_name(name: str, why: str) -> None:
    reason = hostname_problem(name)
    assert reason is not None and why in reason


@pytest.mark.parametrize("address", ["10.0.0.5", "leaf01.mgmt", "admin@10.0.0.5", "fe80::1",
                                     "fe80::1%eth0", "2001:db8::10", "ops.user@leaf01"])
def test_management_addresses_ssh_takes_pass(address: str) -> None:
    assert mgmt_problem(address) is None


@pytest.mark.parametrize(("address", "why"), [
    ("-oProxyCommand=touch /tmp/x", "not a host name or address"),
    ("$(reboot)", "not a host name or address"),
    ("10.0.0.6:2222", "names port 2222"),
    ("[fe80::1]:22", "names port 22"),
    ("-l@host", "is not a user name"),
    ("root;x@host", "is not a user name"),
    ("fe80::zz", "is not an IPv6 address"),
    ("admin@", "an empty label"),
])
def test_management_addresses_ssh_cannot_take_are_refused(address: str, why: str) -> None:
    reason = mgmt_problem(address)
    assert reason is not None and why in reason
