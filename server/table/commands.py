"""What a table core is told: the requests of its members and the happenings around them.

Each command is a small frozen record, so the list of commands a table accepted is data
that can be stored and replayed: handing the same commands (with the same times) to a
fresh `TableCore` gives the same effects. Everything a core cannot know by itself comes
in here: who asked, the match's shuffle seed (drawn by whoever drives the core), the
move a bot chose after searching on a time budget, which timer fired.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, get_args

MemberId = str
"""A member's stable id: the session's player id, as text."""


@dataclass(frozen=True, slots=True)
class Join:
    """Become a member: the first open seat unless `spectate` or a match is on.

    `registered`: the member has an account; a rated table seats no guest, so a guest
    joins it as a spectator. `address`: the address key its session was opened from
    (`limits.address_key`; "" or "elsewhere" when not known), so a rated match can tell
    an operator it seats two accounts of one address. `bot`: the account is a bot's
    (`register.bot`): shown as a bot, and refused a seat where the host said so.
    """

    member: MemberId
    name: str
    spectate: bool = False
    registered: bool = False
    address: str = ""
    bot: bool = False


@dataclass(frozen=True, slots=True)
class Leave:
    member: MemberId


@dataclass(frozen=True, slots=True)
class Sit:
    """Take an open seat; `registered` and `bot` as in `Join` (a rated table refuses a
    guest, a table without `bot_accounts` a bot account)."""

    member: MemberId
    seat: object
    """As the request gave it: the core refuses anything but a seat's index."""
    registered: bool = False
    bot: bool = False


@dataclass(frozen=True, slots=True)
class Stand:
    member: MemberId


@dataclass(frozen=True, slots=True)
class AddBot:
    """Host only. `seed` shuffles the rematch this bot's agreement may start."""

    member: MemberId
    seat: object
    """As `Sit.seat`."""
    level: str
    seed: int


@dataclass(frozen=True, slots=True)
class RemoveBot:
    member: MemberId
    seat: object
    """As `Sit.seat`."""


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


@dataclass(frozen=True, slots=True)
class Restored:
    """The server restarted and rebuilt this table from its stored commands.

    Nobody is connected any more, no timer is armed and a bot's search that was under
    way is lost: the core marks its members away (their grace periods start now), sets
    its timers again from their stored deadlines, moved on by the outage (the time since
    the table's last command: a turn keeps what it had left), and asks again for a bot's
    move it was waiting for. Being a command itself, it is stored and replayed like the
    others.
    """


Command = (Join | Leave | Sit | Stand | AddBot | RemoveBot | Ready | Start | Play | Chat
           | Rematch | Resync | Seen | Disconnected | Reconnected | TimerFired | BotMoved
           | Restored)

_BY_NAME: dict[str, type[Any]] = {cls.__name__: cls for cls in get_args(Command)}

_WRITTEN_BEFORE: dict[str, dict[str, Any]] = {
    "Join": {"registered": True}, "Sit": {"registered": True}}
"""Fields that records written by older servers lack, with what such a record meant.
Those servers checked a rated table's guests before the core saw the command (a guest's
`Sit` was never stored, its `Join` was stored as a spectator's), so an older record
counts as registered: it replays as it was accepted."""


def to_record(command: Command) -> list[Any]:
    """A command as plain data (its class name, then its fields in order), for storage.

    >>> to_record(Sit("7", 2, registered=True))
    ['Sit', '7', 2, True]
    >>> from_record(['Sit', '7', 2, True])
    Sit(member='7', seat=2, registered=True)
    """
    return [type(command).__name__, *(getattr(command, f.name) for f in fields(command))]


def from_record(record: list[Any]) -> Command:
    """The command `to_record` made; ValueError if the record names no command."""
    if not record or not isinstance(record[0], str) or record[0] not in _BY_NAME:
        raise ValueError(f"not a stored table command: {record[:1]!r}")
    cls = _BY_NAME[record[0]]
    names = [f.name for f in fields(cls)]
    if len(record) - 1 > len(names):
        raise ValueError(f"a stored {record[0]} command has {len(record) - 1} fields, "
                         f"not {len(names)}")
    given = dict(zip(names[:len(record) - 1], record[1:], strict=True))
    values = {**_WRITTEN_BEFORE.get(record[0], {}), **given}
    try:
        command: Command = cls(**values)
    except TypeError as e:
        raise ValueError(f"a stored {record[0]} command does not fit: {e}") from None
    return command

REQUESTS = (Join, Leave, Sit, Stand, AddBot, RemoveBot, Ready, Start, Play, Chat, Rematch,
            Resync)
"""Commands that answer a member's request: each gets exactly one `Reply`."""
