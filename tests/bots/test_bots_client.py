"""The bot client's reactions, frame by frame, on an in-memory transport."""

from __future__ import annotations

import struct
from typing import Any

from bots_kit import fresh
from twisted.internet.testing import StringTransport

from pisyedili.client.bot import BotClient, BotConfig
from pisyedili.protocol.codec import decode, frame
from pisyedili.protocol.limits import CLIENT_LIMITS
from pisyedili.server.rules import legal_moves, move_to_wire, view


def sent(transport: StringTransport) -> list[dict[str, Any]]:
    """Every frame the client wrote, decoded; the transport is emptied."""
    data, out = transport.value(), []
    transport.clear()
    while data:
        (n,) = struct.unpack(">I", data[:4])
        out.append(decode(data[4 : 4 + n], CLIENT_LIMITS))
        data = data[4 + n :]
    return out


def connected(**cfg: Any) -> tuple[BotClient, StringTransport]:
    client = BotClient(BotConfig(**cfg))
    transport = StringTransport()
    client.makeConnection(transport)
    hello = sent(transport)
    assert hello[0]["type"] == "hello" and hello[0]["client"] == "pisyedili-bot"
    return client, transport


def test_answers_a_turn_then_falls_back_once_on_a_refusal() -> None:
    deal = fresh("classic", 2, 8)
    seat = deal.to_act
    assert seat is not None
    wire = [move_to_wire(m) for m in legal_moves(deal, seat)]
    client, transport = connected(level="medium", seed=1)
    client.dataReceived(frame({"type": "event", "table": 1, "event": {"event": "pass", "seat": 1},
                               "view": view(deal, seat)}))  # fmt: skip
    client.dataReceived(frame({"type": "turn", "table": 1, "seat": seat, "moves": wire}))
    (move,) = sent(transport)
    assert move["type"] == "move" and move["move"] in wire
    client.dataReceived(frame({"type": "error", "id": move["id"], "code": "illegal_card",
                               "message": "no"}))  # fmt: skip
    retry = sent(transport)
    assert len(wire) > 1 and move["move"] != wire[0], "this deal must exercise the fallback"
    assert [m["move"] for m in retry] == [wire[0]]
    client.dataReceived(
        frame({"type": "error", "id": retry[0]["id"], "code": "illegal_card", "message": "no"})
    )
    assert sent(transport) == []  # only once
    assert client.refused_moves == 2


def test_pings_get_pongs_and_bad_frames_are_ignored() -> None:
    client, transport = connected(level="easy")
    client.dataReceived(frame({"type": "ping", "id": 4}))
    assert sent(transport) == [{"type": "pong", "id": 4}]
    client.dataReceived(frame({"type": "turn", "table": 1}))  # missing fields: refused, ignored
    client.dataReceived(frame({"type": "no_such_message"}))
    assert sent(transport) == []
    assert not transport.disconnecting


def test_a_fatal_refusal_ends_the_bot() -> None:
    client, transport = connected(level="easy", table=3)
    client.dataReceived(frame({"type": "welcome", "protocol": 1, "server": "s", "version": "1",
                               "player": 9, "name": "easy-bot", "token": "t", "limits": {},
                               "features": []}))  # fmt: skip
    assert [m["type"] for m in sent(transport)] == ["join_table"]
    codes: list[int] = []
    client.done.addCallback(codes.append)
    client.dataReceived(frame({"type": "error", "code": "no_such_table", "message": "gone"}))
    assert codes == [1] and transport.disconnecting
