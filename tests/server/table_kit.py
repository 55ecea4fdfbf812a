"""Shared fakes for the table tests: list-backed members, a driver, a clock.

No sockets, no real time, no unseeded randomness: a `TableCore` runs under the real
`TableRunner` on a `task.Clock`, with `Fake` members whose messages land in a list.
`Driver` speaks to it the way the network's handlers do (one command per request) and
raises the refusal a request got, so tests read as requests and their outcomes.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from twisted.internet.task import Clock

from pisyedili.protocol.schema import Direction, validate
from pisyedili.server.rules import Match, Options
from pisyedili.server.table import commands as cmd
from pisyedili.server.table.core import TableCore, TableError, TableSettings
from pisyedili.server.table.effects import MatchOver, Message
from pisyedili.server.table.journal import NO_JOURNAL, Journal
from pisyedili.server.table.runner import TableRunner

TIMED_NO_DELAYS = TableSettings(turn_seconds=30.0, grace_seconds=60.0, bot_delay=0.0,
                                deal_pause=0.0, max_timeouts_before_bot=2)

_ids = itertools.count(1)


def check_message(msg: Message) -> None:
    """Every server→client message must satisfy the protocol schema."""
    validate(msg, Direction.TO_CLIENT)


@dataclass
class Fake:
    """A member whose messages land in `inbox` (dropped while disconnected)."""

    name: str
    player_id: str = field(default_factory=lambda: str(next(_ids)))
    connected: bool = True
    inbox: list[Message] = field(default_factory=list)
    hook: Callable[[Fake, Message], None] | None = None
    """Sees each message as it is delivered, while the table is in that moment's state."""

    def receive(self, msg: Message) -> None:
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

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        """Every event of the updates received, in order (of one kind, if given)."""
        return [e for m in self.of_type("update") for e in m["events"]
                if kind is None or e["event"] == kind]

    def updates(self, kind: str) -> list[Message]:
        """The updates that hold an event of `kind`."""
        return [m for m in self.of_type("update") if any(e["event"] == kind for e in m["events"])]

    def prompt(self) -> Message | None:
        """The latest `update` or `table` message, if it offers this member moves."""
        for msg in reversed(self.inbox):
            if msg["type"] in ("update", "table"):
                return msg if "moves" in msg else None
        return None


class Driver:
    """The table as the network's handlers drive it: requests in, refusals raised as
    `TableError`."""

    def __init__(self, runner: TableRunner, members: dict[str, Fake]) -> None:
        self.runner = runner
        self.core = runner.core
        self._members = members
        self.replies: list[Message] = []

    def _request(self, command: cmd.Command, who: Fake) -> Message:
        self._members[who.player_id] = who
        got: list[Message] = []
        self.runner.handle(command, got.append)
        assert len(got) == 1, f"{type(command).__name__} got {len(got)} replies"
        check_message(got[0])
        self.replies.append(got[0])
        if got[0]["type"] == "error":
            extra = {k: v for k, v in got[0].items() if k not in ("type", "code", "message")}
            raise TableError(got[0]["code"], got[0]["message"], **extra)
        return got[0]

    def _seed(self) -> int:
        return self.runner.new_seed()

    # requests
    def join(self, p: Fake, spectate: bool = False) -> Message:
        reply = self._request(cmd.Join(p.player_id, p.name, spectate), p)
        p.receive(reply)
        return reply

    def resync(self, p: Fake) -> Message:
        return self._request(cmd.Resync(p.player_id), p)

    def leave(self, p: Fake) -> None:
        self._request(cmd.Leave(p.player_id), p)

    def sit(self, p: Fake, seat: Any) -> None:
        self._request(cmd.Sit(p.player_id, seat), p)

    def stand(self, p: Fake) -> None:
        self._request(cmd.Stand(p.player_id), p)

    def add_bot(self, p: Fake, seat: Any, level: str = "medium") -> None:
        self._request(cmd.AddBot(p.player_id, seat, level, self._seed()), p)

    def remove_bot(self, p: Fake, seat: Any) -> None:
        self._request(cmd.RemoveBot(p.player_id, seat), p)

    def set_ready(self, p: Fake, ready: bool) -> None:
        self._request(cmd.Ready(p.player_id, ready), p)

    def start(self, p: Fake) -> None:
        self._request(cmd.Start(p.player_id, self._seed()), p)

    def move(self, p: Fake, wire_move: dict[str, Any]) -> None:
        self._request(cmd.Play(p.player_id, wire_move), p)

    def chat(self, p: Fake, text: str) -> None:
        self._request(cmd.Chat(p.player_id, text), p)

    def rematch(self, p: Fake, agree: bool) -> None:
        self._request(cmd.Rematch(p.player_id, agree, self._seed()), p)

    # happenings
    def present(self, p: Fake) -> None:
        self.runner.handle(cmd.Seen(p.player_id))

    def disconnected(self, p: Fake) -> None:
        p.connected = False
        self.runner.handle(cmd.Disconnected(p.player_id))

    def reconnected(self, p: Fake) -> None:
        p.connected = True
        self.runner.handle(cmd.Reconnected(p.player_id))

    # reading
    @property
    def match(self) -> Match:
        assert self.core.match is not None
        return self.core.match

    @property
    def phase(self) -> str:
        return self.core.phase

    @property
    def closed(self) -> bool:
        return self.core.closed

    @property
    def id(self) -> int:
        return self.core.id

    @property
    def code(self) -> str | None:
        return self.core.code

    @property
    def settings(self) -> TableSettings:
        return self.core.settings

    @property
    def host(self) -> Fake | None:
        host = self.core.host
        return self._members[host] if host is not None else None

    def members(self) -> list[Fake]:
        return [self._members[m] for m in self.core.members()]

    def seat_of(self, p: Fake) -> int | None:
        return self.core.seat_of(p.player_id)

    def summary(self) -> dict[str, Any]:
        return self.core.summary()

    def snapshot_for(self, p: Fake) -> Message:
        return self.core.snapshot(p.player_id)


@dataclass
class Rig:
    table: Driver
    clock: Clock
    host: Fake
    changes: list[dict[str, Any]]
    closed: list[int]
    left: list[str]

    def people(self, n: int, prefix: str = "p") -> list[Fake]:
        return [Fake(f"{prefix.upper()}{i}") for i in range(n)]


def make_table(rules: str = "classic", seats: int = 2, *, private: bool = False,
               settings: TableSettings = TIMED_NO_DELAYS, seed: int = 1,
               host: Fake | None = None, journal: Journal = NO_JOURNAL,
               on_match: Callable[[MatchOver], object] | None = None,
               clock: Clock | None = None, **options: Any) -> Rig:
    clock = clock or Clock()
    changes: list[dict[str, Any]] = []
    closed: list[int] = []
    left: list[str] = []
    host = host or Fake("Host")
    members: dict[str, Fake] = {host.player_id: host}
    rng = random.Random(seed)
    core = TableCore(7, "t", Options.make(rules, seats, **options), private=private,
                     host=host.player_id, settings=settings,
                     code="ABCDEF" if private else None)

    def deliver(member: str, msg: Message) -> None:
        members[member].receive(msg)

    runner = TableRunner(core, clock, deliver, rng=rng,
                         on_change=lambda t: changes.append(t.core.summary()),
                         on_close=lambda t: closed.append(t.id),
                         on_left=lambda t, m: left.append(m), on_match=on_match,
                         journal=journal)
    return Rig(Driver(runner, members), clock, host, changes, closed, left)


def run_clock(clock: Clock, limit: int = 100_000) -> None:
    """Run every call due now, the calls those schedule, and so on (bots at delay 0)."""
    for _ in range(limit):
        due = [c for c in clock.getDelayedCalls() if c.getTime() <= clock.seconds()]  # type: ignore[misc]
        if not due:
            return
        clock.advance(0)
    raise AssertionError("the clock never settled")


def play_out(rig: Rig, humans: Iterable[Fake], rng: random.Random,
             max_moves: int = 20_000) -> int:
    """Play until the match ends; humans choose at random from the moves offered.

    Checks on the way that the moves the seat to act was offered are exactly the
    engine's legal moves. Returns the number of human moves made.
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
        prompt = human.prompt()
        assert prompt is not None, f"{human.name} must act but was offered no moves"
        legal = [move_to_wire(m) for m in legal_moves(deal, deal.to_act)]  # type: ignore[arg-type]
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


def two_humans(rules: str = "classic", **settings: Any) -> tuple[Rig, Fake, Fake]:
    """A started table of two fake humans (`settings` change `TIMED_NO_DELAYS`), its
    first deal dealt."""
    rig = make_table(rules, 2, settings=replace(TIMED_NO_DELAYS, **settings))
    a, b = seated(rig, ["h", "h"])
    rig.table.start(a)
    run_clock(rig.clock)
    return rig, a, b


def drain_then_seven(offered: Message) -> dict[str, Any]:
    """A classic move that runs the stock low, then plays a 7 on it: the penalty must
    then be drawn across a reshuffle (C11, C15 with `empty_stock: reshuffle`).

    `offered` is the message that offered the moves (an `update` or `table`)."""
    view, moves = offered["view"], offered["moves"]
    sevens = [m for m in moves if m["kind"] == "play" and m["card"][0] == "7"]
    draw = {"kind": "draw"}
    move: dict[str, Any]
    if view["penalty"]:
        move = draw if draw in moves else moves[0]
    elif sevens and view["stock"] < 3:
        move = sevens[0]
    elif draw in moves and view["stock"] > 2:
        move = draw
    else:
        plays = [m for m in moves if m["kind"] == "play" and m["card"][0] != "7"]
        move = plays[0] if plays else {"kind": "pass"} if {"kind": "pass"} in moves \
            else moves[0]
    return move
