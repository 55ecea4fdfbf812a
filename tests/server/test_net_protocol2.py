"""Protocol 2's promises, over real sockets: one reply per request, sent before what it
causes; one `update` per step of a deal; the pending decision told once on resume; the
refusals' fields; which seats carry `connected`; which requests show presence."""

from __future__ import annotations

import random
from typing import Any

import pytest
import pytest_twisted
from net_match import open_table, pending_turn
from table_kit import drain_then_seven
from twisted.internet import task
from wireclient import Msg, Server, WireClient

from pisyedili.protocol.schema import MESSAGES, Direction
from pisyedili.server.net.limits import ServerLimits
from pisyedili.server.table.core import TableError, TableSettings

QUIET = ServerLimits(rate=10_000, burst=10_000, ping_seconds=10_000, idle_seconds=20_000)
"""The clock in some of these tests jumps far ahead: no heartbeat may close a connection."""


async def sync(*clients: WireClient) -> None:
    """After a ping round trip, every message the server wrote earlier has arrived."""
    for c in clients:
        await c.request("ping")


def updates_since(client: WireClient, start: int) -> list[Msg]:
    return [m for m in client.received[start:] if m["type"] == "update"]


def last_table_update(client: WireClient) -> Msg:
    return [m for m in client.received if m["type"] == "table_update"][-1]


def is_ace(move: dict[str, Any]) -> bool:
    return move["kind"] == "play" and move["card"][0] in "Aa"


def shed(moves: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """A random card if one may be played (deals stay short), else draw or pass."""
    plays = [m for m in moves if m["kind"] in ("play", "pick")]
    return rng.choice(plays or moves)


# -- replies come first ----------------------------------------------------------------

@pytest_twisted.ensureDeferred
async def test_a_moves_ok_comes_before_its_update_even_when_the_mover_decides_again() -> None:
    server = await Server.start()
    try:
        clients, _ = await open_table(server, ["ann", "ben"], "classic", 2,
                                      options={"match_end": "deals:5"})
        rng = random.Random(1)
        again: dict[str, int] = {}  # what the mover did when it had to decide again at once
        for _ in range(2000):
            mover, offered = await pending_turn(clients)
            other = clients[1] if mover is clients[0] else clients[0]
            aces = [m for m in offered["moves"] if is_ace(m)]
            move = aces[0] if aces else shed(offered["moves"], rng)
            start, other_start = len(mover.received), len(other.received)
            mover.send({"type": "move", "id": 900, "move": move})
            ok = await mover.wait_for_id(900, start)
            assert ok == {"type": "ok", "id": 900}
            await sync(mover, other)
            # Nothing else happens while the mover decides: the ok is the first thing
            # it hears, the step's update the next; the other player hears the update.
            first, step = mover.received[start:start + 2]
            assert first is ok and step["type"] == "update", mover.types()[start:]
            assert other.received[other_start]["type"] == "update"
            assert other.received[other_start]["events"] == \
                [{k: v for k, v in e.items() if k != "cards"} for e in step["events"]]
            later = updates_since(mover, start)[1:]
            assert all(m["events"][0]["event"] == "deal_start" for m in later), \
                "one update per step (the next deal's start is a step of its own)"
            if "moves" in step:
                assert step["view"]["turn"] == offered["view"]["turn"]
                kind = "ace" if is_ace(move) else move["kind"]
                again[kind] = again.get(kind, 0) + 1
            if again.get("ace") and again.get("draw"):
                break
        assert again.get("ace") and again.get("draw"), again
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_resync_answers_with_a_snapshot_carrying_the_request_id() -> None:
    server = await Server.start()
    try:
        lone = await server.connect("lone")
        lone.send({"type": "resync", "id": 41})
        err = await lone.wait_for_id(41)
        assert (err["type"], err["code"]) == ("error", "not_at_table")
        clients, table_id = await open_table(server, ["ann", "ben"], "classic", 2)
        mover, offered = await pending_turn(clients)
        for c in clients:
            start = len(c.received)
            c.send({"type": "resync", "id": 42})
            snap = await c.wait_for_id(42, start)
            assert (snap["type"], snap["id"], snap["table"]["id"]) == ("table", 42, table_id)
            latest = updates_since(c, 0)[-1]
            assert snap["view"] == latest["view"], "resync changes nothing"
            assert ("moves" in snap) == (c is mover)
            if c is mover:
                assert snap["moves"] == offered["moves"]
            await sync(*clients)
            assert c.types()[start:] == ["table", "pong"]
    finally:
        await server.stop()


# -- one update per step ----------------------------------------------------------------

@pytest_twisted.ensureDeferred
async def test_a_cardiva_ace_is_one_update_play_then_the_draws_with_the_view_after() -> None:
    server = await Server.start()
    try:
        clients, _ = await open_table(server, ["ann", "ben", "cem"], "cardiva", 3,
                                      options={"match_end": "deals:5"})
        rng = random.Random(2)
        for _ in range(3000):
            mover, offered = await pending_turn(clients)
            before = offered["view"]
            aces = [m for m in offered["moves"] if is_ace(m)]
            if not aces or before["stock"] < 2 or before["first_round"]:
                await mover.ok("move", move=shed(offered["moves"], rng))
                continue
            starts = [len(c.received) for c in clients]
            await mover.ok("move", move=aces[0])
            await sync(*clients)
            break
        else:
            raise AssertionError("nobody could play an ace")
        seat, ace = before["turn"], aces[0]["card"]
        others = [s for s in range(3) if s != seat]
        steps = [updates_since(c, n) for c, n in zip(clients, starts, strict=True)]
        assert all(len(s) == 1 for s in steps), "the ace and its draws are one step"
        for client, (step,) in zip(clients, steps, strict=True):
            view = step["view"]
            play, *draws = step["events"]
            assert play == {"event": "play", "seat": seat, "card": ace}
            assert [(d["event"], d["seat"], d["count"], d["reason"]) for d in draws] == \
                [("draw", s, 1, "ace") for s in sorted(others, key=lambda s: (s - seat) % 3)]
            for d in draws:  # a drawn card shows to its drawer only, in its hand after
                assert ("cards" in d) == (d["seat"] == view["seat"])
                assert set(d.get("cards", [])) <= set(view["hand"])
            # The view is the state after all of the step's events.
            counts = list(before["hand_counts"])
            counts[seat] -= 1
            for s in others:
                counts[s] += 1
            assert view["hand_counts"] == counts
            assert view["stock"] == before["stock"] - len(others)
            assert (view["top"], view["pile"]) == (ace, [*before["pile"], ace])
            assert (view["turn"], view["must_follow"]) == (seat, "ace")
            # K10: the mover must play on, and is told so in the same update.
            assert ("moves" in step) == (client is mover)
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_penalty_drawn_across_a_reshuffle_is_one_update_with_the_view_after() -> None:
    server = await Server.start()
    try:
        clients, _ = await open_table(server, ["ann", "ben"], "classic", 2, options={
            "match_end": "deals:5", "empty_stock": "reshuffle"})
        for _ in range(3000):
            mover, offered = await pending_turn(clients)
            move = drain_then_seven(offered)
            starts = [len(c.received) for c in clients]
            await mover.ok("move", move=move)
            await sync(*clients)
            steps = [updates_since(c, n) for c, n in zip(clients, starts, strict=True)]
            kinds = [e["event"] for e in steps[0][0]["events"]]
            if "reshuffle" in kinds and kinds.count("draw") == 2:
                break
        else:
            raise AssertionError("no penalty was drawn across a reshuffle")
        before, seat, penalty = offered["view"], offered["view"]["turn"], \
            offered["view"]["penalty"]
        assert all(len(s) == 1 for s in steps), "the whole penalty is one step"
        for (step,) in steps:
            view = step["view"]
            first, reshuffle, second = step["events"]
            assert [(e["event"], e.get("seat"), e.get("reason")) for e in step["events"]] == \
                [("draw", seat, "penalty"), ("reshuffle", None, None),
                 ("draw", seat, "penalty")]
            assert first["count"] == before["stock"]
            assert first["count"] + second["count"] == penalty
            mine = view["seat"] == seat
            assert ("cards" in first) == ("cards" in second) == mine
            if mine:
                assert set(first["cards"] + second["cards"]) <= set(view["hand"])
            # The view is the state after all three events.
            assert view["hand_counts"][seat] == before["hand_counts"][seat] + penalty
            assert view["stock"] == reshuffle["count"] - second["count"]
            assert view["pile"] == [before["top"]] and view["top"] == before["top"]
            assert view["penalty"] == 0 and view["turn"] != seat  # C11: the turn ends
    finally:
        await server.stop()


# -- resuming -----------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["dropped", "held_by_a_bot", "replaced"])
@pytest_twisted.ensureDeferred
async def test_on_resume_the_pending_decision_comes_once_in_the_snapshot(how: str) -> None:
    clock = task.Clock()
    settings = TableSettings(turn_seconds=0, grace_seconds=30, bot_delay=5, deal_pause=0)
    server = await Server.start(clock=clock, settings=settings, limits=QUIET)
    try:
        clients, _ = await open_table(server, ["ann", "ben"], "classic", 2,
                                      options={"match_end": "deals:9"})
        gone, offered = await pending_turn(clients)
        stay = clients[1] if gone is clients[0] else clients[0]
        seat = offered["view"]["turn"]
        if how != "replaced":
            await gone.close()
            await server.dropped(gone)
        if how == "held_by_a_bot":
            clock.advance(30)  # grace over: a stand-in holds the seat (it moves in 5 s)
            await sync(stay)
            assert last_table_update(stay)["table"]["seats"][seat]["held_by_bot"] == \
                "disconnected"
        mark = len(stay.received)
        again = await server.connect("someone", token=gone.welcome["token"])
        if how == "replaced":
            assert (await gone.wait_type("replaced"))["type"] == "replaced"
            await gone.closed
        snap = await again.wait_type("table")
        await sync(again, stay)
        assert again.types() == ["welcome", "table", "pong"], "the decision comes once"
        assert (snap["you"]["seat"], snap["view"]) == (seat, offered["view"])
        assert snap["moves"] == offered["moves"]
        # The others see who decides now: the seat handed back by its stand-in.
        handed = updates_since(stay, mark)
        if how == "held_by_a_bot":
            assert [(m["events"], "moves" in m) for m in handed] == [([], False)]
            assert handed[0]["view"]["turn"] == seat
        else:
            assert handed == []
        clock.advance(5)  # the stand-in's move, had it been kept, would come now
        await sync(again, stay)
        assert again.types() == ["welcome", "table", "pong", "pong"]
        start = len(again.received)
        await again.ok("move", move=snap["moves"][0])
        step = await again.wait_type("update")
        assert again.received.index(step) > start
        assert step["events"][0]["seat"] == seat
    finally:
        await server.stop()


# -- refusals -----------------------------------------------------------------------------

@pytest_twisted.ensureDeferred
async def test_join_table_names_one_table_and_a_private_one_only_by_its_code() -> None:
    server = await Server.start()
    try:
        host = await server.connect("host")
        guest = await server.connect("guest")
        snap = await host.ok("create_table", rules="classic", seats=2, private=True)
        info = snap["table"]
        err = await guest.request("join_table", table=info["id"])
        assert err["code"] == "private_table"
        err = await guest.request("join_table")
        assert (err["code"], err["field"]) == ("missing_field", "table")
        err = await guest.request("join_table", table=info["id"], code=info["code"])
        assert (err["code"], err["field"]) == ("bad_field", "code")
        joined = await guest.ok("join_table", code=info["code"])
        assert (joined["type"], joined["table"]["id"]) == ("table", info["id"])
    finally:
        await server.stop()


WIRE_REFUSALS: list[tuple[dict[str, Any], str, str]] = [
    # The schema refuses what it can describe...
    ({"rules": "poker", "seats": 2}, "bad_field", "rules"),
    ({"rules": "classic", "seats": 7}, "bad_field", "seats"),
    ({"rules": "classic", "seats": 2, "options": {"ten": "sideways"}}, "bad_field",
     "options.ten"),
    ({"rules": "classic", "seats": 2, "options": {"turn_seconds": 3601}}, "bad_field",
     "options.turn_seconds"),
    # ...the lobby what depends on the rule set, or what the schema lets through.
    ({"rules": "cardiva", "seats": 5}, "bad_options", "seats"),
    ({"rules": "classic", "seats": 2, "options": {"jokers": 2}}, "bad_options",
     "options.jokers"),
]


@pytest.mark.parametrize(("fields", "code", "field"), WIRE_REFUSALS,
                         ids=[f for _, _, f in WIRE_REFUSALS])
@pytest_twisted.ensureDeferred
async def test_a_refused_table_names_the_field_by_its_dotted_path(
        fields: dict[str, Any], code: str, field: str) -> None:
    server = await Server.start()
    try:
        ann = await server.connect("ann")
        err = await ann.request("create_table", **fields)
        assert (err["type"], err["code"], err["field"]) == ("error", code, field)
        assert not server.factory.lobby.tables()
    finally:
        await server.stop()


LOBBY_REFUSALS: list[tuple[Any, Any, dict[str, Any], str]] = [
    ("poker", 2, {}, "rules"),
    ("classic", 7, {}, "seats"),
    ("cardiva", 5, {}, "seats"),
    ("classic", True, {}, "seats"),
    ("classic", 2, {"ten": "sideways"}, "options.ten"),
    ("classic", 2, {"turn_seconds": -1}, "options.turn_seconds"),
    ("classic", 2, {"turn_seconds": 3601}, "options.turn_seconds"),
    ("classic", 2, {"turn_seconds": True}, "options.turn_seconds"),
    ("classic", 2, {"decks": 3}, "options.decks"),
    ("classic", 2, {"match_end": "never"}, "options.match_end"),
    ("classic", 2, {"jokers": 2}, "options.jokers"),
]


@pytest.mark.parametrize(("rules", "seats", "options", "field"), LOBBY_REFUSALS,
                         ids=[f"{f}-{o}" for _, _, o, f in LOBBY_REFUSALS])
@pytest_twisted.ensureDeferred
async def test_bad_options_name_the_field_by_its_dotted_path(
        rules: Any, seats: Any, options: dict[str, Any], field: str) -> None:
    """The lobby checks what it is given itself, whatever let it through."""
    server = await Server.start()
    try:
        ann = await server.connect("ann")
        session = server.factory.sessions.by_id(str(ann.welcome["player"]))
        assert session is not None
        with pytest.raises(TableError) as info:
            server.factory.lobby.create(session, rules, seats, options)
        assert (info.value.code, info.value.extra["field"]) == ("bad_options", field)
        assert not server.factory.lobby.tables()
    finally:
        await server.stop()


# -- seats ------------------------------------------------------------------------------

@pytest_twisted.ensureDeferred
async def test_only_human_seats_say_whether_their_player_is_connected() -> None:
    server = await Server.start()
    try:
        host = await server.connect("host")
        snap = await host.ok("create_table", rules="classic", seats=3)
        await host.ok("add_bot", seat=2, level="easy")
        guest = await server.connect("guest")
        joined = await guest.ok("join_table", table=snap["table"]["id"])
        seats = joined["table"]["seats"]
        assert [(s["kind"], s.get("connected")) for s in seats] == \
            [("human", True), ("human", True), ("bot", None)]
        assert "connected" not in snap["table"]["seats"][1], "an open seat"
        await guest.close()
        update = await host.wait(lambda m: m["type"] == "table_update"
                                 and m["table"]["seats"][1].get("connected") is False)
        assert "connected" not in update["table"]["seats"][2]
        await host.ok("leave_table")
    finally:
        await server.stop()


# -- presence -----------------------------------------------------------------------------

PRESENCE_CASES: list[tuple[str, dict[str, Any]]] = [
    ("ping", {}),
    ("pong", {}),
    ("lobby_subscribe", {}),
    ("lobby_unsubscribe", {}),
    ("resync", {}),
    ("create_table", {"rules": "classic", "seats": 2}),  # already_at_table
    ("join_table", {}),  # its own table again: a fresh snapshot
    ("sit", {"seat": 0}),  # game_in_progress
    ("stand", {}),  # game_in_progress
    ("add_bot", {"seat": 0}),  # not_host
    ("remove_bot", {"seat": 0}),  # not_host
    ("ready", {"ready": True}),  # game_in_progress
    ("start", {}),  # not_host
    ("move", {"move": {"kind": "pass"}}),  # not its turn, or not legal now
    ("chat", {"text": "back!"}),
    ("chat", {"text": "anyone?", "scope": "lobby"}),
    ("rematch", {"agree": True}),  # match_not_over
    ("play_now", {}),  # already_at_table
    ("invite", {"name": "host"}),  # game_in_progress
    ("answer_invite", {"invite": 1, "accept": True}),  # no_such_invite
    ("history", {"of": "recent"}),  # feature_not_negotiated: this server keeps no matches
    ("replay", {"match": 1}),  # the same
    # Accounts, ratings and moderation (this server has no store; nobody is an operator).
    ("register", {"password": "correct horse"}),
    ("login", {"name": "host", "password": "correct horse"}),
    ("logout", {}),
    ("passwd", {"old": "correct horse", "new": "battery staple"}),
    ("leaderboard", {}),
    ("profile", {"name": "host"}),
    ("kick", {"name": "host"}),
    ("mute", {"name": "host"}),
    ("unmute", {"name": "host"}),
    ("ban", {"name": "host"}),
    ("unban", {"name": "host"}),
    ("close_table", {"table": 1}),
    ("announce", {"text": "hello"}),
]
"""Every request but `hello` (the handshake) and `leave_table` (no seat to take back)."""


def test_the_presence_cases_cover_every_request() -> None:
    requests = {t for d, t in MESSAGES if d is Direction.TO_SERVER}
    assert {t for t, _ in PRESENCE_CASES} == requests - {"hello", "leave_table"}
    absent = {t for t in requests if not MESSAGES[(Direction.TO_SERVER, t)].presence}
    assert absent == {"ping", "pong", "resync", "lobby_subscribe", "lobby_unsubscribe",
                      "history", "replay",
                      "register", "login", "logout", "passwd", "leaderboard", "profile",
                      "kick", "mute", "unmute", "ban", "unban", "close_table", "announce"}


@pytest.mark.parametrize(("kind", "fields"), PRESENCE_CASES,
                         ids=[f"{k}-{f.get('scope', '')}" for k, f in PRESENCE_CASES])
@pytest_twisted.ensureDeferred
async def test_requests_that_show_presence_take_the_seat_back_from_a_stand_in(
        kind: str, fields: dict[str, Any]) -> None:
    clock = task.Clock()
    settings = TableSettings(turn_seconds=10, grace_seconds=60, bot_delay=5, deal_pause=0,
                             max_timeouts_before_bot=1)
    server = await Server.start(clock=clock, settings=settings, limits=QUIET)
    try:
        (host, idler), table_id = await open_table(server, ["host", "idler"], "classic", 2,
                                                   options={"match_end": "deals:9"})
        for _ in range(200):  # the host plays until the idler (not the host) must decide
            mover, offered = await pending_turn([host, idler])
            if mover is idler:
                break
            await host.ok("move", move=offered["moves"][0])
        seat = offered["view"]["turn"]
        clock.advance(10)  # one timeout: a stand-in holds the idle seat (moving after 5 s)
        await sync(host, idler)
        assert last_table_update(host)["table"]["seats"][seat]["held_by_bot"] == "idle"
        if kind == "join_table":
            fields = {"table": table_id}
        start = len(idler.received)
        idler.send({"type": kind, "id": 77, **fields})
        await sync(idler, host)
        after = idler.received[start:]
        if kind != "pong":  # a pong answers the server; nothing answers it
            assert after[0]["id"] == 77, "the reply comes before anything the request causes"
        assert len([m for m in after if m.get("id") == 77]) == (kind != "pong")
        presence = MESSAGES[(Direction.TO_SERVER, kind)].presence
        seats = last_table_update(host)["table"]["seats"]
        assert ("held_by_bot" in seats[seat]) == (not presence)
        # A decision taken back is offered once, after the reply.
        if kind != "move":  # (a move may be played, or refused and the decision offered)
            view = updates_since(host, 0)[-1]["view"]
            owes = presence and view["turn"] == seat
            assert len([m for m in after if "moves" in m]) == owes
    finally:
        await server.stop()
