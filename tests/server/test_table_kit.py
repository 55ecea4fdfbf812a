"""Shared fakes for the table tests: list-backed participants, a clock driver.

No sockets, no real time, no unseeded randomness: a `Table` is driven exactly as
NET drives it, with `Fake` participants whose `send` appends to a list.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from twisted.internet.task import Clock

from pisyedili.protocol.schema import Direction, validate
from pisyedili.server.participant import Message
from pisyedili.server.rules import Options
from pisyedili.server.table import Table, TableSettings

FAST = TableSettings(turn_seconds=30.0, grace_seconds=60.0, bot_delay=0.0, deal_pause=0.0,
                     max_timeouts_before_bot=2)

_ids = itertools.count(1)


def check_message(msg: Message) -> None:
    """Every server→client message must satisfy the protocol schema."""
    validate(msg, Direction.TO_CLIENT)


@dataclass
class Fake:
    """A participant whose messages land in `inbox` (dropped while disconnected)."""

    name: str
    player_id: str = field(default_factory=lambda: str(next(_ids)))
    connected: bool = True
    inbox: list[Message] = field(default_factory=list)
    hook: Callable[[Fake, Message], None] | None = None

    def send(self, msg: Message) -> None:
        check_message(msg)
        if not self.connected:
            return
        if self.hook is not None:
            self.hook(self, msg)
        self.inbox.append(msg)

    def of_type(self, kind: str) -> list[Message]:
        return [m for m in self.inbox if m["type"] == kind]

    def last(self, kind: str) -> Message:
        found = self.of_type(kind)
        assert found, f"{self.name} received no {kind!r} message"
        return found[-1]


@dataclass
class Rig:
    table: Table
    clock: Clock
    host: Fake
    changes: list[Table]
    closed: list[Table]

    def people(self, n: int, prefix: str = "p") -> list[Fake]:
        return [Fake(f"{prefix.upper()}{i}") for i in range(n)]


def make_table(rules: str = "classic", seats: int = 2, *, private: bool = False,
               settings: TableSettings = FAST, seed: int = 1,
               host: Fake | None = None, **options: Any) -> Rig:
    clock = Clock()
    changes: list[Table] = []
    closed: list[Table] = []
    host = host or Fake("Host")
    table = Table(7, "t", Options.make(rules, seats, **options), seats, private, host, clock,
                  random.Random(seed), settings, changes.append, closed.append)
    return Rig(table, clock, host, changes, closed)


def run_clock(clock: Clock, limit: int = 100_000) -> None:
    """Run every call due now, the calls those schedule, and so on (bots at delay 0)."""
    for _ in range(limit):
        due = [c for c in clock.getDelayedCalls() if c.getTime() <= clock.seconds()]
        if not due:
            return
        clock.advance(0)
    raise AssertionError("the clock never settled")


def play_out(rig: Rig, humans: Iterable[Fake], rng: random.Random,
             max_moves: int = 20_000) -> int:
    """Play until the match ends; humans choose at random from their `turn` prompts.

    Checks on the way that the prompt the seat to act holds is for its seat and lists
    exactly the engine's legal moves. Returns the number of human moves made.
    """
    from pisyedili.server.rules import legal_moves, move_to_wire

    table, clock = rig.table, rig.clock
    by_seat = {table.seat_of(h): h for h in humans}
    made = 0
    for _ in range(max_moves):
        run_clock(clock)
        if table.phase != "playing":
            return made
        deal = table.match.deal
        if deal.over:  # a deal pause longer than 0
            clock.advance(table.settings.deal_pause)
            continue
        human = by_seat.get(deal.to_act)
        assert human is not None, "a bot seat is to act but nothing is scheduled"
        prompt = human.last("turn")
        assert prompt["seat"] == deal.to_act
        legal = [move_to_wire(m) for m in legal_moves(deal, deal.to_act)]
        assert prompt["moves"] == legal
        table.move(human, rng.choice(prompt["moves"]))
        made += 1
    raise AssertionError("the match did not end")


def seated(rig: Rig, kinds: list[str], level: str = "easy") -> list[Fake]:
    """Fill the seats: 'h' a human (the host first), 'b' a bot. Returns the humans."""
    table = rig.table
    humans: list[Fake] = []
    table.join(rig.host)
    if kinds[0] == "b":
        table.stand(rig.host)
    else:
        humans.append(rig.host)
    for i, kind in enumerate(kinds):
        if i == 0 and kind == "h":
            continue
        if kind == "h":
            p = Fake(f"P{i}")
            table.join(p)
            if table.seat_of(p) != i:
                table.sit(p, i)
            table.set_ready(p, True)
            humans.append(p)
        else:
            table.add_bot(rig.host, i, level)
    return humans
