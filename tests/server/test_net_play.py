"""Whole matches over real sockets, both rule sets, with and without bots."""

from __future__ import annotations

import random

import pytest
import pytest_twisted
from net_match import open_table, play_to_match_end
from twisted.internet.defer import Deferred, gatherResults
from wireclient import UNTIMED_NO_DELAYS, Server

from pisyedili.server.table.core import TableSettings

CASES = [
    # rules, humans, bots, options
    ("classic", 2, 0, {"match_end": "deals:2"}),
    ("classic", 2, 2, {"match_end": "deals:1", "ten": "bounce"}),
    ("classic", 3, 3, {"match_end": "deals:1"}),
    ("cardiva", 2, 0, {"match_end": "deals:1"}),
    ("cardiva", 3, 1, {"match_end": "deals:1", "empty_stock": "reshuffle"}),
    ("cardiva", 4, 0, {"match_end": "deals:1"}),
    ("cardiva", 1, 3, {"match_end": "deals:1"}),
]


@pytest.mark.parametrize(("rules", "humans", "bots", "options"), CASES)
@pytest_twisted.ensureDeferred
async def test_whole_match_to_the_end(rules: str, humans: int, bots: int,
                                      options: dict[str, str]) -> None:
    server = await Server.start()
    try:
        names = [f"p{i}" for i in range(humans)]
        clients, _table_id = await open_table(server, names, rules, humans + bots, bots,
                                             options)
        rng = random.Random(humans * 10 + bots)
        ends = await gatherResults([Deferred.fromCoroutine(play_to_match_end(c, rng))
                                    for c in clients])
        # Everyone hears the same result, and the winners have the lowest total (C16, K15).
        assert all(e == ends[0] for e in ends)
        totals, winners = ends[0]["totals"], ends[0]["winners"]
        assert len(totals) == humans + bots
        assert winners and all(totals[w] == min(totals) for w in winners)
        for client in clients:
            deal_ends = [m for m in client.received if m["type"] == "update"
                         and any(e["event"] == "deal_end" for e in m["events"])]
            assert [m["view"]["deal_no"] for m in deal_ends] == \
                list(range(1, len(deal_ends) + 1))
            assert deal_ends[-1]["view"]["scores"] == totals
            assert client.events("match_end") == [ends[0]]
            assert not client.errors(), client.errors()
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_hard_bots_search_in_threads_while_the_reactor_serves() -> None:
    """As the server runs them (`bot_thread`): the search leaves the reactor thread."""
    threaded = TableSettings(turn_seconds=0, grace_seconds=60, bot_delay=0, deal_pause=0,
                             bot_thread=True, hard_budget_s=0.02)
    assert UNTIMED_NO_DELAYS.bot_thread is False, "this test is the only one that exercises threads"
    server = await Server.start(settings=threaded)
    try:
        clients, _ = await open_table(server, ["solo"], "cardiva", 3, bots=2, level="hard")
        end = await play_to_match_end(clients[0], random.Random(3))
        assert len(end["totals"]) == 3 and end["winners"]
        assert not clients[0].errors(), clients[0].errors()
    finally:
        await server.stop()
