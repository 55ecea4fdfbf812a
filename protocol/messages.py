"""Builders for the messages both ends write, so no message shape is written twice.

Each builder returns a plain dict ready for `codec.encode`; `build` checks the result
against the schema, so a sender cannot emit what the receiver would refuse.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .errors import ProtocolError
from .limits import CLIENT_FRAME_LIMITS, MAX_CHAT, MAX_CODE, MAX_NAME, MAX_TABLE_NAME, MAX_TOKEN
from .schema import Direction, validate
from .version import PROTOCOL_VERSION


def build(type_: str, direction: Direction, id: int | None = None, **fields: Any) -> dict[str, Any]:
    """A validated message of `type_`; fields that are None are left out.

    Raises ProtocolError (`bad_field`, `missing_field`, `unknown_type`) on a shape the
    schema refuses: for a sender that is a bug, reported before anything is sent.
    """
    msg: dict[str, Any] = {"type": type_}
    if id is not None:
        msg["id"] = id
    msg.update((k, v) for k, v in fields.items() if v is not None)
    return validate(msg, direction)


def make_error(code: str, message: str, id: int | None = None, **extra: Any) -> dict[str, Any]:
    """An `error` message; `code` must be registered in errors.py."""
    return ProtocolError(code, message, **extra).to_message(id)


def make_ok(id: int | None = None) -> dict[str, Any]:
    return build("ok", Direction.TO_CLIENT, id)


def make_hello(
    name: str,
    *,
    token: str | None = None,
    client: str | None = None,
    version: str | None = None,
    features: Iterable[str] | None = None,
    protocol: int = PROTOCOL_VERSION,
    id: int | None = None,
) -> dict[str, Any]:
    return build(
        "hello", Direction.TO_SERVER, id, protocol=protocol, name=name, token=token,
        client=client, version=version,
        features=None if features is None else list(features),
    )


def make_welcome(
    *,
    server: str,
    version: str,
    player: int,
    name: str,
    token: str,
    features: Iterable[str],
    limits: Mapping[str, int] | None = None,
    resumed: bool | None = None,
    table: int | None = None,
    id: int | None = None,
) -> dict[str, Any]:
    """`welcome`; `limits` defaults to `announced_limits()`."""
    return build(
        "welcome", Direction.TO_CLIENT, id, protocol=PROTOCOL_VERSION, server=server,
        version=version, player=player, name=name, token=token,
        limits=dict(announced_limits() if limits is None else limits),
        features=list(features), resumed=resumed, table=table,
    )


FIELD_LIMIT_DOCS: dict[str, str] = {
    "name": "characters in a player name (at least 1)",
    "table_name": "characters in a table name",
    "chat": "characters in a chat line (at least 1)",
    "token": "characters in a resume token",
    "code": "characters in an invite code",
}
"""What each per-field limit of `announced_limits` bounds (the decoder's own limits say it
in `Limits`' field metadata), for the `welcome.limits` table of docs/protocol.md."""


def announced_limits() -> dict[str, int]:
    """The limits a client must respect, as `welcome.limits` announces them.

    A server adds its own policy limits (e.g. `rate`, `tables_per_player`) to this map.
    """
    return {
        "frame": CLIENT_FRAME_LIMITS.frame,
        "depth": CLIENT_FRAME_LIMITS.depth,
        "str_len": CLIENT_FRAME_LIMITS.str_len,
        "array_len": CLIENT_FRAME_LIMITS.array_len,
        "map_len": CLIENT_FRAME_LIMITS.map_len,
        "name": MAX_NAME,
        "table_name": MAX_TABLE_NAME,
        "chat": MAX_CHAT,
        "token": MAX_TOKEN,
        "code": MAX_CODE,
    }


def make_move(move: Mapping[str, Any], id: int | None = None) -> dict[str, Any]:
    """A `move` request carrying a wire move (`{"kind": "play", "card": "7h"}`...)."""
    return build("move", Direction.TO_SERVER, id, move=dict(move))
