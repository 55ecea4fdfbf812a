"""What a table core is told: the requests of its members and the happenings around them.

Each command is a small frozen record, so the list of commands a table accepted is data
that can be stored and replayed: handing the same commands (with the same times) to a
fresh `TableCore` gives the same effects. Everything a core cannot know by itself comes
in here: who asked, the match's shuffle seed (drawn by whoever drives the core), the
move a bot chose after searching on a time budget, which timer fired.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MemberId = str
"""A member's stable id: the session's player id, as text."""


@dataclass(frozen=True, slots=True)
class Join:
    """Become a member: the first open seat unless `spectate` or a match is on."""

    member: MemberId
    name: str
    spectate: bool = False


@dataclass(frozen=True, slots=True)
class Leave:
    member: MemberId


@dataclass(frozen=True, slots=True)
class Sit:
    member: MemberId
    seat: int


@dataclass(frozen=True, slots=True)
class Stand:
    member: MemberId


@dataclass(frozen=True, slots=True)
class AddBot:
    """Host only. `seed` shuffles the rematch this bot's agreement may start."""

    member: MemberId
    seat: int
    level: str
    seed: int


@dataclass(frozen=True, slots=True)
class RemoveBot:
    member: MemberId
    seat: int


@dataclass(frozen=True, slots=True)
class Ready:
    member: MemberId
    ready: bool


@dataclass(frozen=True, slots=True)
class Start:
    """Host only. `seed` shuffles the match (its deals draw from one Random(seed))."""

    member: MemberId
    seed: int


@dataclass(frozen=True, slots=True)
class Play:
    """A member's move, in wire form (`{"kind": "play", "card": "7h"}`...)."""

    member: MemberId
    move: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Chat:
    member: MemberId
    text: str


@dataclass(frozen=True, slots=True)
class Rematch:
    """`seed` shuffles the rematch if this agreement is the last one needed."""

    member: MemberId
    agree: bool
    seed: int


@dataclass(frozen=True, slots=True)
class Resync:
    """Ask for a fresh snapshot; changes nothing."""

    member: MemberId


@dataclass(frozen=True, slots=True)
class Seen:
    """The member showed life (a request that is not a table command, e.g. lobby chat)."""

    member: MemberId


@dataclass(frozen=True, slots=True)
class Disconnected:
    member: MemberId


@dataclass(frozen=True, slots=True)
class Reconnected:
    """The member's session is back on a connection (or on a new one): snapshot it."""

    member: MemberId


@dataclass(frozen=True, slots=True)
class TimerFired:
    """A timer the core set with `SetTimer(key, ...)` ran out."""

    key: str


@dataclass(frozen=True, slots=True)
class BotMoved:
    """The move a bot chose for the decision `AskBot(serial, ...)` asked about.

    An engine move (an int). A stale answer (the table moved on meanwhile) is ignored.
    """

    serial: int
    move: int


Command = (Join | Leave | Sit | Stand | AddBot | RemoveBot | Ready | Start | Play | Chat
           | Rematch | Resync | Seen | Disconnected | Reconnected | TimerFired | BotMoved)

REQUESTS = (Join, Leave, Sit, Stand, AddBot, RemoveBot, Ready, Start, Play, Chat, Rematch,
            Resync)
"""Commands that answer a member's request: each gets exactly one `Reply`."""
