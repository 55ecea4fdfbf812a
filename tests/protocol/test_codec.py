"""Frame-body codec: round trips, and every refusal with its stable code."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import struct
import uuid
from typing import Any

import msgpack
import pytest
from hypothesis import given
from hypothesis import strategies as st
from protocol_examples import EXAMPLES

from pisyedili.protocol import (
    CLIENT_FRAME_LIMITS,
    MAX_CLIENT_FRAME,
    SERVER_FRAME_LIMITS,
    Direction,
    ProtocolError,
    decode,
    decode_message,
    encode,
    frame,
    limits_for,
    make_hello,
)
from pisyedili.protocol.codec import refused_id


def refused(body: bytes, limits: Any = CLIENT_FRAME_LIMITS) -> str:
    with pytest.raises(ProtocolError) as info:
        decode(body, limits)
    code: str = info.value.code
    return code


def packed(value: object) -> bytes:
    body: bytes = msgpack.packb(value, use_bin_type=True)
    return body


@pytest.mark.parametrize(
    "msg",
    [
        {"type": "hello", "protocol": 2, "name": "Ayşe", "features": ["chat"]},
        {"type": "move", "id": 7, "move": {"kind": "play", "card": "Jh", "suit": "s"}},
        {"type": "x", "f": 1.5, "n": None, "b": True, "neg": -3, "big": 2**63},
        {"type": "nested", "a": {"b": {"c": {"d": [1]}}}},
    ],
)
def test_round_trip(msg: dict[str, Any]) -> None:
    assert decode(encode(msg)) == msg


def test_frame_is_big_endian_length_then_body() -> None:
    msg = {"type": "ping", "id": 1}
    data = frame(msg)
    (length,) = struct.unpack(">I", data[:4])
    assert length == len(data) - 4
    assert data[4:] == encode(msg)


def test_hello_frame_bytes_are_the_documented_ones() -> None:
    # docs/protocol.md, "A worked example", shows exactly these bytes.
    data = frame(make_hello("Ayşe"))
    assert data.hex(" ") == (
        "00 00 00 21 83 a4 74 79 70 65 a5 68 65 6c 6c 6f a8 70 72 6f "
        "74 6f 63 6f 6c 02 a4 6e 61 6d 65 a5 41 79 c5 9f 65"
    )


def test_oversized_body_is_refused_before_unpacking() -> None:
    body = packed({"type": "chat", "text": "x" * MAX_CLIENT_FRAME})
    assert refused(body) == "frame_too_large"


def test_server_frames_may_be_larger_than_client_frames() -> None:
    msg = {"type": "lobby", "tables": ["x" * 1000] * 100}
    body = encode(msg)
    assert len(body) > CLIENT_FRAME_LIMITS.frame
    assert decode(body, SERVER_FRAME_LIMITS) == msg
    assert refused(body, CLIENT_FRAME_LIMITS) == "frame_too_large"


def test_encode_with_limits_refuses_what_the_peer_would_refuse() -> None:
    with pytest.raises(ProtocolError) as info:
        encode({"type": "chat", "text": "x" * MAX_CLIENT_FRAME}, CLIENT_FRAME_LIMITS)
    assert info.value.code == "frame_too_large"


def test_encode_needs_a_string_type() -> None:
    with pytest.raises(TypeError):
        encode({"id": 1})


# What we send is packed by ormsgpack, what arrives read by msgpack (codec.py): the
# bytes must be msgpack's own, to the last one, and so must what is refused.

NATIVE = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False) | st.text() | st.binary(),
    lambda inner: st.lists(inner, max_size=20)
    | st.dictionaries(st.text(max_size=40), inner, max_size=20),
    max_leaves=60)


@given(st.dictionaries(st.text(max_size=40), NATIVE, max_size=20), st.text(max_size=300))
def test_encode_packs_what_msgpack_packs_byte_for_byte(msg: dict[str, Any], kind: str) -> None:
    msg = {"type": kind, **msg}
    assert encode(msg) == msgpack.packb(msg, use_bin_type=True)


@pytest.mark.parametrize("msg", [msg for by_type in EXAMPLES.values()
                                 for msg in by_type.values()],
                         ids=lambda msg: str(msg["type"]))
def test_every_documented_message_packs_as_msgpack_packs_it(msg: dict[str, Any]) -> None:
    assert encode(msg) == msgpack.packb(msg, use_bin_type=True)


@dataclasses.dataclass
class Point:
    x: int


class Colour(enum.Enum):
    RED = "red"


@pytest.mark.parametrize("value", [
    Point(1), datetime.datetime(2026, 1, 1), datetime.date(2026, 1, 1), Colour.RED,
    uuid.UUID(int=7), 2**64, -(2**63) - 1, {"a"}, object()])
def test_encode_refuses_what_msgpack_refuses(value: object) -> None:
    """Not msgpack-native: a programming error, whatever another packer might make of it."""
    with pytest.raises((TypeError, OverflowError)):
        msgpack.packb(value, use_bin_type=True, datetime=False)
    with pytest.raises(TypeError):
        encode({"type": "x", "value": value})


def test_encode_refuses_a_key_that_is_not_a_string() -> None:
    """Which msgpack would pack, and every reader of ours refuses (`bad_key`)."""
    with pytest.raises(TypeError):
        encode({"type": "x", "value": {1: "a"}})


@pytest.mark.parametrize("depth", [7, 100, 1023, 5000])
def test_nesting_bombs_are_refused(depth: int) -> None:
    # fixmap(1) {"type": <fixarray(1) ...>} nested `depth` levels, innermost an int.
    body = b"\x81\xa4type" + b"\x91" * (depth - 1) + b"\x01"
    assert refused(body) == "too_deep"


def test_depth_limit_is_exact() -> None:
    ok = {"type": "t", "a": [[[[[1]]]]]}  # map + 5 arrays = depth 6
    assert decode(encode(ok)) == ok
    assert refused(encode({"type": "t", "a": [[[[[[1]]]]]]})) == "too_deep"


def test_deep_maps_count_as_deep() -> None:
    value: dict[str, Any] = {"type": "t"}
    for _ in range(CLIENT_FRAME_LIMITS.depth):
        value = {"type": "t", "m": value}
    assert refused(encode(value)) == "too_deep"


@pytest.mark.parametrize(
    "header",
    [
        b"\xdd\xff\xff\xff\xff",  # array32 claiming 4 billion items
        b"\xdf\xff\xff\xff\xff",  # map32 claiming 4 billion pairs
    ],
)
def test_absurd_container_headers_are_refused_without_allocating(header: bytes) -> None:
    body = b"\x82\xa4type\xa1t\xa1a" + header
    assert refused(body) == "value_too_large"


def test_absurd_string_header_with_truncated_data_is_malformed() -> None:
    assert refused(b"\x81\xa4type\xdb\xff\xff\xff\xff") == "malformed_frame"


def test_long_string_array_map_and_binary_are_refused() -> None:
    assert refused(packed({"type": "t", "s": "x" * (CLIENT_FRAME_LIMITS.str_len + 1)})) == (
        "value_too_large"
    )
    assert refused(packed({"type": "t", "a": [0] * (CLIENT_FRAME_LIMITS.array_len + 1)})) == (
        "value_too_large"
    )
    big_map = {f"k{i}": 0 for i in range(CLIENT_FRAME_LIMITS.map_len)} | {"type": "t"}
    assert refused(packed(big_map)) == "value_too_large"
    assert refused(packed({"type": "t", "b": b"x" * (CLIENT_FRAME_LIMITS.bin_len + 1)})) == (
        "value_too_large"
    )


@pytest.mark.parametrize("value", [[1, 2], "hello", 42, None, 1.5, True, b"\x00"])
def test_non_map_frames_are_refused(value: object) -> None:
    assert refused(packed(value)) == "not_a_map"


@pytest.mark.parametrize(
    "msg", [{"id": 1}, {"type": 5}, {"type": None}, {"type": b"hello"}, {"type": ["hello"]}]
)
def test_missing_or_non_string_type_is_refused(msg: dict[str, Any]) -> None:
    assert refused(packed(msg)) == "missing_type"


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"\xc1",  # the one byte msgpack never uses
        b"\x82\xa4type",  # truncated map
        packed({"type": "t"}) + b"\x00",  # trailing bytes
        b"GET / HTTP/1.1\r\n\r\n",
        b"\xff" * 16,
    ],
)
def test_garbage_is_malformed(body: bytes) -> None:
    assert refused(body) in {"malformed_frame", "not_a_map"}


def test_trailing_bytes_are_malformed() -> None:
    assert refused(packed({"type": "t"}) + b"\x00") == "malformed_frame"


def test_invalid_utf8_is_refused() -> None:
    body = b"\x82\xa4type\xa1t\xa4name\xa2\xff\xfe"
    assert refused(body) == "invalid_utf8"


@pytest.mark.parametrize(
    "body",
    [
        b"\x82\xa4type\xa1t\xa1e\xd4\x05\x01",  # fixext1 type 5
        b"\x82\xa4type\xa1t\xa1e\xd6\xff\x00\x00\x00\x01",  # timestamp (ext -1)
        b"\xd6\xff\x00\x00\x00\x01",  # a bare timestamp
    ],
)
def test_extension_types_are_refused(body: bytes) -> None:
    assert refused(body) == "ext_not_allowed"


@pytest.mark.parametrize(
    "body",
    [
        b"\x82\xa4type\xa1t\x01\x02",  # int key
        b"\x82\xa4type\xa1t\xc4\x01a\x02",  # binary key
        b"\x82\xa4type\xa1t\xc0\x02",  # nil key
    ],
)
def test_non_string_keys_are_refused(body: bytes) -> None:
    assert refused(body) == "bad_key"


def test_decode_message_uses_the_direction_limits_and_the_schema() -> None:
    assert limits_for(Direction.TO_SERVER) is CLIENT_FRAME_LIMITS
    assert limits_for(Direction.TO_CLIENT) is SERVER_FRAME_LIMITS
    body = encode({"type": "sit", "seat": 1, "id": 4})
    assert decode_message(body, Direction.TO_SERVER) == {"type": "sit", "seat": 1, "id": 4}
    with pytest.raises(ProtocolError) as info:
        decode_message(body, Direction.TO_CLIENT)  # `sit` only travels to the server
    assert info.value.code == "unknown_type"


@pytest.mark.parametrize(("body", "rid"), [
    (msgpack.packb({"type": "chat", "id": 7, "text": "x" * 5000}), 7),
    (b"\x82\xa2id\x07\xa4type\xa2\xff\xfe", 7),  # type not UTF-8
    (b"\x82\xa2id\x07\xa4type\xd4\x05\x00", 7),  # an extension
    (msgpack.packb({"id": 7}), 7),  # no type
    (msgpack.packb({"id": -1, "type": 1}), None),  # not a valid id
    (msgpack.packb({"id": True}), None),
    (msgpack.packb([{"id": 7}]), None),  # not a map
    (b"\x82\xa2id\x07\xc1", None),  # not msgpack
])
def test_refused_id_reads_the_id_of_a_refused_map_where_it_can(body: bytes,
                                                               rid: int | None) -> None:
    with pytest.raises(ProtocolError):
        decode(body)
    assert refused_id(body) == rid
