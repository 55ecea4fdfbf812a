"""A table's life as clients see it over real sockets: the turn timer and stand-in bots,
a dropped player's seat held and handed back, table chat, rematch."""

from __future__ import annotations

import random

import pytest_twisted
from net_match import open_table, pending_turn, play_to_match_end
from twisted.internet import task
from twisted.internet.defer import Deferred, gatherResults
from wireclient import Msg, Server, WireClient, event_of

from pisyedili.server.net.limits import ServerLimits
from pisyedili.server.table.core import TableSettings

QUIET = ServerLimits(rate=10_000, burst=10_000, ping_seconds=10_000, idle_seconds=20_000)
"""The clock in these tests jumps far ahead: no heartbeat may close a connection."""


def seat_of(client: WireClient) -> int:
    return next(m for m in client.received if m["type"] == "table")["you"]["seat"]  # type: ignore[no-any-return]


def last_table_update(client: WireClient) -> Msg:
    return [m for m in client.received if m["type"] == "table_update"][-1]


def held(update: Msg, seat: int) -> str | None:
    return update["table"]["seats"][seat].get("held_by_bot")  # type: ignore[no-any-return]


async def others_play_until(clock: task.Clock, clients: list[WireClient],
                            target: WireClient, rounds: int = 200) -> Msg:
    """Everyone else answers prompts (bots run on the clock) until `target` is asked."""
    for _ in range(rounds):
        clock.advance(0)  # bots, stand-ins and the next deal run on the clock
        try:
            who, turn = await pending_turn(clients)
        except AssertionError:
            continue  # a bot is to act: the next advance lets it
        if who is target:
            return turn
        await who.ok("move", move=turn["moves"][0])
    raise AssertionError("the target was never asked to move")


@pytest_twisted.ensureDeferred
async def test_timed_out_seat_is_played_for_then_held_by_a_bot_then_reclaimed() -> None:
    clock = task.Clock()
    settings = TableSettings(turn_seconds=10, grace_seconds=60, bot_delay=0, deal_pause=0,
                             max_timeouts_before_bot=2)
    server = await Server.start(clock=clock, settings=settings, limits=QUIET)
    try:
        clients, _ = await open_table(server, ["ann", "ben"], "classic", 2,
                                      options={"match_end": "deals:30"})
        idler, turn = await pending_turn(clients)
        other = clients[1] if idler is clients[0] else clients[0]
        seat = seat_of(idler)
        assert turn["deadline"] == 10  # the prompt carries the time left
        theirs = [m for m in other.received if m["type"] == "update"][-1]
        assert theirs["deadline"] == 10 and "moves" not in theirs, "everyone sees the time"
        for count in (1, 2):
            clock.advance(10)  # the idler lets the time run out
            step = await other.wait_event("timeout")
            note = step["events"][0]
            assert (note["seat"], note["count"], note["bot"]) == (seat, count, count == 2)
            assert step["events"][1]["seat"] == seat, "then the move made for the seat"
            assert event_of(await idler.wait_event("timeout"), "timeout") == note
            if count == 1:
                await others_play_until(clock, clients, idler)
        await idler.request("ping")
        await other.request("ping")
        held_from = len(idler.received)
        update = last_table_update(other)
        assert held(update, seat) == "idle"
        assert update["table"]["seats"][seat]["name"] == ("ann" if seat == 0 else "ben")
        # The stand-in plays the idle seat: the others keep getting their turns, and the
        # idler's seat moves without the idler being offered moves.
        def moved() -> int:
            return sum(1 for e in other.events() if e.get("seat") == seat
                       and e["event"] in ("play", "draw", "pass"))

        moved_before = moved()
        for _ in range(4):
            turn = await others_play_until(clock, clients, other)
            await other.ok("move", move=turn["moves"][0])
        await idler.request("ping")
        assert not [m for m in idler.received[held_from:] if "moves" in m]
        assert moved() > moved_before
        # Any request from the player takes the seat back: a ping does not.
        await idler.request("ping")
        await other.request("ping")
        assert held(last_table_update(other), seat) == "idle"
        assert (await idler.request("chat", text="back!"))["type"] == "ok"
        await other.wait(lambda m: m["type"] == "table_update" and held(m, seat) is None,
                         consume=False)
        turn = await others_play_until(clock, clients, idler)
        assert turn["view"]["turn"] == seat
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_dropped_seat_is_held_by_a_bot_after_grace_and_handed_back() -> None:
    clock = task.Clock()
    settings = TableSettings(turn_seconds=0, grace_seconds=30, bot_delay=0, deal_pause=0)
    server = await Server.start(clock=clock, settings=settings, limits=QUIET)
    try:
        (ann, ben), _ = await open_table(server, ["ann", "ben"], "cardiva", 2,
                                         options={"match_end": "deals:30"})
        seat = seat_of(ann)
        token = ann.welcome["token"]
        await ann.close()
        await ben.wait(lambda m: m["type"] == "table_update"
                       and not m["table"]["seats"][seat]["connected"], consume=False)
        clock.advance(30)
        await ben.wait(lambda m: m["type"] == "table_update"
                       and held(m, seat) == "disconnected", consume=False)
        for _ in range(3):  # the match goes on: the bot plays ann's seat
            turn = await others_play_until(clock, [ben], ben)
            await ben.ok("move", move=turn["moves"][0])
        again = await server.connect("ann", token=token)
        snap = await again.wait_type("table")
        assert snap["you"]["seat"] == seat and snap["view"]["hand"] is not None
        await ben.wait(lambda m: m["type"] == "table_update" and held(m, seat) is None
                       and m["table"]["seats"][seat]["connected"], consume=False)
        turn = await others_play_until(clock, [again, ben], again)
        assert turn["view"]["turn"] == seat
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_table_chat_marks_players_and_spectators_then_rematch() -> None:
    server = await Server.start()
    try:
        (ann, ben), table_id = await open_table(server, ["ann", "ben"], "classic", 2,
                                                options={"match_end": "deals:1"})
        watcher = await server.connect("watcher")
        await watcher.ok("join_table", table=table_id, spectate=True)
        assert (await ann.request("chat", text="iyi oyunlar"))["type"] == "ok"
        assert (await watcher.request("chat", text="go ben", scope="table"))["type"] == "ok"
        for client in (ann, ben, watcher):
            first = await client.wait(lambda m: m["type"] == "chat" and m["name"] == "ann",
                                      consume=False)
            assert (first["scope"], first["seat"], first["spectator"]) == (
                "table", seat_of(ann), False)
            second = await client.wait(lambda m: m["type"] == "chat"
                                       and m["name"] == "watcher", consume=False)
            assert (second["seat"], second["spectator"]) == (None, True)
        rng = random.Random(5)
        await gatherResults([Deferred.fromCoroutine(play_to_match_end(c, rng))
                             for c in (ann, ben)])
        err = await watcher.request("rematch", agree=True)
        assert err["code"] == "not_seated"
        await ann.ok("rematch", agree=True)
        await ben.request("ping")
        assert not [m for m in ben.received[ben.cursor:] if m["type"] == "update"]
        await ben.ok("rematch", agree=True)
        await watcher.wait(lambda m: m["type"] == "table_update"
                           and m["table"]["phase"] == "playing")
        ends = await gatherResults([Deferred.fromCoroutine(play_to_match_end(c, rng))
                                    for c in (ann, ben)])
        assert ends[0] == ends[1]
    finally:
        await server.stop()
