"""Frame bodies: one msgpack map each, decoded under hard limits.

Only the body is handled here; the 4-byte big-endian length prefix is Twisted's
`Int32StringReceiver` on both ends (with `MAX_LENGTH` set from `limits`). Decoding leans
on msgpack's own limits so a hostile length header never allocates; nothing is parsed
by hand. Every refusal is a `ProtocolError` with a stable code, never another exception.

Two libraries, one format: what arrives is read by msgpack, whose unpacker takes the
limits above; what we send is packed by ormsgpack, which has no such limits (our own
messages need none) and packs a server's `update` in about half the time, the same
bytes to the last one (tests/protocol/test_codec.py).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

import msgpack
import ormsgpack

from .errors import ProtocolError
from .limits import CLIENT_FRAME_LIMITS, SERVER_FRAME_LIMITS, Limits
from .schema import Direction, request_id, validate

_PREFIX = struct.Struct(">I")

_PACK_ONLY_NATIVE = (ormsgpack.OPT_PASSTHROUGH_BIG_INT | ormsgpack.OPT_PASSTHROUGH_DATACLASS
                     | ormsgpack.OPT_PASSTHROUGH_DATETIME | ormsgpack.OPT_PASSTHROUGH_ENUM
                     | ormsgpack.OPT_PASSTHROUGH_UUID)
"""ormsgpack packs what msgpack packs, and refuses (`TypeError`) what it refuses: the
types ormsgpack would pack on its own besides (a dataclass, a datetime...) are passed
to a `default` hook, and there is none."""


class _ExtRefused(Exception):
    """Raised from msgpack's ext_hook to abort decoding at the first extension value."""


def _refuse_ext(code: int, data: bytes) -> Any:
    raise _ExtRefused(code)


# The Python types msgpack yields for the value kinds the protocol allows. Anything else
# (msgpack.Timestamp, which bypasses ext_hook) is an extension and is refused.
_SCALARS = (str, int, float, bool, bytes, type(None))
_LEAVES: frozenset[type] = frozenset(_SCALARS)


def encode(msg: Mapping[str, Any], limits: Limits | None = None) -> bytes:
    """The frame body for `msg`.

    With `limits`, refuses (`frame_too_large`) a body the receiver would refuse, so a
    sender finds out before the peer does. Values must be msgpack-native (str, int,
    float, bool, None, lists, str-keyed dicts); anything else is a programming error and
    raises `TypeError`.
    """
    if not isinstance(msg.get("type"), str):
        raise TypeError("a message needs a string 'type'")
    body = ormsgpack.packb(msg, option=_PACK_ONLY_NATIVE)
    if limits is not None and len(body) > limits.frame:
        raise ProtocolError(
            "frame_too_large", f"{len(body)}-byte body is over the {limits.frame}-byte limit"
        )
    return body


def frame(msg: Mapping[str, Any], limits: Limits | None = None) -> bytes:
    """`msg` with its 4-byte big-endian length prefix: for tests and non-Twisted peers."""
    body = encode(msg, limits)
    return _PREFIX.pack(len(body)) + body


def decode(body: bytes, limits: Limits = CLIENT_FRAME_LIMITS) -> dict[str, Any]:
    """The map in one frame body, with a string `type`; raises ProtocolError otherwise.

    Does not check the message against the schema: see `schema.validate`.
    """
    if len(body) > limits.frame:
        raise ProtocolError(
            "frame_too_large", f"{len(body)}-byte body is over the {limits.frame}-byte limit"
        )
    try:
        value = msgpack.unpackb(
            body,
            raw=False,
            strict_map_key=True,
            use_list=True,
            timestamp=0,
            ext_hook=_refuse_ext,
            max_str_len=limits.str_len,
            max_bin_len=limits.bin_len,
            max_array_len=limits.array_len,
            max_map_len=limits.map_len,
            max_ext_len=limits.frame,
        )
    except _ExtRefused:
        raise ProtocolError("ext_not_allowed", "extension types are not allowed") from None
    except UnicodeDecodeError:
        raise ProtocolError("invalid_utf8", "a string is not valid UTF-8") from None
    except (msgpack.exceptions.StackError, RecursionError):
        raise ProtocolError("too_deep", f"nesting is deeper than {limits.depth}") from None
    except msgpack.exceptions.ExtraData:
        raise ProtocolError("malformed_frame", "bytes follow the first value") from None
    except ValueError as exc:
        # msgpack reports its length limits as "<n> exceeds max_<kind>_len(<limit>)";
        # everything else it raises is a format error.
        text = str(exc)
        if "exceeds max_" in text:
            raise ProtocolError("value_too_large", text) from None
        if "map key" in text:
            raise ProtocolError("bad_key", "map keys must be strings") from None
        raise ProtocolError("malformed_frame", "not a well-formed msgpack value") from None
    except Exception:
        # msgpack may raise other errors on absurd input (e.g. an unhashable map key);
        # the contract is ProtocolError and nothing else.
        raise ProtocolError("malformed_frame", "not a well-formed msgpack value") from None
    if not isinstance(value, dict):
        if not isinstance(value, (*_SCALARS, list)):
            raise ProtocolError("ext_not_allowed", "extension types are not allowed")
        raise ProtocolError("not_a_map", f"the frame holds {_kind(value)}, not a map")
    _check_tree(value, limits.depth)
    if not isinstance(value.get("type"), str):
        raise ProtocolError("missing_type", "the map has no string 'type'")
    return value


def refused_id(body: bytes, limits: Limits = CLIENT_FRAME_LIMITS) -> int | None:
    """The `id` of a body `decode` refused, where it can still be read: the body is one
    map whose `id` is a valid request id, though a value elsewhere is too long, not
    UTF-8, an extension, too deep, or `type` is missing. None for any other body (not
    msgpack, not a map, over the frame limit), so its error carries no `id`.

    Only refused bodies are read again, within the frame limit; msgpack bounds every
    length by the body's."""
    if len(body) > limits.frame:
        return None
    try:
        value = msgpack.unpackb(body, raw=True, strict_map_key=False, use_list=True,
                                timestamp=0, ext_hook=_ignore_ext)
    except Exception:
        return None
    if not isinstance(value, dict):
        return None
    try:
        rid = value.get(b"id")
    except TypeError:  # an unhashable key
        return None
    return request_id({"id": rid})


def _ignore_ext(code: int, data: bytes) -> None:
    return None


def limits_for(direction: Direction) -> Limits:
    """The limits a receiver applies to frames travelling in `direction`."""
    return CLIENT_FRAME_LIMITS if direction is Direction.TO_SERVER else SERVER_FRAME_LIMITS


def decode_message(body: bytes, direction: Direction) -> dict[str, Any]:
    """Decode a frame body travelling in `direction` under its limits, then validate it.

    The server calls this with TO_SERVER, the client with TO_CLIENT. A server reading
    the first message should `decode` and `parse_hello` instead, so that a newer
    version's `hello` gets `unsupported_version` rather than a schema error.
    """
    return validate(decode(body, limits_for(direction)), direction)


def _kind(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bytes):
        return "a binary"
    if value is None:
        return "nil"
    return "a number"


def _check_tree(node: dict[object, Any] | list[Any], max_depth: int, depth: int = 1) -> None:
    """Depth, key and leaf checks of a map or list at `depth` and all below it. By
    exact type, since msgpack yields exact types: every request of every client passes
    here, and a set lookup is cheaper than `isinstance` with a tuple. Recursive, a call
    per container: a container deeper than `max_depth` is refused before its contents
    are looked at, so however deep msgpack nested a tree, this goes `max_depth + 1`
    calls down at most. Keys are `object`: they are what is checked (and compiled, a
    `str` key would be asserted before it is looked at)."""
    if depth > max_depth:
        raise ProtocolError("too_deep", f"nesting is deeper than {max_depth}")
    if type(node) is dict:
        for key in node:
            if type(key) is not str:
                raise ProtocolError("bad_key", "map keys must be strings")
        values: Any = node.values()
    else:
        values = node
    for value in values:
        kind = type(value)
        if kind in _LEAVES:
            continue
        if kind is dict or kind is list:
            _check_tree(value, max_depth, depth + 1)
        else:
            raise ProtocolError("ext_not_allowed", "extension types are not allowed")
