"""Hidden information never leaves the server.

Many whole games with several clients and a spectator. Every frame each client
received is checked, in order, for a card it may not know: a card is known once it
is in the client's own hand or on the discard pile (C4: played cards are public);
anything else — another seat's hand, a card another seat drew, the stock's order —
is a leak. The deal's end (the update with `deal_end`, whose view's `result` reveals
all hands) is the one moment hands are shown; muamele picks (K14) are turned up as they
are made.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import pytest
import pytest_twisted
from net_match import ends_match, open_table, play_to_match_end
from twisted.internet.defer import Deferred, gatherResults
from wireclient import Msg, Server, WireClient

CARD = re.compile(r"(?i)(?:10|[2-9tjqka])[cdhs]")


def cards_in(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        if CARD.fullmatch(value):
            yield value.upper().replace("T", "10")
    elif isinstance(value, dict):
        for v in value.values():
            yield from cards_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from cards_in(v)


def norm(cards: list[str] | None) -> set[str]:
    return {c.upper().replace("T", "10") for c in cards or []}


def leaks(client: WireClient, spectator: bool) -> list[tuple[int, str, Msg]]:
    """Every (frame index, card, frame) where `client` saw a card it may not know."""
    found: list[tuple[int, str, Msg]] = []
    known: set[str] = set()
    for i, msg in enumerate(client.received):
        view = msg.get("view")
        events = msg["events"] if msg["type"] == "update" else []
        kinds = {e.get("event") for e in events}
        if kinds & {"deal_end", "match_end"} or (view and view.get("result")):
            continue  # the deal is over: every hand is revealed (C13-C14, K12-K13)
        if "deal_start" in kinds:
            known = set()
        for e in events:
            if e.get("event") == "pick":
                # K14: after a seat goes out, each muamele pick is turned up for the
                # table (a picked 7 gives 3 more picks, which everyone must follow).
                known |= norm([e["card"]])
        if view:
            if spectator:
                assert view.get("hand") is None, f"a spectator got a hand: {msg}"
            assert isinstance(view.get("stock"), int), f"the stock is a count: {msg}"
            known |= norm(view.get("hand")) | norm(view.get("pile"))
            if view.get("top"):
                known |= norm([view["top"]])
        found.extend((i, card, msg) for card in cards_in(msg) if card not in known)
    return found


CASES = [("classic", 2, 0), ("classic", 4, 0), ("classic", 3, 2), ("cardiva", 2, 0),
         ("cardiva", 3, 1), ("cardiva", 4, 0)]


@pytest.mark.parametrize(("rules", "humans", "bots"), CASES)
@pytest_twisted.ensureDeferred
async def test_no_frame_carries_a_card_its_receiver_may_not_know(rules: str, humans: int,
                                                                  bots: int) -> None:
    server = await Server.start(seed=humans * 100 + bots)
    try:
        for game in range(3):
            names = [f"g{game}p{i}" for i in range(humans)]
            clients, table_id = await open_table(server, names, rules, humans + bots, bots,
                                                 options={"match_end": "deals:2"})
            watcher = await server.connect(f"g{game}watch")
            snap = await watcher.ok("join_table", table=table_id, spectate=True)
            assert snap["you"]["spectator"] is True
            rng = random.Random(game)
            await gatherResults([Deferred.fromCoroutine(play_to_match_end(c, rng))
                                 for c in clients])
            await watcher.wait(ends_match)
            for client in clients:
                assert client.events("draw"), "no frames worth scanning"
                bad = leaks(client, spectator=False)
                assert not bad, f"{client.welcome['name']} saw {bad[0][1]} in {bad[0][2]}"
            bad = leaks(watcher, spectator=True)
            assert not bad, f"the spectator saw {bad[0][1]} in {bad[0][2]}"
            for client in [*clients, watcher]:
                await client.ok("leave_table")
    finally:
        await server.stop()


def test_the_leak_check_catches_a_leak() -> None:
    """The check above must be able to fail: a frame with a foreign card is reported."""
    client = WireClient()
    view = {"hand": ["7h"], "pile": ["2c"], "top": "2c", "stock": 30, "result": None}
    start = {"event": "deal_start", "deal_no": 1, "dealer": 0}
    client.received = [
        {"type": "update", "table": 1, "events": [start], "view": view},
        {"type": "update", "table": 1, "view": view, "events": [
            {"event": "play", "seat": 0, "card": "2c"},
            {"event": "draw", "seat": 1, "count": 1, "reason": "draw", "cards": ["Qs"]}]},
    ]
    assert [card for _, card, _ in leaks(client, spectator=False)] == ["QS"]
    # A view that shows the card makes it known; the deal's end shows every hand.
    client.received[1]["view"] = {**view, "hand": ["7h", "Qs"]}
    assert not leaks(client, spectator=False)
    with pytest.raises(AssertionError, match="spectator got a hand"):
        leaks(client, spectator=True)
    end = {"event": "deal_end", "result": {"hands": [["Kd"], ["Qs"]]}}
    client.received = [{"type": "update", "table": 1, "events": [end], "view": view}]
    assert not leaks(client, spectator=False)
