"""The table core on its own: no Twisted, no clock, no randomness of its own.

Driven here by a few lines of loop instead of the runner: timers are a dict, a bot's
decision is the first legal move. What matters most is that the core is a function of
its commands: replaying the commands it was given (with their times) into a fresh core
gives the same effects at every step, which is what a stored table is rebuilt from.
"""

from __future__ import annotations

import pickle
import random
from pathlib import Path
from typing import Any, NamedTuple

from hypothesis import given, settings
from hypothesis import strategies as st

from pisyedili.protocol.schema import Direction, validate
from pisyedili.server.rules import Options
from pisyedili.server.table import commands as cmd
from pisyedili.server.table.core import TableCore, TablePhase, TableSettings
from pisyedili.server.table.effects import AskBot, Effect, MatchOver, Reply, Send, SetTimer

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = TableSettings(turn_seconds=20.0, grace_seconds=30.0, bot_delay=0.5,
                         deal_pause=2.0, max_timeouts_before_bot=2)


def new_core(rules: str, seats: int, rated: bool = False) -> TableCore:
    end = "deals:2" if rules == "classic" else "points:40"
    return TableCore(1, "t", Options.make(rules, seats, match_end=end), private=False,
                     host="1", settings=SETTINGS, rated=rated)


class Loop:
    """Feeds a core, keeps its timers, logs every command with its time."""

    def __init__(self, core: TableCore) -> None:
        self.core = core
        self.now = 0.0
        self.timers: dict[str, float] = {}
        self.log: list[tuple[cmd.Command, float]] = []
        self.effects: list[list[Effect]] = []
        self.inbox: dict[str, list[dict[str, Any]]] = {}

    def do(self, command: cmd.Command) -> list[Effect]:
        self.log.append((command, self.now))
        out = self.core.handle(command, self.now)
        self.effects.append(out)
        replies = [i for i, e in enumerate(out) if isinstance(e, Reply)]
        # A request gets exactly one reply, first; nothing else gets one.
        assert replies == ([0] if isinstance(command, cmd.REQUESTS) else []), command
        for effect in out:
            if isinstance(effect, SetTimer):
                self.timers[effect.key] = self.now + effect.delay
            elif type(effect).__name__ == "CancelTimer":
                self.timers.pop(effect.key, None)  # type: ignore[union-attr]
            elif isinstance(effect, Send):
                validate(effect.msg, Direction.TO_CLIENT)
                self.inbox.setdefault(effect.to, []).append(effect.msg)
            elif isinstance(effect, Reply):
                validate(effect.msg, Direction.TO_CLIENT)
        for effect in out:
            if isinstance(effect, AskBot):
                self.do(cmd.BotMoved(effect.serial, effect.legal[0]))
        return out

    def fire_next(self) -> bool:
        if not self.timers:
            return False
        key = min(self.timers, key=lambda k: (self.timers[k], k))
        self.now = max(self.now, self.timers.pop(key))
        self.do(cmd.TimerFired(key))
        return True

    def offered(self, member: str) -> list[dict[str, Any]] | None:
        for msg in reversed(self.inbox.get(member, [])):
            if msg["type"] in ("update", "table"):
                return msg.get("moves")  # type: ignore[no-any-return]
        return None


def test_every_request_gets_one_reply_and_it_comes_first() -> None:
    loop = Loop(new_core("classic", 3))
    requests = [cmd.Join("1", "Ayşe"), cmd.Join("2", "Mehmet"), cmd.Sit("2", 2),
                cmd.Sit("2", 9), cmd.AddBot("2", 1, "easy", 1), cmd.AddBot("1", 1, "easy", 1),
                cmd.Ready("2", True), cmd.Chat("2", "merhaba"), cmd.Resync("2"),
                cmd.Start("2", 5), cmd.Start("1", 5)]
    for request in requests:
        out = loop.do(request)  # type: ignore[arg-type]
        replies = [e for e in out if isinstance(e, Reply)]
        assert len(replies) == 1, request
        assert out[0] is replies[0], request


def test_a_move_that_hands_the_decision_back_answers_before_the_update() -> None:
    loop = Loop(new_core("classic", 2))
    loop.do(cmd.Join("1", "A"))
    loop.do(cmd.Join("2", "B"))
    loop.do(cmd.Ready("2", True))
    loop.do(cmd.Start("1", 3))
    for _ in range(400):
        if loop.core.phase != "playing":
            break
        deal = loop.core.match.deal  # type: ignore[union-attr]
        if deal.over:
            loop.fire_next()
            continue
        member = "1" if loop.core.seat_of("1") == deal.to_act else "2"
        moves = loop.offered(member)
        assert moves
        out = loop.do(cmd.Play(member, moves[-1]))
        assert isinstance(out[0], Reply) and out[0].msg == {"type": "ok"}
        mine = [e for e in out if isinstance(e, Send) and e.to == member]
        assert "update" in [e.msg["type"] for e in mine]
    assert loop.core.phase == "over"


class Script(NamedTuple):
    rules: str
    seats: int
    choices: list[int]
    rated: bool = False
    guests: frozenset[str] = frozenset()
    """Members without an account (never the host: a guest may not open a rated table)."""


@st.composite
def scripts(draw: st.DrawFn) -> Script:
    rules = draw(st.sampled_from(["classic", "cardiva"]))
    seats = draw(st.integers(2, 4))
    choices = draw(st.lists(st.integers(0, 2**16), min_size=40, max_size=160))
    guests = draw(st.frozensets(st.sampled_from([str(i) for i in range(2, seats + 1)])))
    return Script(rules, seats, choices, draw(st.booleans()), guests)


def run_script(rules: str, seats: int, choices: list[int], rated: bool = False,
               guests: frozenset[str] = frozenset()) -> Loop:
    """A table life steered by `choices`: people come and go, play, time out, return,
    try seats (a guest in vain at a rated table, where bots fill the seats guests left)."""
    loop = Loop(new_core(rules, seats, rated))
    people = [str(i) for i in range(1, seats + 1)]
    loop.do(cmd.Join("1", "P1", registered=True))
    for p in people[1:]:
        loop.do(cmd.Join(p, f"P{p}", registered=p not in guests))
        loop.do(cmd.Ready(p, True))
    for seat in loop.core.snapshot("1")["table"]["seats"]:
        if seat["kind"] == "open":
            loop.do(cmd.AddBot("1", seat["seat"], "easy", choices[0]))
    loop.do(cmd.Start("1", choices[0]))
    away: set[str] = set()
    for c in choices[1:]:
        if loop.core.closed:
            break
        what = c % 10
        who = people[(c // 10) % len(people)]
        if what < 5:
            moves = loop.offered(who)
            if moves and loop.core.is_member(who):
                loop.do(cmd.Play(who, moves[(c // 100) % len(moves)]))
            else:
                loop.fire_next()
        elif what == 5:
            loop.do(cmd.Disconnected(who))
            away.add(who)
        elif what == 6 and who in away:
            loop.do(cmd.Reconnected(who))
            away.discard(who)
        elif what == 7:
            loop.do(cmd.Chat(who, "hi"))
        elif what == 8 and loop.core.phase == "over":
            loop.do(cmd.Rematch(who, c % 3 != 0, c))
        elif what == 9 and loop.core.is_member(who) and c % 3 == 0:
            loop.do(cmd.Sit(who, (c // 100) % seats, registered=who not in guests))
        elif what == 9 and loop.core.is_member(who) and c % 3 == 1:
            loop.do(cmd.Stand(who))
        else:
            loop.fire_next()
    return loop


@settings(max_examples=40, deadline=None)
@given(scripts())
def test_replaying_the_commands_gives_the_same_effects(script: Script) -> None:
    live = run_script(*script)
    fresh = new_core(script.rules, script.seats, script.rated)
    for (command, now), effects in zip(live.log, live.effects, strict=True):
        assert fresh.handle(command, now) == effects
    assert_same_table(fresh, live.core)


def assert_same_table(core: TableCore, live: TableCore) -> None:
    """Every member's snapshot, the timers and the lobby row: all a table shows."""
    for member in live.members():
        assert core.snapshot(member) == live.snapshot(member)
    assert core.timers == live.timers
    assert core.summary() == live.summary()


def test_a_bots_late_answer_is_ignored() -> None:
    loop = Loop(new_core("classic", 2))
    loop.do(cmd.Join("1", "A"))
    loop.do(cmd.AddBot("1", 1, "easy", 1))
    loop.do(cmd.Start("1", 11))
    while loop.core.match.deal.to_act != 1:  # type: ignore[union-attr]
        moves = loop.offered("1")
        assert moves
        loop.do(cmd.Play("1", moves[0]))
    before = loop.core.snapshot("1")
    legal = [m for m in range(70)]
    assert loop.core.handle(cmd.BotMoved(-5, legal[0]), loop.now) == []
    assert loop.core.snapshot("1") == before


def test_the_core_draws_no_randomness_of_its_own() -> None:
    # The same commands with a different global random state: the same table.
    outs = []
    for seed in (1, 2):
        random.seed(seed)
        outs.append(run_script("cardiva", 3, list(range(7, 300, 7))).effects)
    assert outs[0] == outs[1]


def test_a_closed_table_still_answers_every_request() -> None:
    loop = Loop(new_core("classic", 2))
    loop.do(cmd.Join("1", "A"))
    loop.do(cmd.Leave("1"))
    assert loop.core.closed
    for request in (cmd.Join("2", "B"), cmd.Sit("1", 0), cmd.Play("1", {"kind": "draw"}),
                    cmd.Chat("1", "hi"), cmd.Resync("1")):
        out = loop.do(request)  # `do` checks the one reply
        assert isinstance(out[0], Reply) and out[0].msg["code"] == "no_such_table"
        assert len(out) == 1
    assert loop.do(cmd.TimerFired("turn")) == []


def deal_so_far(inbox: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The current deal's events as a member's updates told them (no deal_start, no
    timeout notices: what a snapshot's `deal_events` promises)."""
    told: list[dict[str, Any]] = []
    for msg in inbox:
        if msg["type"] != "update":
            continue
        for ev in msg["events"]:
            if ev["event"] == "deal_start":
                told = []
            elif ev["event"] != "timeout":
                told.append(ev)
    return told


def test_a_snapshot_carries_the_deal_so_far_as_each_member_may_see_it() -> None:
    """Mid-deal, a player's and a spectator's snapshot hold exactly the events their
    updates carried: own draws with their cards, others' draws without."""
    loop = Loop(new_core("classic", 2))
    loop.do(cmd.Join("1", "A"))
    loop.do(cmd.Join("2", "B"))
    loop.do(cmd.Ready("2", True))
    loop.do(cmd.Start("1", 7))
    loop.do(cmd.Join("3", "C", spectate=True))
    drawn = {"1": 0, "2": 0}
    for _ in range(40):
        deal = loop.core.match.deal  # type: ignore[union-attr]
        if deal.over:
            break
        member = "1" if loop.core.seat_of("1") == deal.to_act else "2"
        moves = loop.offered(member)
        assert moves
        draw = next((m for m in moves if m["kind"] == "draw"), None)
        move = draw if draw is not None and drawn[member] < 3 else moves[0]
        drawn[member] += move["kind"] == "draw"
        loop.do(cmd.Play(member, move))
    assert min(drawn.values()) > 0
    for member in ("1", "2", "3"):
        snap = loop.core.snapshot(member)
        validate(snap, Direction.TO_CLIENT)
        told = deal_so_far(loop.inbox[member])
        assert told and snap["deal_events"] == told
        seat = loop.core.seat_of(member)
        draws = [e for e in snap["deal_events"] if e["event"] == "draw"]
        assert all(("cards" in e) == (seat is not None and e["seat"] == seat) for e in draws)
    assert any("cards" in e for e in loop.core.snapshot("1")["deal_events"])


def test_a_snapshot_before_the_first_deal_has_no_deal_events() -> None:
    loop = Loop(new_core("classic", 2))
    loop.do(cmd.Join("1", "A"))
    assert "deal_events" not in loop.core.snapshot("1")


def answer(loop: Loop, request: cmd.Command) -> dict[str, Any]:
    reply = loop.do(request)[0]
    assert isinstance(reply, Reply)
    return reply.msg


def test_a_rated_table_seats_no_guest() -> None:
    """Whether a table is rated is the core's own: a guest who joins it watches, and
    its seat request is refused whatever the seat, while a registered member sits."""
    loop = Loop(new_core("classic", 3, rated=True))
    loop.do(cmd.Join("1", "Ayşe", registered=True))
    assert answer(loop, cmd.Join("2", "Guest"))["you"]["seat"] is None
    for seat in (1, 2, 9):
        assert answer(loop, cmd.Sit("2", seat)) == {
            "type": "error", "code": "account_required",
            "message": "a rated table seats registered players only: log in, or watch"}
    assert loop.core.seat_of("2") is None
    assert answer(loop, cmd.Join("3", "Mehmet", registered=True))["you"]["seat"] == 1
    assert answer(loop, cmd.Sit("2", 2, registered=True)) == {"type": "ok"}  # logged in
    assert loop.core.seat_of("2") == 2
    casual = Loop(new_core("classic", 2))
    casual.do(cmd.Join("1", "Ayşe"))
    assert answer(casual, cmd.Join("2", "Guest"))["you"]["seat"] == 1


def test_a_rated_tables_match_is_rated() -> None:
    for rated in (False, True):
        live = run_script("classic", 2, [5, *([0] * 400)], rated=rated)
        (over,) = [e for out in live.effects for e in out if isinstance(e, MatchOver)]
        assert over.rated is rated


def test_the_phase_is_an_enum_and_the_wire_keeps_its_strings() -> None:
    """`TableCore.phase` is a `TablePhase`; the lobby row and `table_info` carry its value
    as a plain string, and a pickled core (a restart's snapshot) keeps the member."""
    assert new_core("classic", 2).phase is TablePhase.WAITING
    loop = Loop(new_core("classic", 2))
    loop.do(cmd.Join("1", "A"))
    loop.do(cmd.Join("2", "B"))
    loop.do(cmd.Ready("2", True))
    loop.do(cmd.Start("1", 3))
    assert loop.core.phase is TablePhase.PLAYING
    for wire in (loop.core.summary()["phase"], loop.core.info()["phase"]):
        assert type(wire) is str and wire == "playing"
    again = pickle.loads(pickle.dumps(loop.core, pickle.HIGHEST_PROTOCOL))
    assert again.phase is TablePhase.PLAYING
