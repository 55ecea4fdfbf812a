"""Bad input over real sockets: a stable error code (or a close, for framing
violations), never a traceback, and never an effect on another connection's game."""

from __future__ import annotations

import struct
from collections.abc import Awaitable, Callable
from typing import Any

import msgpack
import pytest
import pytest_twisted
from net_match import open_table, pending_turn
from twisted.logger import globalLogPublisher
from wireclient import Msg, Server, WireClient

from pisyedili.protocol.version import PROTOCOL_VERSION


def framed(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


def packed(value: Any) -> bytes:
    return framed(msgpack.packb(value, use_bin_type=True))


async def victim_moves(victim: WireClient) -> None:
    """The victim's game goes on: it is offered moves and its move is accepted."""
    turn = await victim.next_decision()
    reply = await victim.request("move", move=turn["moves"][0])
    assert reply["type"] == "ok", reply


async def with_victim(body: Callable[[Server, WireClient], Awaitable[None]]) -> None:
    server = await Server.start()
    try:
        (victim,), _ = await open_table(server, ["victim"], "classic", 2, bots=1,
                                        options={"match_end": "deals:99"})
        await victim_moves(victim)
        await body(server, victim)
        await victim_moves(victim)
        await victim_moves(victim)
    finally:
        await server.stop()


# Frames that keep the stream in step: the server answers with an error and stays.
IN_STREAM: list[tuple[str, bytes, str]] = [
    ("garbage body", framed(b"hello, server"), "malformed_frame"),
    ("truncated msgpack", framed(b"\x85\xa4type"), "malformed_frame"),
    ("empty frame", framed(b""), "malformed_frame"),
    ("array, not a map", packed([1, 2, 3]), "not_a_map"),
    ("string, not a map", packed("ping"), "not_a_map"),
    ("no type", packed({"id": 906}), "missing_type"),
    ("type not a string", packed({"type": 7}), "missing_type"),
    ("nesting bomb", packed({"type": "ping", "x": [[[[[[[[[[[[1]]]]]]]]]]]]}), "too_deep"),
    ("raw array bomb", framed(b"\x91" * 5000 + b"\xc0"), "too_deep"),
    ("integer map key", framed(b"\x81\x01\x02"), "bad_key"),
    ("invalid utf-8", framed(b"\x81\xa4type\xa2\xff\xfe"), "invalid_utf8"),
    ("extension type", framed(b"\x81\xa4type\xd4\x05\x00"), "ext_not_allowed"),
    ("huge string", packed({"type": "chat", "text": "x" * 5000}), "value_too_large"),
    ("unknown type", packed({"type": "teleport", "id": 901}), "unknown_type"),
    ("wrong field type", packed({"type": "sit", "seat": "zero", "id": 902}), "bad_field"),
    ("seat out of range", packed({"type": "sit", "seat": 99, "id": 903}), "bad_field"),
    ("missing field", packed({"type": "move", "id": 904}), "missing_field"),
    ("bad move shape", packed({"type": "move", "move": {"kind": "fly"}}), "bad_field"),
    ("chat too long", packed({"type": "chat", "text": "y" * 301}), "bad_field"),
    ("not at a table", packed({"type": "start", "id": 905}), "not_at_table"),
    ("second hello", packed({"type": "hello", "protocol": PROTOCOL_VERSION, "name": "x"}),
     "already_welcomed"),
]


@pytest.mark.parametrize(("what", "data", "code"), IN_STREAM, ids=[c[0] for c in IN_STREAM])
@pytest_twisted.ensureDeferred
async def test_bad_frame_gets_error_and_connection_stays(what: str, data: bytes,
                                                         code: str) -> None:
    async def attack(server: Server, victim: WireClient) -> None:
        attacker = await server.connect("mallory")
        attacker.send_raw(data)
        err = await attacker.wait_type("error")
        assert err["code"] == code, err
        assert "Traceback" not in err["message"]
        pong = await attacker.request("ping")  # still connected, still in step
        assert pong["type"] == "pong"

    await with_victim(attack)


# Before `hello`, anything that is not a valid hello is answered, then closed.
BEFORE_HELLO: list[tuple[str, bytes, str]] = [
    ("garbage body", framed(b"hello, server"), "malformed_frame"),
    ("array, not a map", packed([1, 2, 3]), "not_a_map"),
    ("no type", packed({"id": 1}), "missing_type"),
    ("invalid utf-8", framed(b"\x81\xa4type\xa2\xff\xfe"), "invalid_utf8"),
    ("huge name", packed({"type": "hello", "protocol": PROTOCOL_VERSION, "name": "n" * 5000}),
     "value_too_large"),
    ("another request", packed({"type": "ping", "id": 1}), "hello_required"),
]


@pytest.mark.parametrize(("what", "data", "code"), BEFORE_HELLO,
                         ids=[c[0] for c in BEFORE_HELLO])
@pytest_twisted.ensureDeferred
async def test_before_hello_anything_but_a_valid_hello_is_answered_then_closed(
        what: str, data: bytes, code: str) -> None:
    async def attack(server: Server, victim: WireClient) -> None:
        attacker = await server.connect()
        attacker.send_raw(data)
        err = await attacker.wait_type("error")
        assert err["code"] == code, err
        await attacker.closed
        assert attacker.received == [err]  # closed for it, not by the handshake timer
        assert not victim.is_closed

    await with_victim(attack)


# Which refused frames still name their request: a map whose `id` can be read does.
IDS: list[tuple[str, bytes, str, int | None]] = [
    ("huge string", packed({"type": "chat", "id": 907, "text": "x" * 5000}),
     "value_too_large", 907),
    ("invalid utf-8", framed(b"\x82\xa2id\xcd\x03\x8c\xa4type\xa2\xff\xfe"),
     "invalid_utf8", 908),
    ("extension type", framed(b"\x82\xa2id\xcd\x03\x8d\xa4type\xd4\x05\x00"),
     "ext_not_allowed", 909),
    ("no type", packed({"id": 910}), "missing_type", 910),
    ("too deep", packed({"type": "ping", "id": 911, "x": [[[[[[[[1]]]]]]]]}), "too_deep", 911),
    ("integer map key", framed(b"\x82\xa2id\xcd\x03\x90\x01\x02"), "bad_key", 912),
    ("an id not valid", packed({"type": 7, "id": -1}), "missing_type", None),
    ("array, not a map", packed([{"id": 913}]), "not_a_map", None),
    ("garbage body", framed(b"\x82\xa2id\xcd\x03\x92\xc1"), "malformed_frame", None),
]


@pytest.mark.parametrize(("what", "data", "code", "rid"), IDS, ids=[c[0] for c in IDS])
@pytest_twisted.ensureDeferred
async def test_a_refused_frame_carries_its_id_where_it_can_be_read(
        what: str, data: bytes, code: str, rid: int | None) -> None:
    async def attack(server: Server, victim: WireClient) -> None:
        attacker = await server.connect("mallory")
        attacker.send_raw(data)
        err = await attacker.wait_type("error")
        assert err["code"] == code, err
        assert err.get("id") == rid
        assert (await attacker.request("ping"))["type"] == "pong"

    await with_victim(attack)


# Framing violations: the stream cannot be trusted any more, so the server closes.
CLOSING: list[tuple[str, bytes]] = [
    ("oversized frame", framed(msgpack.packb({"type": "ping", "x": "z" * 70_000}))),
    ("absurd length prefix", b"\x7f\xff\xff\xff" + b"\x00" * 64),
    ("garbage as a prefix", b"GET / HTTP/1.1\r\nHost: example\r\n\r\n"),
]


@pytest.mark.parametrize(("what", "data"), CLOSING, ids=[c[0] for c in CLOSING])
@pytest_twisted.ensureDeferred
async def test_framing_violation_closes_only_that_connection(what: str, data: bytes) -> None:
    async def attack(server: Server, victim: WireClient) -> None:
        attacker = await server.connect("mallory")
        attacker.send_raw(data)
        err = await attacker.wait_type("error")
        assert err["code"] == "frame_too_large"
        await attacker.closed
        assert not victim.is_closed

    await with_victim(attack)


def last_view(client: WireClient) -> dict[str, Any]:
    views = [m["view"] for m in client.received
             if m["type"] in ("table", "update") and m.get("view")]
    return views[-1]  # type: ignore[no-any-return]


@pytest_twisted.ensureDeferred
async def test_out_of_turn_and_illegal_moves_are_refused_with_the_rule() -> None:
    async def attack(server: Server, victim: WireClient) -> None:
        clients, _ = await open_table(server, ["ann", "ben"], "classic", 2,
                                      options={"match_end": "deals:9"})
        mover, turn = await pending_turn(clients)
        waiter = clients[1] if mover is clients[0] else clients[0]
        err = await waiter.request("move", move=turn["moves"][0])
        assert err["code"] == "not_your_turn" and err["rule"] == "C3"

        err = await mover.request("move", move={"kind": "play", "card": "Zz"})
        assert err["code"] == "bad_field" and err["field"] == "move.card"

        hand = last_view(mover)["hand"]
        foreign = next(c for c in ["Ac", "Ad", "Ah", "As", "Kc", "Kd", "Kh"] if c not in hand)
        err = await mover.request("move", move={"kind": "play", "card": foreign})
        assert err["code"] == "card_not_in_hand", err

        refused_with_rule = 0
        for _ in range(40):  # until some seat holds a card it may not play now
            legal = {m.get("card") for m in turn["moves"]}
            illegal = [c for c in last_view(mover)["hand"] if c not in legal]
            if illegal:
                err = await mover.request("move", move={"kind": "play", "card": illegal[0]})
                assert err["code"] in ("illegal_card", "illegal_move"), err
                assert err["rule"][0] in "CK", err  # names the rule, e.g. C6
                refused_with_rule += 1
            # Nothing changed: the prompt's own move is still accepted.
            reply = await mover.request("move", move=turn["moves"][0])
            assert reply["type"] == "ok", reply
            if refused_with_rule >= 3:
                break
            mover, turn = await pending_turn(clients)
        assert refused_with_rule

    await with_victim(attack)


@pytest_twisted.ensureDeferred
async def test_unexpected_exception_is_logged_and_answered_internal_error() -> None:
    logged: list[dict[str, Any]] = []

    def observer(event: dict[str, Any]) -> None:
        if event.get("log_failure") is not None:
            logged.append(event)

    async def attack(server: Server, victim: WireClient) -> None:
        def broken(session: Any) -> Msg:
            raise RuntimeError("boom")

        server.factory.lobby.subscribe = broken  # type: ignore[assignment, method-assign]
        attacker = await server.connect("mallory")
        err = await attacker.request("lobby_subscribe")
        assert err["code"] == "internal_error"
        assert "boom" not in err["message"]
        assert (await attacker.request("ping"))["type"] == "pong"

    globalLogPublisher.addObserver(observer)  # type: ignore[arg-type]
    try:
        await with_victim(attack)
    finally:
        globalLogPublisher.removeObserver(observer)  # type: ignore[arg-type]
    assert any("boom" in str(e["log_failure"].value) for e in logged)


@pytest_twisted.ensureDeferred
async def test_a_bug_below_dispatch_costs_one_request_not_the_connection(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import pisyedili.server.net.connection as net

    real = net.validate  # type: ignore[attr-defined]

    def flaky(msg: Msg, direction: Any) -> Msg:
        if msg.get("type") == "lobby_subscribe":
            raise KeyError("surprise")
        return real(msg, direction)

    async def attack(server: Server, victim: WireClient) -> None:
        monkeypatch.setattr(net, "validate", flaky)
        attacker = await server.connect("mallory")
        attacker.send({"type": "lobby_subscribe"})
        err = await attacker.wait_type("error")
        assert err["code"] == "internal_error"
        assert (await attacker.request("ping"))["type"] == "pong"

    await with_victim(attack)
