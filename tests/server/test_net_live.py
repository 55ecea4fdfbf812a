"""Live-server behaviour over real sockets: reconnection with the resume token, the
replaced-connection notice, rate limits, connection caps, the lobby's deltas, private
tables, lobby chat."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest_twisted
from net_match import open_table, pending_turn, play_to_match_end
from twisted.internet import reactor, task
from twisted.internet.defer import Deferred, gatherResults
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from wireclient import UNTIMED_NO_DELAYS, Msg, Server, WireClient

from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.net.limits import ANSWERED_REFUSALS, ServerLimits

PUBLIC_KEYS = ("hand_counts", "pile", "top", "turn", "scores", "deal_no", "stock", "phase")


def last_view(client: WireClient) -> dict[str, object]:
    return [m["view"] for m in client.received  # type: ignore[no-any-return]
            if m["type"] in ("table", "update") and m.get("view")][-1]


async def sync(*clients: WireClient) -> None:
    """After a ping round trip, every message the server wrote earlier has arrived."""
    for c in clients:
        await c.request("ping")


@pytest_twisted.ensureDeferred
async def test_dropped_connection_resumes_mid_deal_with_nothing_lost() -> None:
    server = await Server.start()
    try:
        (ann, ben), _ = await open_table(server, ["ann", "ben"], "classic", 2,
                                         options={"match_end": "deals:2"})
        rng = random.Random(3)
        # Play until it is ben's turn, then ann's connection drops.
        while True:
            mover, turn = await pending_turn([ann, ben])
            if mover is ben:
                break
            await ann.ok("move", move=rng.choice(turn["moves"]))
        token = ann.welcome["token"]
        ann_seat = next(m for m in ann.received if m["type"] == "table")["you"]["seat"]
        await ann.close()
        update = await ben.wait(lambda m: m["type"] == "table_update" and not
                                m["table"]["seats"][ann_seat]["connected"])
        assert update["table"]["seats"][ann_seat]["name"] == "ann"
        # The table goes on: ben moves while ann is away.
        await ben.ok("move", move=turn["moves"][0])
        await sync(ben)

        again = await server.connect("ann (new)", token=token)
        assert again.welcome["resumed"] is True
        assert again.welcome["player"] == ann.welcome["player"]
        assert again.welcome["name"] == "ann"  # the session keeps its name
        # The snapshot stays unread: if it offers moves, the match plays on from it.
        snap = await again.wait(lambda m: m["type"] == "table", consume=False)
        assert again.types() == ["welcome", "table"]
        assert snap["you"]["seat"] == ann_seat
        await sync(ben)
        mine, theirs = snap["view"], last_view(ben)
        for key in PUBLIC_KEYS:
            assert mine[key] == theirs[key], key  # what the others saw
        assert len(mine["hand"]) == theirs["hand_counts"][ann_seat]  # type: ignore[index]
        assert snap["match"]["totals"] == theirs["scores"]
        # The pending decision, if it is ann's, comes with the snapshot.
        assert ("moves" in snap) == (mine["turn"] == ann_seat)
        await ben.wait(lambda m: m["type"] == "table_update"
                       and m["table"]["seats"][ann_seat]["connected"], consume=False)
        # ...and the match plays on to its end with the resumed connection.
        results = await gatherResults([Deferred.fromCoroutine(play_to_match_end(c, rng))
                                       for c in (again, ben)])
        assert results[0] == results[1]
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_second_connection_with_the_token_replaces_the_first() -> None:
    server = await Server.start()
    try:
        first = await server.connect("ann")
        await first.ok("lobby_subscribe")
        snap = await first.ok("create_table", rules="classic", seats=2)
        second = await server.connect("ann", token=first.welcome["token"])
        notice = await first.wait_type("replaced")
        assert "another connection" in notice["message"]
        await first.closed
        assert second.welcome["resumed"] is True
        again = await second.wait_type("table")
        assert again["table"]["id"] == snap["table"]["id"]
        assert (await second.request("ping"))["type"] == "pong"
        # A lobby subscription belongs to the connection: the new one asks for its own.
        carl = await server.connect("carl")
        await carl.ok("create_table", rules="classic", seats=2)
        await sync(second)
        assert "lobby_update" not in second.types()
        # The token went to its owner only: no other frame anywhere carries it.
        other = await server.connect("eve")
        await other.ok("join_table", table=snap["table"]["id"])
        await sync(second, other)
        token = first.welcome["token"]
        assert all(token not in repr(m) for m in other.received)
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_unknown_token_is_refused() -> None:
    server = await Server.start()
    try:
        client = await server.connect()
        client.send({"type": "hello", "id": 1, "protocol": PROTOCOL_VERSION, "name": "x",
                     "token": "nope"})
        err = await client.wait_for_id(1)
        assert err["code"] == "bad_token"
        await client.closed
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_session_expires_after_grace_when_it_holds_no_seat_in_play() -> None:
    clock = task.Clock()
    settings = replace(UNTIMED_NO_DELAYS, grace_seconds=30)
    server = await Server.start(clock=clock, settings=settings)
    try:
        ann = await server.connect("ann")
        ben = await server.connect("ben")
        snap = await ann.ok("create_table", rules="classic", seats=2)
        await ben.ok("join_table", table=snap["table"]["id"])
        await ann.close()
        await ben.wait(lambda m: m["type"] == "table_update"
                       and not m["table"]["seats"][0]["connected"])
        clock.advance(30)
        update = await ben.wait(lambda m: m["type"] == "table_update"
                                and "ann" not in [s.get("name") for s in m["table"]["seats"]]
                                and "ann" not in m["table"]["spectators"])
        assert update["table"]["seats"][0]["kind"] == "open"
        late = await server.connect()
        late.send({"type": "hello", "id": 1, "protocol": PROTOCOL_VERSION, "name": "ann",
                   "token": ann.welcome["token"]})
        assert (await late.wait_for_id(1))["code"] == "bad_token"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_flood_is_rate_limited_then_closed_without_hurting_another_table() -> None:
    clock = task.Clock()  # frozen: the flooder's bucket never refills
    server = await Server.start(clock=clock, limits=ServerLimits(rate=5, burst=10, flood_close=30))
    try:
        (victim,), _ = await open_table(server, ["victim"], "classic", 2, bots=1,
                                        options={"match_end": "deals:99"})
        flood = await server.connect("flood")  # hello took one token
        for i in range(100, 120):
            flood.send({"type": "ping", "id": i})
        replies = [await flood.wait_for_id(i) for i in range(100, 119)]
        assert [r["type"] for r in replies[:9]] == ["pong"] * 9
        limited = [r for r in replies if r["type"] == "error"]
        assert len(limited) == ANSWERED_REFUSALS == 10
        assert all(r["code"] == "rate_limited" and r["retry_after"] > 0 for r in limited)
        clock.advance(1)  # five more tokens
        assert (await flood.request("ping"))["type"] == "pong"
        # The 11th refusal of the window was answered too, with the short reply.
        (late,) = [m for m in flood.received if m.get("id") == 119]
        assert late["code"] == "rate_limited" and late["retry_after"] > 0
        # The victim's game (a bot answers at bot_delay 0 on the frozen clock) goes on.
        for _ in range(3):
            clock.advance(0)
            turn = await victim.next_decision()
            await victim.ok("move", move=turn["moves"][0])
        for i in range(200, 260):
            flood.send({"type": "ping", "id": i})
        err = await flood.wait(lambda m: m["type"] == "error" and "closing" in m["message"])
        assert err["code"] == "rate_limited"
        await flood.closed
        assert not victim.is_closed
    finally:
        await server.stop()


async def connect_from(server: Server, source: str) -> WireClient:
    endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", server.port.getHost().port,
                                  bindAddress=(source, 0))
    client = await connectProtocol(endpoint, WireClient())  # type: ignore[no-untyped-call]
    server.clients.append(client)
    return client  # type: ignore[no-any-return]


@pytest_twisted.ensureDeferred
async def test_connection_caps_per_address_and_in_total() -> None:
    server = await Server.start(limits=ServerLimits(max_per_address=2, max_connections=3,
                                              rate=1000, burst=1000))
    try:
        a1 = await connect_from(server, "127.0.0.1")
        a2 = await connect_from(server, "127.0.0.1")
        a3 = await connect_from(server, "127.0.0.1")
        err = await a3.wait_type("error")
        assert err["code"] == "too_many_connections"
        await a3.closed
        b1 = await connect_from(server, "127.0.0.2")
        b2 = await connect_from(server, "127.0.0.2")
        err = await b2.wait_type("error")
        assert err["code"] == "server_full"
        await b2.closed
        for c in (a1, a2, b1):
            assert not c.is_closed
        await a1.close()
        await server.dropped(a1)
        b3 = await connect_from(server, "127.0.0.2")  # a place is free again
        b3.send({"type": "hello", "id": 1, "protocol": PROTOCOL_VERSION, "name": "late"})
        assert (await b3.wait_for_id(1))["type"] == "welcome"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_lobby_snapshot_then_deltas() -> None:
    server = await Server.start()
    try:
        watcher = await server.connect("watcher")
        lobby = await watcher.ok("lobby_subscribe")
        assert lobby["type"] == "lobby" and lobby["tables"] == []
        host = await server.connect("host")
        snap = await host.ok("create_table", rules="cardiva", seats=3, name="Friday",
                             options={"ten": "reverse", "match_end": "points:51"})
        table_id = snap["table"]["id"]
        add = await watcher.wait_type("lobby_update", op="add")
        assert add["table"] == table_id
        row = add["summary"]
        assert (row["name"], row["rules"], row["seats"]) == ("Friday", "cardiva", 3)
        assert row["taken"] == 1, "the table is announced with its host already seated"
        assert row["options"]["ten"] == "reverse" and row["options"]["match_end"] == "points:51"
        guest = await server.connect("guest")
        await guest.ok("join_table", table=table_id)
        update = await watcher.wait(lambda m: m["type"] == "lobby_update"
                                    and m["op"] == "update" and m["summary"]["taken"] == 2)
        assert update["table"] == table_id
        await host.ok("add_bot", seat=2, level="easy")
        update = await watcher.wait_type("lobby_update", op="update")
        assert update["summary"]["bots"] == 1
        await host.ok("leave_table")
        await guest.ok("leave_table")
        removed = await watcher.wait_type("lobby_update", op="remove")
        assert removed["table"] == table_id
        await watcher.ok("lobby_unsubscribe")
        await host.ok("create_table", rules="classic", seats=2)
        await sync(watcher)
        assert not [m for m in watcher.received[watcher.cursor:]
                    if m["type"] == "lobby_update"]
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_private_table_is_listed_but_joined_only_by_code() -> None:
    server = await Server.start()
    try:
        host = await server.connect("host")
        watcher = await server.connect("watcher")
        await watcher.ok("lobby_subscribe")
        snap = await host.ok("create_table", rules="classic", seats=2, private=True)
        code = snap["table"]["code"]
        add = await watcher.wait_type("lobby_update", op="add")
        assert add["summary"]["private"] is True
        assert code not in repr(add)  # the lobby row never has the code
        err = await watcher.request("join_table", table=snap["table"]["id"])
        assert err["code"] == "private_table"
        err = await watcher.request("join_table", table=snap["table"]["id"] + 100)
        assert err["code"] == "no_such_table"
        err = await watcher.request("join_table", code="WRONG1")
        assert err["code"] == "no_such_table"
        joined = await watcher.ok("join_table", code=code.lower())
        assert joined["table"]["id"] == snap["table"]["id"]
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_table_creation_is_validated_and_capped() -> None:
    server = await Server.start(limits=ServerLimits(max_tables_per_player=1, rate=1000, burst=1000))
    try:
        ann = await server.connect("ann")
        bad: list[tuple[dict[str, object], str]] = [
            ({"rules": "cardiva", "seats": 5}, "bad_options"),  # K1: 2-4
            ({"rules": "classic", "seats": 7}, "bad_field"),  # C1: the product seats 2-6
            ({"rules": "poker", "seats": 2}, "bad_field"),
            ({"rules": "classic", "seats": 2, "options": {"decks": 3}}, "bad_field"),
            ({"rules": "classic", "seats": 2, "options": {"match_end": "never"}}, "bad_field"),
        ]
        for fields, code in bad:
            err = await ann.request("create_table", **fields)
            assert err["code"] == code, (fields, err)
        six = await ann.ok("create_table", rules="classic", seats=6)
        assert len(six["table"]["seats"]) == 6
        err = await ann.request("create_table", rules="classic", seats=2)
        assert err["code"] == "already_at_table"
        ben = await server.connect("ben")
        await ben.ok("join_table", table=six["table"]["id"])
        await ann.ok("leave_table")  # the table stays open: ben is there
        err = await ann.request("create_table", rules="classic", seats=2)
        assert err["code"] == "too_many_tables"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_lobby_chat_reaches_subscribers_and_needs_the_feature() -> None:
    server = await Server.start()
    try:
        ann = await server.connect("ann")
        ben = await server.connect("ben")
        mute = await server.connect("mute", features=[])
        for c in (ann, ben, mute):
            await c.ok("lobby_subscribe")
        said = await ann.request("chat", text="  anyone for a game?  ", scope="lobby")
        assert said["type"] == "ok"
        for c in (ann, ben):
            line: Msg = await c.wait_type("chat")
            assert (line["scope"], line["name"], line["text"]) == (
                "lobby", "ann", "anyone for a game?")
        await sync(mute)
        assert "chat" not in mute.types()  # it did not agree on the chat feature
        err = await mute.request("chat", text="hello")
        assert err["code"] == "feature_not_negotiated"
        err = await ann.request("chat", text="\u202eevil", scope="lobby")
        assert err["code"] == "bad_field"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_client_that_stops_reading_is_cut_off_in_time() -> None:
    clock = task.Clock()
    server = await Server.start(clock=clock, limits=ServerLimits(ping_seconds=1000,
                                                           idle_seconds=2000))
    try:
        slow = await server.connect("slow")
        other = await server.connect("other")
        proto = next(p for p in server.factory.protocols
                     if p.session is not None and p.session.name == "slow")
        proto.pauseProducing()  # what the transport does when its buffer is full
        clock.advance(30)
        proto.resumeProducing()  # it read again in time
        clock.advance(59)
        assert not slow.is_closed
        proto.pauseProducing()
        clock.advance(60)
        await slow.closed
        assert (await other.request("ping"))["type"] == "pong"
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_resumed_welcome_names_the_table_whose_snapshot_follows() -> None:
    server = await Server.start()
    try:
        (ann, _ben), table_id = await open_table(server, ["ann", "ben"], "classic", 2)
        idle = await server.connect("cem")
        for client in (ann, idle):
            await client.close()
            await server.dropped(client)
        back = await server.connect("ann", token=ann.welcome["token"])
        assert back.welcome["resumed"] is True and back.welcome["table"] == table_id
        snap = await back.wait(lambda m: m["type"] == "table")
        assert snap["table"]["id"] == table_id
        alone = await server.connect("cem", token=idle.welcome["token"])
        assert alone.welcome["resumed"] is True and "table" not in alone.welcome
        assert "table" not in ann.welcome  # a new session is at no table
    finally:
        await server.stop()
