"""Property tests: no input makes the decoder or the validator raise anything but
ProtocolError (the server turns that into an `error`, never a traceback)."""

from __future__ import annotations

from typing import Any

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st

from pisyedili.protocol import (
    CLIENT_FRAME_LIMITS,
    MESSAGES,
    Direction,
    ProtocolError,
    decode,
    decode_message,
    encode,
)

BOUNDED = settings(max_examples=200, deadline=None)


@BOUNDED
@given(st.binary(max_size=512))
def test_any_bytes_decode_to_a_map_or_raise_protocol_error(body: bytes) -> None:
    try:
        msg = decode(body)
    except ProtocolError as exc:
        assert exc.code
        return
    assert isinstance(msg, dict)
    assert isinstance(msg["type"], str)


def _prefixed(prefix: bytes) -> st.SearchStrategy[bytes]:
    return st.binary(max_size=256).map(lambda tail: prefix + tail)


@BOUNDED
@given(st.one_of(_prefixed(b"\x81\xa4type"), _prefixed(b"\x82\xa4type\xa4move\xa4move"),
                 _prefixed(b"\xdf"), _prefixed(b"\xdd")))
def test_bytes_after_a_plausible_prefix_never_escape(body: bytes) -> None:
    # Random bytes rarely form a map; these start like real messages to get deeper.
    try:
        decode_message(body, Direction.TO_SERVER)
    except ProtocolError:
        pass


_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=True), st.text(max_size=40), st.binary(max_size=8),
)
_values = st.recursive(
    _leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=5),
                            st.dictionaries(st.text(max_size=8), inner, max_size=5)),
    max_leaves=20,
)
_names = sorted({t for (_, t) in MESSAGES} | {"", "nope"})


@BOUNDED
@given(st.sampled_from(_names), st.dictionaries(st.sampled_from(
    ["id", "protocol", "name", "move", "seat", "table", "code", "text", "options", "rules",
     "seats", "ready", "agree", "features", "token", "view", "event", "moves", "you",
     "match", "tables", "op", "summary", "limits", "totals", "winners", "result"]),
    _values, max_size=6), st.sampled_from(list(Direction)))
def test_any_decoded_map_validates_or_raises_protocol_error(
    type_: str, fields: dict[str, Any], direction: Direction
) -> None:
    body = msgpack.packb({"type": type_, **fields}, use_bin_type=True)
    try:
        msg = decode_message(body, direction)
    except ProtocolError as exc:
        assert exc.code in {"unknown_type", "missing_field", "bad_field", "too_deep",
                            "value_too_large", "frame_too_large"}
        return
    assert msg["type"] == type_


@BOUNDED
@given(st.dictionaries(st.text(max_size=10), _values, max_size=8))
def test_encodable_maps_round_trip(fields: dict[str, Any]) -> None:
    msg = {**fields, "type": "t"}
    body = encode(msg)
    if len(body) <= CLIENT_FRAME_LIMITS.frame:
        try:
            back = decode(body)
        except ProtocolError as exc:
            assert exc.code in {"too_deep", "value_too_large"}
            return
        assert encode(back) == body  # byte-exact, NaN included
