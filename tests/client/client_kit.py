"""Server messages for the client tests, each checked against the schema so a fixture
cannot drift from what a server may send; and a way to wait for a link's messages.

Every builder returns a message (or shape) that `protocol.schema.validate` (or the
shape's own check) accepted; keyword arguments override fields of a sensible default.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from poll_kit import arrived, first_or_next
from twisted.internet.defer import Deferred

from pisyedili.protocol.messages import make_error, make_welcome
from pisyedili.protocol.schema import Direction, validate
from pisyedili.protocol.shapes import SEAT_INFO, TABLE_INFO, VIEW

Msg = dict[str, Any]

OPTIONS: Msg = {"ten": "reverse", "empty_stock": "end_deal", "match_end": "deals:4",
                "decks": 1, "turn_seconds": 0, "rules": "classic", "players": 3}

_VIEW: Msg = {
    "rules": "classic", "options": OPTIONS, "players": 3, "seat": 0, "dealer": 2,
    "phase": "play", "turn": 0, "direction": 1, "hand": ["Qd", "7h", "2c", "Js"],
    "hand_counts": [4, 6, 1], "top": "9h", "named_suit": None, "pile": ["9c", "9h"],
    "stock": 23, "penalty": 0, "first_round": 0, "must_follow": None, "drew": False,
    "scores": [12, 40, 0], "deal_no": 2, "muamele": None, "result": None,
}


def view(**changes: Any) -> Msg:
    """Seat 0's view of a classic deal for three; `changes` replace fields."""
    v = {**_VIEW, **changes}
    VIEW.check(v, "view")
    return v


def seat(n: int, kind: str = "human", **fields: Any) -> Msg:
    s: Msg = {"seat": n, "kind": kind, "ready": kind == "bot", **fields}
    if kind == "human":
        s.setdefault("name", f"player{n}")
        s.setdefault("player", 100 + n)
        s.setdefault("connected", True)
    elif kind == "bot":
        s.setdefault("name", "bot")
        s.setdefault("level", "easy")
    SEAT_INFO.check(s, "seat")
    return s


def table_info(seats: list[Msg] | None = None, **changes: Any) -> Msg:
    """Table 1, classic, host player 100 (seat 0's default player id)."""
    t: Msg = {"id": 1, "name": "friday", "rules": "classic", "options": OPTIONS,
              "host": 100, "phase": "playing", "private": False,
              "seats": seats if seats is not None else
              [seat(0, name="me"), seat(1, name="ayse"), seat(2, "bot")],
              "spectators": [], **changes}
    TABLE_INFO.check(t, "table")
    return t


def table(table_: Msg | None = None, *, you_seat: int | None = 0, spectator: bool = False,
          host: bool = False, view_: Msg | None = None, match: Msg | None = None,
          **extra: Any) -> Msg:
    """A `table` snapshot (`extra`: `moves`, `deadline`, `id`)."""
    return validate({"type": "table", "table": table_ if table_ is not None else table_info(),
                     "you": {"seat": you_seat, "spectator": spectator, "host": host},
                     "view": view_, "match": match, **extra}, Direction.TO_CLIENT)


def update(events: list[Msg], view_: Msg | None = None, **extra: Any) -> Msg:
    """An `update` of table 1 (`extra`: `moves`, `deadline`)."""
    return validate({"type": "update", "table": 1, "events": events,
                     "view": view_ if view_ is not None else view(), **extra},
                    Direction.TO_CLIENT)


def welcome(token: str = "secret-token", resumed: bool | None = None, id: int | None = None,
            player: int = 100, name: str = "tester") -> Msg:
    return make_welcome(server="test", version="1", player=player, name=name, token=token,
                        features=["chat", "rematch"], resumed=resumed, id=id)


def error(code: str, message: str = "refused", id: int | None = None, **extra: Any) -> Msg:
    return validate(make_error(code, message, id, **extra), Direction.TO_CLIENT)


def message(type_: str, **fields: Any) -> Msg:
    """Any other server message, validated."""
    return validate({"type": type_, **fields}, Direction.TO_CLIENT)



class Inbox:
    """What a link hands its listener, with a way to wait for a message to come."""

    def __init__(self, reactor: Any, timeout: float = 10.0) -> None:
        self.reactor = reactor
        self.timeout = timeout
        self.messages: list[Msg] = []
        self.status: list[str] = []
        self._waiters: list[tuple[Callable[[Msg], bool], Deferred[Msg]]] = []

    def __call__(self, msg: Msg) -> None:
        self.messages.append(msg)
        arrived(self._waiters, msg)

    def types(self) -> list[str]:
        return [m["type"] for m in self.messages]

    def wait(self, pred: Callable[[Msg], bool], start: int = 0) -> Deferred[Msg]:
        """The first message from index `start` on that matches; the timeout is only a
        backstop that turns a hang into a failure."""
        return first_or_next(self.messages[start:], self._waiters, pred, self.timeout,
                             self.reactor)

    def wait_type(self, type_: str, start: int = 0, **match: Any) -> Deferred[Msg]:
        return self.wait(lambda m: m["type"] == type_
                         and all(m.get(k) == v for k, v in match.items()), start)
