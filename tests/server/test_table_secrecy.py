"""Hidden information never leaves the table.

Every message each fake participant receives over whole matches is scanned, at the
moment it is sent, for card names the recipient may not know: another seat's cards
or the stock. A seat may know its own hand (now and earlier this deal), the pile
(every card played this deal is seen by all), and muamele picks while the engine
shows them to everyone (K14). After a deal ends everything is revealed, so those
messages are not scanned.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from table_kit import Fake, Rig, make_table, play_out, run_clock, seated

from pisyedili.server.rules import events_for, view
from pisyedili.server.table.effects import Message

CARD = re.compile(r"(?i)^(?:10|[2-9jqka])[cdhs]$")


def cards_in(value: Any) -> set[str]:
    """Every string in a message that names a card, wherever it sits."""
    found: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str) and CARD.match(v):
            found.add(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
    return found


@dataclass
class Watch:
    """What each participant may know, kept in step with the table as messages go out."""

    rig: Rig | None = None
    deal_no: dict[str, int] = field(default_factory=dict)
    known: dict[str, set[str]] = field(default_factory=dict)
    scanned: int = 0
    leaks: list[tuple[str, set[str], Message]] = field(default_factory=list)

    def __call__(self, p: Fake, msg: Message) -> None:
        assert self.rig is not None
        table = self.rig.table
        match = table.core.match
        if match is None or match.deal.over:
            return
        seat = table.seat_of(p)
        if self.deal_no.get(p.player_id) != match.deal_no:
            self.deal_no[p.player_id] = match.deal_no
            self.known[p.player_id] = set()
        known = self.known[p.player_id]
        public = view(match, None)
        known.update(public["pile"])
        if seat is not None:
            known.update(view(match, seat)["hand"])
        if msg["type"] == "update":
            # Whatever the engine's masking shows a spectator is public by its decision
            # (today: muamele picks, K14); once it masks a pick, this adds nothing and
            # the scan holds picks to the same rule as every other card.
            for ev in events_for(msg["events"], None):
                if ev["event"] == "pick" and "card" in ev:
                    known.add(ev["card"])
        self.scanned += 1
        unknown = cards_in(msg) - known
        if unknown:
            self.leaks.append((p.name, unknown, msg))


def watched(rig: Rig, people: list[Fake], watch: Watch) -> None:
    watch.rig = rig
    for p in people:
        p.hook = watch


@pytest.mark.parametrize(
    ("rules", "kinds", "options", "spectators"),
    [
        ("classic", "hbbh", {"match_end": "deals:2"}, 2),
        ("classic", "hhb", {"match_end": "deals:2", "empty_stock": "reshuffle"}, 1),
        ("cardiva", "hh", {"match_end": "points:101"}, 1),
        ("cardiva", "hbhb", {"match_end": "points:60"}, 1),
    ],
)
def test_no_message_carries_a_card_its_recipient_may_not_know(
        rules: str, kinds: str, options: dict[str, str], spectators: int) -> None:
    rig = make_table(rules, len(kinds), **options)  # type: ignore[arg-type]
    watch = Watch()
    watched(rig, [rig.host], watch)
    humans = seated(rig, list(kinds), level="easy")
    lookers = [Fake(f"S{i}") for i in range(spectators)]
    watched(rig, humans + lookers, watch)
    for s in lookers:
        rig.table.join(s, spectate=True)
    rig.table.start(rig.host)
    play_out(rig, humans, random.Random(11))
    assert rig.table.phase == "over"
    assert watch.scanned > 100
    assert not watch.leaks, watch.leaks[:3]
    for s in lookers:
        assert s.of_type("update")
        assert all(m["view"]["hand"] is None and "moves" not in m for m in s.of_type("update"))
        assert all("hand" not in e and "cards" not in e for e in s.events())


def test_reconnect_and_stand_ins_leak_nothing() -> None:
    rig = make_table("classic", 3, match_end="deals:2")
    watch = Watch()
    watched(rig, [rig.host], watch)
    humans = seated(rig, ["h", "h", "h"])
    watched(rig, humans, watch)
    t = rig.table
    t.start(rig.host)
    run_clock(rig.clock)
    gone = humans[2]
    gone.connected = False
    t.disconnected(gone)
    rig.clock.advance(t.settings.grace_seconds)  # a bot holds the seat now
    run_clock(rig.clock)
    for _ in range(20):
        if t.phase != "playing":
            break
        actor = next(h for h in humans[:2] if t.seat_of(h) == t.match.deal.to_act)
        prompt = actor.prompt()
        assert prompt is not None
        t.move(actor, prompt["moves"][0])
        run_clock(rig.clock)
    gone.connected = True
    t.reconnected(gone)
    play_out(rig, humans, random.Random(8))
    assert t.phase == "over"
    assert not watch.leaks, watch.leaks[:3]


def test_the_scan_catches_a_leak() -> None:
    """The watch itself: a message naming another seat's card is flagged."""
    rig = make_table("classic", 2)
    watch = Watch()
    a, b = seated(rig, ["h", "h"])
    watched(rig, [a, b], watch)
    rig.table.start(a)
    other_hand = view(rig.table.match, rig.table.seat_of(b))["hand"]
    assert watch.scanned and not watch.leaks
    a.receive({"type": "chat", "scope": "table", "name": "x", "spectator": False,
               "text": other_hand[0]})
    assert watch.leaks and other_hand[0] in watch.leaks[0][1]
