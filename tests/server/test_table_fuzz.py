"""Any sequence of commands, sensible or not, leaves a table consistent (bad input
never crashes anything; refusals are `TableError`s with registered codes)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from table_kit import Fake, Rig, make_table, run_clock

from pisyedili.protocol.errors import ERRORS
from pisyedili.server.table.core import TableError

PEOPLE = 4
MOVES: list[Any] = [
    {"kind": "draw"}, {"kind": "pass"}, {"kind": "pick", "position": 0},
    {"kind": "play", "card": "7h"}, {"kind": "play", "card": "Jc", "suit": "h"},
    {"kind": "play", "card": "nope"}, {"kind": "jump"}, "draw", None, 7,
]

command = st.one_of(
    st.tuples(st.just("join"), st.integers(0, PEOPLE - 1), st.booleans()),
    st.tuples(st.just("leave"), st.integers(0, PEOPLE - 1)),
    st.tuples(st.just("sit"), st.integers(0, PEOPLE - 1), st.integers(-1, 4)),
    st.tuples(st.just("stand"), st.integers(0, PEOPLE - 1)),
    st.tuples(st.just("add_bot"), st.integers(0, PEOPLE - 1), st.integers(0, 3),
              st.sampled_from(["easy", "medium", "nope"])),
    st.tuples(st.just("remove_bot"), st.integers(0, PEOPLE - 1), st.integers(0, 3)),
    st.tuples(st.just("ready"), st.integers(0, PEOPLE - 1), st.booleans()),
    st.tuples(st.just("start"), st.integers(0, PEOPLE - 1)),
    st.tuples(st.just("move"), st.integers(0, PEOPLE - 1), st.integers(0, len(MOVES))),
    st.tuples(st.just("chat"), st.integers(0, PEOPLE - 1), st.text(max_size=5)),
    st.tuples(st.just("rematch"), st.integers(0, PEOPLE - 1), st.booleans()),
    st.tuples(st.just("drop"), st.integers(0, PEOPLE - 1)),
    st.tuples(st.just("back"), st.integers(0, PEOPLE - 1)),
    st.tuples(st.just("wait"), st.sampled_from([0.0, 1.0, 31.0, 61.0])),
    # Macros that reach play often enough to matter.
    st.tuples(st.just("fill_and_start"), st.integers(0, PEOPLE - 1)),
    st.tuples(st.just("play"), st.integers(0, 5)),
)


def step(rig: Rig, people: list[Fake], cmd: tuple[Any, ...]) -> None:
    t = rig.table
    kind = cmd[0]
    if kind == "wait":
        rig.clock.advance(cmd[1])
        run_clock(rig.clock)
        return
    if kind == "play":
        for _ in range(cmd[1] * 10):
            match = t.core.match
            actor = next((q for q in people if match is not None and not match.deal.over
                          and t.seat_of(q) == match.deal.to_act and q.prompt()), None)
            if actor is None or t.phase != "playing":
                break
            prompt = actor.prompt()
            assert prompt is not None
            t.move(actor, prompt["moves"][0])
            run_clock(rig.clock)
        return
    p = people[cmd[1]]
    if kind == "fill_and_start":
        for seat in range(len(t.snapshot_for(p)["table"]["seats"])):
            if t.snapshot_for(p)["table"]["seats"][seat]["kind"] == "open":
                t.add_bot(p, seat, "easy")
        t.start(p)
    elif kind == "join":
        t.join(p, spectate=cmd[2])
    elif kind == "leave":
        t.leave(p)
    elif kind == "sit":
        t.sit(p, cmd[2])
    elif kind == "stand":
        t.stand(p)
    elif kind == "add_bot":
        t.add_bot(p, cmd[2], cmd[3])
    elif kind == "remove_bot":
        t.remove_bot(p, cmd[2])
    elif kind == "ready":
        t.set_ready(p, cmd[2])
    elif kind == "start":
        t.start(p)
    elif kind == "move":
        prompt = p.prompt()
        wire = prompt["moves"][0] if cmd[2] == len(MOVES) and prompt else \
            MOVES[cmd[2] % len(MOVES)]
        t.move(p, wire)
    elif kind == "chat":
        t.chat(p, cmd[2])
    elif kind == "rematch":
        t.rematch(p, cmd[2])
    elif kind == "drop" and p.connected:
        p.connected = False
        t.disconnected(p)
    elif kind == "back" and not p.connected:
        p.connected = True
        t.reconnected(p)
    run_clock(rig.clock)


def check(rig: Rig, people: list[Fake]) -> None:
    t = rig.table
    if t.closed:
        return
    members = {m.player_id for m in t.members()}
    for p in people:
        snap = t.snapshot_for(p)
        seats = [s for s in snap["table"]["seats"] if s.get("player") == int(p.player_id)]
        if p.player_id in members:
            assert len(seats) + snap["you"]["spectator"] == 1, "seated once, or watching"
        else:
            assert not seats, "a non-member holds no seat"
    assert t.phase in ("waiting", "playing", "over")
    match = t.core.match
    if t.phase == "playing":
        assert match is not None and snap["match"] is not None
        deal = match.deal
        seats = snap["table"]["seats"]
        # A human who must decide holds its moves (its latest update or snapshot says
        # so); nobody else is offered any.
        for p in people:
            if not p.connected or p.player_id not in members:
                continue
            seat = t.seat_of(p)
            owes = (not deal.over and seat is not None and deal.to_act == seat
                    and "held_by_bot" not in seats[seat])
            assert (p.prompt() is not None) == owes, (p.name, owes)
    # The host is a member; a table with a seated human has a host (a spectator never
    # takes the role, but a host who stands up to watch keeps it).
    seated = [p for p in people if p.player_id in members and t.seat_of(p) is not None]
    assert t.host is None or t.host.player_id in members
    assert t.host is not None or not seated, "a seated human and no host"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([("classic", 3), ("cardiva", 2), ("classic", 4)]),
       st.lists(command, max_size=40))
def test_random_commands_never_break_a_table(shape: tuple[str, int],
                                             cmds: list[tuple[Any, ...]]) -> None:
    rules, seats = shape
    people = [Fake(f"P{i}") for i in range(PEOPLE)]
    rig = make_table(rules, seats, host=people[0], match_end="deals:1"
                     if rules == "classic" else "points:30")
    rig.table.join(people[0])
    for cmd in cmds:
        try:
            step(rig, people, cmd)
        except TableError as e:
            assert e.code in ERRORS, e.code
        check(rig, people)
        if rig.table.closed:
            assert rig.closed == [rig.table.id]
            break
