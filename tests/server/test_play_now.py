"""`play_now` over real sockets: the best waiting table or a new quick one, the quick
table's start once filled and ready, its bots after the host's wait (on `task.Clock`),
the wishes it keeps (rules, seats, rated) and two requests racing for one seat."""

from __future__ import annotations

import pytest_twisted
from twisted.internet import task
from wireclient import Server, WireClient, clocked, registered, with_accounts

__all__ = ["clocked"]  # the fixture, used by name


def started(client: WireClient) -> bool:
    return any(e["event"] == "deal_start" for e in client.events())


async def sync(*clients: WireClient) -> None:
    """Everything the server sent each client before now has arrived."""
    for client in clients:
        await client.ok("ping")


@pytest_twisted.ensureDeferred
async def test_play_now_opens_a_quick_table_the_next_one_fills_and_it_starts(
        clocked: tuple[Server, task.Clock]) -> None:
    server, _ = clocked
    ann, ben, cem = [await server.connect(n) for n in ("ann", "ben", "cem")]
    first = await ann.ok("play_now", rules="cardiva", seats=2, bots_after=120)
    info = first["table"]
    assert first["you"] == {"seat": 0, "spectator": False, "host": True}
    assert (info["rules"], len(info["seats"]), info["quick"]) == ("cardiva", 2, True)
    assert info["bots_in"] == 120 and not info["private"]
    other = await cem.ok("play_now", rules="classic", seats=2)  # another rule set
    assert other["table"]["id"] != info["id"]
    second = await ben.ok("play_now", rules="cardiva")  # any seat count
    assert second["table"]["id"] == info["id"] and second["you"]["seat"] == 1
    await ann.wait_event("deal_start")  # full and ready: no `start` from anyone
    await ben.wait_event("deal_start")
    await sync(cem)
    assert not started(cem)


@pytest_twisted.ensureDeferred
async def test_bots_take_the_open_seats_when_the_hosts_wait_runs_out(
        clocked: tuple[Server, task.Clock]) -> None:
    server, clock = clocked
    ann = await server.connect("ann")
    snap = await ann.ok("play_now", rules="classic", seats=3, bots_after=30, level="easy")
    assert snap["table"]["bots_in"] == 30
    clock.advance(29)
    await sync(ann)
    assert not started(ann) and all(s["kind"] == "open" for s in snap["table"]["seats"][1:])
    clock.advance(1)
    await ann.wait_event("deal_start")
    seats = [m for m in ann.received if m["type"] == "table_update"][-1]["table"]["seats"]
    assert [(s["kind"], s.get("level")) for s in seats] == [
        ("human", None), ("bot", "easy"), ("bot", "easy")]
    assert "bots_in" not in [m for m in ann.received if m["type"] == "table_update"][-1][
        "table"]


@pytest_twisted.ensureDeferred
async def test_a_wait_of_zero_never_seats_bots_and_the_time_left_counts_down(
        clocked: tuple[Server, task.Clock]) -> None:
    server, clock = clocked
    ann, ben, cem = [await server.connect(n) for n in ("ann", "ben", "cem")]
    never = await ann.ok("play_now", seats=3, bots_after=0)
    assert never["table"]["quick"] and "bots_in" not in never["table"]
    clock.advance(3600)
    await sync(ann)
    assert not started(ann)
    timed = await ben.ok("play_now", rules="cardiva", seats=3, bots_after=100)
    clock.advance(40)
    joined = await cem.ok("play_now", rules="cardiva", seats=3)
    assert joined["table"]["id"] == timed["table"]["id"]
    assert joined["table"]["bots_in"] == 60


@pytest_twisted.ensureDeferred
async def test_play_now_passes_over_private_started_and_other_tables(
        clocked: tuple[Server, task.Clock]) -> None:
    server, _ = clocked
    ann, ben, cem, dan = [await server.connect(n) for n in ("ann", "ben", "cem", "dan")]
    private = await ann.ok("create_table", rules="classic", seats=4, private=True)
    playing = await ben.ok("create_table", rules="classic", seats=2)
    await cem.ok("join_table", table=playing["table"]["id"])
    await cem.ok("ready", ready=True)
    await ben.ok("start")
    manual = await dan.ok("create_table", rules="classic", seats=4)
    eve = await server.connect("eve")
    chosen = await eve.ok("play_now", rules="classic")
    # The host's table that starts by hand is a waiting public table: it is the one.
    assert chosen["table"]["id"] == manual["table"]["id"]
    assert chosen["table"]["id"] not in (private["table"]["id"], playing["table"]["id"])
    seat = chosen["you"]["seat"]
    update = await dan.wait(lambda m: m["type"] == "table_update"
                            and m["table"]["seats"][seat]["kind"] == "human"
                            and m["table"]["seats"][seat]["ready"])
    assert update["table"]["seats"][seat]["name"] == "eve"  # ready: it asked to play
    fay = await server.connect("fay")
    other = await fay.ok("play_now", rules="classic", seats=2)  # no 2-seat table waits
    assert other["table"]["id"] not in (manual["table"]["id"], playing["table"]["id"])
    refused = await fay.request("play_now")
    assert refused["code"] == "already_at_table"


@pytest_twisted.ensureDeferred
async def test_a_quick_table_is_preferred_then_the_fullest(
        clocked: tuple[Server, task.Clock]) -> None:
    server, _ = clocked
    ann, ben, cem, dan = [await server.connect(n) for n in ("ann", "ben", "cem", "dan")]
    manual = await ann.ok("create_table", rules="classic", seats=2)  # one seat open
    emptier = await ben.ok("play_now", rules="classic", seats=4)  # three open
    fuller = await cem.ok("play_now", rules="classic", seats=3)  # two open
    assert len({manual["table"]["id"], emptier["table"]["id"], fuller["table"]["id"]}) == 3
    chosen = await dan.ok("play_now", rules="classic")
    assert chosen["table"]["id"] == fuller["table"]["id"]


@pytest_twisted.ensureDeferred
async def test_two_requests_racing_for_the_last_seat_one_sits_the_other_opens_a_table(
        clocked: tuple[Server, task.Clock]) -> None:
    server, _ = clocked
    ann, ben, cem = [await server.connect(n) for n in ("ann", "ben", "cem")]
    host = await ann.ok("play_now", rules="classic", seats=2, bots_after=0)
    # Both sent before either is answered: the server takes them one at a time.
    answers = [ben.request("play_now", rules="classic", seats=2),
               cem.request("play_now", rules="classic", seats=2)]
    first, second = [await a for a in answers]
    tables = {first["table"]["id"], second["table"]["id"]}
    assert host["table"]["id"] in tables and len(tables) == 2
    late = second if first["table"]["id"] == host["table"]["id"] else first
    assert late["you"]["host"] and late["table"]["quick"]
    await ann.wait_event("deal_start")


@pytest_twisted.ensureDeferred
async def test_rated_play_now_needs_an_account_and_meets_rated_tables_only() -> None:
    server = await with_accounts()
    try:
        guest = await server.connect("guest")
        refused = await guest.request("play_now", rated=True)
        assert refused["code"] == "account_required"
        casual = await guest.ok("play_now", rules="classic", seats=2)
        ada = await registered(server, "Ada")
        rated = await ada.ok("play_now", rules="classic", seats=2, rated=True)
        assert rated["table"]["id"] != casual["table"]["id"] and rated["table"]["rated"]
        bo = await registered(server, "Bo")
        joined = await bo.ok("play_now", rules="classic", rated=True)
        assert joined["table"]["id"] == rated["table"]["id"]
        await ada.wait_event("deal_start")
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_seat_count_the_rules_do_not_have_is_bad_options(
        clocked: tuple[Server, task.Clock]) -> None:
    server, _ = clocked
    ann = await server.connect("ann")
    refused = await ann.request("play_now", rules="cardiva", seats=6)
    assert (refused["code"], refused["field"]) == ("bad_options", "seats")
