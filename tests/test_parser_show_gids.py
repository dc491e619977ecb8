"""show_gids: empty IPv4 and netdev cells, versions, n_gids_found, pdsh prefix, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabtui.parsers import show_gids
from fabtui.parsers.errors import ParseError

FIXTURES = Path(__file__).parent / "fixtures" / "show-gids"


def test_roce_table() -> None:
    result = show_gids.parse((FIXTURES / "slurmv4-show_gids-mlx5_0-roce.txt").read_text())
    assert result.n_gids_found == 4 and len(result.gids) == 4
    first, last = result.gids[0], result.gids[3]
    assert (first.dev, first.port, first.index, first.ipv4, first.version) == \
        ("mlx5_0", 1, 0, None, "v1")
    assert first.gid == "fe80:0000:0000:0000:a288:c2ff:fe63:5a20"
    assert (last.index, last.ipv4, last.version, last.netdev) == \
        (3, "10.99.91.39", "v2", "ens108np0")


def test_mixed_vendors_without_ipv4() -> None:
    result = show_gids.parse(
        (FIXTURES / "cnnotes-show_gids-hrn3-and-mlx5-bond-no-ipv4.txt").read_text())
    assert [(g.dev, g.version, g.netdev) for g in result.gids] == [
        ("hrn3_bond_0", "v2", "bond0"), ("hrn3_bond_0", "v2", "bond0"),
        ("mlx5_bond_0", "v1", "bond1"), ("mlx5_bond_0", "v2", "bond1")]
    assert result.gids[1].ipv4 == "27.105.180.3"
    assert [g.ipv4 for g in result.gids[2:]] == [None, None]


def test_ib_ports_without_netdev_and_pdsh_prefix() -> None:
    result = show_gids.parse(
        (FIXTURES / "synthetic-show_gids-pdsh-ib-ports-without-netdev.txt").read_text())
    assert result.n_gids_found == 6
    assert result.gids[0].netdev is None and result.gids[0].version == "v1"
    assert result.gids[5].netdev == "ens3f0np0" and result.gids[5].ipv4 == "192.168.10.5"


def test_count_mismatch_is_a_warning() -> None:
    text = "mlx5_0\t1\t0\tfe80:0000:0000:0000:0000:0000:0000:0001\t\t\tv1\teth0\nn_gids_found=3\n"
    result = show_gids.parse(text)
    assert len(result.gids) == 1 and result.warnings


def test_refusals() -> None:
    with pytest.raises(ParseError) as caught:
        show_gids.parse("# show_gids\nDEV\tPORT\tINDEX\tGID\t\tIPv4\tVER\tDEV\n")
    assert caught.value.line == 2
    with pytest.raises(ParseError):
        show_gids.parse("mlx5_0 port 1 ==> ib0 (Up)\n")
