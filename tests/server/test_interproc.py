"""The messages between processes (`interproc.messages`): each kind goes through
msgpack and back as it was, and what a process cannot read is refused, saying why."""

from __future__ import annotations

import types
from typing import Any, Literal, Union, get_args, get_origin

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st
from twisted.internet import task

from pisyedili.server.cluster import LOCAL
from pisyedili.server.interproc.messages import (
    ACTS,
    FIELDS,
    KINDS,
    SPOKEN,
    VERSION,
    Refused,
    decode,
    encode,
)
from pisyedili.server.net.relay import Relay
from pisyedili.server.people.session import Sessions

_PLAIN: dict[Any, st.SearchStrategy[Any]] = {
    str: st.text(max_size=12),
    int: st.integers(-(2**63), 2**63 - 1),
    bool: st.booleans(),
    bytes: st.binary(max_size=24),
    type(None): st.none(),
    Any: st.recursive(st.none() | st.booleans() | st.integers(-99, 99) | st.text(max_size=5),
                      lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                      max_leaves=6),
}


def _of(hint: Any) -> st.SearchStrategy[Any]:
    """Values of type `hint` as a schema gives it."""
    origin = get_origin(hint)
    if origin is Union or origin is types.UnionType:
        return st.one_of(*(_of(one) for one in get_args(hint)))
    if origin is Literal:
        return st.sampled_from(get_args(hint))
    if origin is list:
        return st.lists(_of(get_args(hint)[0]), max_size=3)
    if origin is dict:
        return st.dictionaries(st.text(max_size=5), _PLAIN[Any], max_size=3)
    return _PLAIN[hint]


@st.composite
def _messages(draw: st.DrawFn, kinds: frozenset[str] = frozenset(KINDS)) -> dict[str, Any]:
    """A message of one of `kinds`: every required field, some of the optional ones."""
    kind = draw(st.sampled_from(sorted(kinds)))
    hints, required = FIELDS[kind]
    message: dict[str, Any] = {"k": kind}
    for field, hint in hints.items():
        if field not in ("k", "v") and (field in required or draw(st.booleans())):
            message[field] = draw(_of(hint))
    if kind == "ask":
        message["m"] = draw(_messages(ACTS))
    return message


def _through_redis(message: dict[str, Any]) -> object:
    """`message` as the other process reads it: sent, packed, unpacked."""
    return msgpack.unpackb(msgpack.packb(encode(message), use_bin_type=True), raw=False)


@given(_messages())
def test_every_kind_comes_back_as_it_was_sent(message: dict[str, Any]) -> None:
    assert decode(_through_redis(message)) == {**message, "v": VERSION}


@given(_messages(), st.integers().filter(lambda v: v not in SPOKEN))
def test_a_version_this_process_does_not_read_is_refused(message: dict[str, Any],
                                                        version: int) -> None:
    with pytest.raises(Refused, match=f"of version {version}, where this process reads"):
        decode({**message, "v": version})


@given(_messages())
def test_a_message_without_a_version_is_read_as_version_1(message: dict[str, Any]) -> None:
    # A process from before versions wrote no `v`: its messages are version 1's.
    assert 1 in SPOKEN
    assert decode(message) == message


@given(st.text().filter(lambda k: k not in KINDS))
def test_an_unknown_kind_is_refused(kind: str) -> None:
    with pytest.raises(Refused, match="of an unknown kind") as refused:
        decode({"k": kind, "v": VERSION, "p": "1"})
    assert refused.value.kind == kind


@given(_messages(), st.data())
def test_a_required_field_missing_or_of_another_type_is_refused(
        message: dict[str, Any], data: st.DataObject) -> None:
    _, required = FIELDS[message["k"]]
    field = data.draw(st.sampled_from(sorted(required - {"k"})))
    without = {key: value for key, value in message.items() if key != field}
    with pytest.raises(Refused, match=f"without {field}"):
        decode(without)
    with pytest.raises(Refused, match=f"whose '{field}' is not of type"):
        decode({**message, field: object()})


def test_an_ask_carries_only_an_operators_act() -> None:
    asked = {"k": "ask", "from": "2", "r": 1}
    assert decode({**asked, "m": {"k": "find", "name": "Ayşe"}})["k"] == "ask"
    with pytest.raises(Refused, match="an act of kind 'out'"):
        decode({**asked, "m": {"k": "out", "p": "1", "b": b""}})
    with pytest.raises(Refused, match="not a message but list"):
        decode([{"k": "out", "p": "1", "b": b""}])


def test_the_relay_handles_every_kind_and_acts_on_every_act() -> None:
    clock = task.Clock()
    relay = Relay(LOCAL, Sessions(clock, 60.0), clock)
    assert set(relay._handling()) == set(KINDS)
    assert set(relay._acting()) == set(ACTS)
