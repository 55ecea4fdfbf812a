"""Edges of the protocol a third-party client author met, over real sockets: each is
what docs/protocol.md says it is."""

from __future__ import annotations

import random

import pytest
import pytest_twisted
from net_match import ends_match, open_table, pending_turn
from twisted.internet import task
from wireclient import Msg, Server

from pisyedili.protocol import ERRORS
from pisyedili.server.net.handlers.table import TABLE_REQUESTS
from pisyedili.server.net.limits import ServerLimits

MOST_STEPS = 3000
"""A backstop: the seed below reaches muamele within its first deals."""


@pytest_twisted.ensureDeferred
async def test_a_play_in_muamele_is_refused_saying_to_send_a_pick() -> None:
    server = await Server.start(seed=3)
    try:
        clients, _ = await open_table(server, ["ann", "ben"], "cardiva", 2,
                                      options={"match_end": "deals:50"})
        rng = random.Random(3)
        for _ in range(MOST_STEPS):
            mover, offered = await pending_turn(clients)
            view = offered["view"]
            if view["phase"] == "muamele":
                break
            plays = [m for m in offered["moves"] if m["kind"] == "play"]
            await mover.ok("move", move=rng.choice(plays or offered["moves"]))
            assert not any(ends_match(m) for m in mover.received), "no muamele in the match"
        else:
            pytest.fail("no muamele within the steps")
        assert {m["kind"] for m in offered["moves"]} == {"pick"}
        card = view["hand"][0]
        refused = await mover.request("move", move={"kind": "play", "card": card})
        assert (refused["type"], refused["code"]) == ("error", "illegal_move")
        assert (refused["rule"], refused["field"]) == ("K14", "move.kind")
        spread = len(offered["moves"])
        assert refused["message"] == (
            'muamele: no play until it ends; send a pick, kind "pick" with a position '
            f"0-{spread - 1}, one of the {spread} face-down cards")
        # Nothing changed: the pick the message asks for is taken.
        await mover.ok("move", move={"kind": "pick", "position": spread - 1})
    finally:
        await server.stop()


AT_NO_TABLE: dict[str, Msg] = {
    "resync": {},
    "leave_table": {},
    "sit": {"seat": 0},
    "stand": {},
    "add_bot": {"seat": 1},
    "remove_bot": {"seat": 1},
    "ready": {"ready": True},
    "start": {},
    "move": {"move": {"kind": "draw"}},
    "rematch": {"agree": True},
    "chat": {"text": "hi", "scope": "table"},
}


def test_not_at_table_names_every_request_that_needs_a_table() -> None:
    assert set(AT_NO_TABLE) == TABLE_REQUESTS
    meaning = ERRORS["not_at_table"].meaning
    assert all(f"`{kind}`" in meaning for kind in TABLE_REQUESTS), meaning


@pytest_twisted.ensureDeferred
async def test_every_table_request_at_no_table_is_refused_not_at_table() -> None:
    server = await Server.start()
    try:
        lone = await server.connect("lone")
        for rid, (kind, fields) in enumerate(sorted(AT_NO_TABLE.items()), start=10):
            lone.send({"type": kind, "id": rid, **fields})
            refused = await lone.wait_for_id(rid)
            assert (refused["type"], refused["code"]) == ("error", "not_at_table"), kind
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_pong_counts_against_the_rate_and_over_it_is_refused() -> None:
    clock = task.Clock()  # frozen: the bucket never refills
    server = await Server.start(clock=clock, limits=ServerLimits(rate=1, burst=2))
    try:
        client = await server.connect("pacer")  # hello took the first token
        client.send({"type": "pong", "id": 5})  # the second: a pong has no answer
        client.send({"type": "pong", "id": 6})  # none left: refused like any message
        refused = await client.wait_for_id(6)
        assert (refused["type"], refused["code"]) == ("error", "rate_limited")
        assert refused["retry_after"] > 0
        assert not [m for m in client.received if m.get("id") == 5]
        assert not client.is_closed
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_look_alike_whose_2_is_taken_gets_the_next_free_number() -> None:
    server = await Server.start()
    try:
        first = await server.connect("Ayşe")
        second = await server.connect("Ayşe 2")  # asked for, and free
        third = await server.connect("AYŞE")  # looks like "Ayşe": its " 2" is taken
        assert [c.welcome["name"] for c in (first, second, third)] == [
            "Ayşe", "Ayşe 2", "AYŞE 3"]
        fourth = await server.connect("Aуşe")  # a Cyrillic у: the same name again
        assert fourth.welcome["name"] == "Aуşe 4"
    finally:
        await server.stop()
