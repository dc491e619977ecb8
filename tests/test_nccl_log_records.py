"""The NCCL log parser's plain records are its models' fields: what `fabtui parse --as
nccl-log` writes without pydantic is exactly the `NcclLog` contract."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import BaseModel

from fabtui.model.parsed import SCHEMA_VERSION
from fabtui.model.parsed.nccl_log import (
    NcclInterface,
    NcclLog,
    NcclLogEvent,
    NcclLogRank,
    NcclNetDevice,
)
from fabtui.parsers import nccl_log
from fabtui.parsers.nccl_log import _records as records

PAIRS = [(records.Event, NcclLogEvent), (records.Rank, NcclLogRank),
         (records.NetDevice, NcclNetDevice), (records.Interface, NcclInterface)]


@pytest.mark.parametrize("record, model", PAIRS, ids=[m.__name__ for _, m in PAIRS])
def test_records_have_their_models_fields_in_order_with_the_same_defaults(
        record: type[records.Record], model: type[BaseModel]) -> None:
    fields = dataclasses.fields(record)
    assert [f.name for f in fields] == list(model.model_fields)
    for item in fields:
        info = model.model_fields[item.name]
        if item.default is not dataclasses.MISSING:
            assert not info.is_required() and info.default == item.default, item.name
        elif item.default_factory is not dataclasses.MISSING:
            assert info.default_factory is item.default_factory, item.name
        else:
            assert info.is_required(), item.name


def test_a_dumped_record_is_its_model_dump_and_a_moved_event_only_changes_its_line() -> None:
    event = records.Event(type="nccl_warn", rank=3, host="h", seq=None, op=None,
                          timeout_ms=None, peer=None, status=12, line=7, message="m", pid=9)
    assert records.dump(event) == NcclLogEvent.model_validate(records.dump(event)).model_dump(
        mode="json")
    moved = records.moved(event, 70)
    assert (moved.line, event.line) == (70, 7)
    assert records.dump(moved) == {**records.dump(event), "line": 70}


def test_the_plain_result_is_the_validated_models_dump() -> None:
    text = "host:1:2 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\n" \
           "host:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\n" \
           "host:1:3 [0] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer " \
           "10.0.0.2<4242> with status=12 opcode=0 len=0 vendor err 129 (Send)\n" \
           "host:1:2 [0] NCCL INFO ncclCommInitRank comm 0x5603 rank 1 nranks 2 cudaDev 0 " \
           "busId 9a000 commId 0xde44 - Init START\n"
    plain = nccl_log.parse_lines(text.split("\n"))
    assert plain.data["schema_version"] == SCHEMA_VERSION == nccl_log.SCHEMA_VERSION
    assert isinstance(plain.assemble(), NcclLog)
    # The rank entries are dumped one at a time as they are written (a big job has 100,000s).
    ranks = list(plain.data["ranks"])  # type: ignore[call-overload]
    assert plain.assemble().model_dump(mode="json") == {**plain.data, "ranks": ranks}
    assert plain.data["transports"] and plain.data["events"] and ranks


def test_a_process_rank_is_a_number_beside_a_communicator_that_printed_mnnvl() -> None:
    # The scan keeps many small tuples once each (issue 42's memory): (16, True) == (16, 1),
    # so a pool shared by a communicator's (nRanks, MNNVL) and a process's (nranks, rank)
    # would give the WARN event below rank `true`.
    text = "a:1:1 [0] NCCL INFO comm 0x10 rank 3 nRanks 16 nNodes 2 localRanks 8 localRank 3 " \
           "MNNVL 1\n" \
           "b:2:2 [1] NCCL INFO ncclCommInitRank comm 0x20 rank 1 nranks 16 cudaDev 1 " \
           "busId 1b000 commId 0x99 - Init START\n" \
           "b:2:3 [1] transport/net_ib.cc:1296 NCCL WARN NET/IB : Got completion from peer " \
           "10.0.0.2<4242> with status=12 opcode=0 len=0 vendor err 129 (Send)\n"
    events = nccl_log.parse_lines(text.split("\n")).data["events"]
    assert isinstance(events, list)
    warn = [event for event in events if event["host"] == "b"]
    assert [(event["rank"], type(event["rank"])) for event in warn] == [(1, int)]
