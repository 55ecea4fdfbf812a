"""Seats of a table: who sits where, and who actually decides for the seat.

A seat is `open`, `human` or `bot`. A human seat may be *held* by a stand-in bot while
its player is idle or gone; the seat stays the player's, and the player takes it back
by showing life. Kept apart from the table core so that module holds the flow of a
match, not bookkeeping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pisyedili.protocol.names import bot_name, bot_seat_name

__all__ = ["HeldFor", "Seat", "SeatKind", "bot_name", "bot_seat_name", "wire_player_id"]

SeatKind = Literal["open", "human", "bot"]

# Why a stand-in bot holds a human seat.
HeldFor = Literal["idle", "disconnected"]


def wire_player_id(player_id: str) -> int | str:
    """Player ids are integers on the wire (protocol schema); sessions hold them as text."""
    return int(player_id) if player_id.isdecimal() else player_id


@dataclass(slots=True)
class Seat:
    index: int
    kind: SeatKind = "open"
    member: str | None = None  # human seats: the member's id
    level: str | None = None  # bot seats only
    ready: bool = False
    held: HeldFor | None = None  # a stand-in bot plays for the absent human
    timeouts: int = 0  # turn-timer expiries in a row
    rematch: bool | None = None  # None: not answered yet

    @property
    def bot_decides(self) -> bool:
        """True when the server chooses this seat's moves."""
        return self.kind == "bot" or self.held is not None

    def clear(self) -> None:
        self.kind = "open"
        self.member = None
        self.level = None
        self.ready = False
        self.held = None
        self.timeouts = 0
        self.rematch = None

    def seat_human(self, member: str) -> None:
        self.clear()
        self.kind = "human"
        self.member = member

    def seat_bot(self, level: str) -> None:
        self.clear()
        self.kind = "bot"
        self.level = level
        self.ready = True  # bots are always ready

    def to_wire(self, name: str | None, connected: bool, bot: bool = False) -> dict[str, Any]:
        """The seat as every member sees it (names only; never a token).

        `name`, `connected` and `bot` (a bot account's program) describe the human in
        the seat (ignored otherwise)."""
        d: dict[str, Any] = {"seat": self.index, "kind": self.kind, "ready": self.ready}
        if self.kind == "human" and self.member is not None:
            d["name"] = name if name is not None else "?"
            d["player"] = wire_player_id(self.member)
            d["connected"] = connected
            if bot:
                d["bot"] = True
            if self.held is not None:
                d["held_by_bot"] = self.held
        elif self.kind == "bot" and self.level is not None:
            d["name"] = bot_seat_name(self.index)
            d["level"] = self.level
        if self.rematch is not None:
            d["rematch"] = self.rematch
        return d
