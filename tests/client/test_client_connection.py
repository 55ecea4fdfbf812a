"""The client's connection: handshake, resume token, heartbeat, refusals, bad frames."""

from __future__ import annotations

import struct
from typing import Any, cast

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from twisted.internet.interfaces import IStreamClientEndpoint
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport

from pisyedili.client.app import ClientApp
from pisyedili.client.connection import ClientProtocol, Connection
from pisyedili.client.render import Look
from pisyedili.protocol.codec import decode, frame
from pisyedili.protocol.errors import ProtocolError
from pisyedili.protocol.limits import MAX_SERVER_FRAME

WELCOME = {"type": "welcome", "protocol": 1, "server": "test", "version": "1", "player": 7,
           "name": "tester", "token": "secret-token", "limits": {}, "features": ["chat"]}


class Harness:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.status: list[str] = []
        self.conn = Connection(cast(IStreamClientEndpoint, object()), "tester",
                               self.messages.append, self.status.append, clock=Clock())
        self.transport = StringTransport()
        self.proto = self.connect()

    def connect(self) -> ClientProtocol:
        self.transport = StringTransport()
        proto = ClientProtocol(self.conn)
        proto.makeConnection(self.transport)
        return proto

    def sent(self) -> list[dict[str, Any]]:
        data, out = self.transport.value(), []
        while data:
            (n,) = struct.unpack(">I", data[:4])
            out.append(decode(data[4:4 + n]))
            data = data[4 + n:]
        self.transport.clear()
        return out

    def hear(self, msg: dict[str, Any]) -> None:
        self.proto.dataReceived(frame(msg))


def test_hello_first_then_the_resume_token_on_reconnect() -> None:
    h = Harness()
    [hello] = h.sent()
    assert hello["type"] == "hello" and hello["name"] == "tester" and "token" not in hello
    assert {"chat", "rematch", "resume", "turn_timer"} <= set(hello["features"])
    h.hear(WELCOME)
    assert h.conn.connected and h.messages[-1]["type"] == "welcome"
    h.proto.connectionLost()
    assert not h.conn.connected and "connection to the server lost" in h.status[-1]
    h.proto = h.connect()
    [again] = h.sent()
    assert again["token"] == "secret-token", "a reconnection resumes the session (issue 4)"


def test_requests_wait_for_welcome_and_carry_fresh_ids() -> None:
    h = Harness()
    h.sent()
    assert h.conn.send({"type": "ready", "ready": True}) is None
    assert "not connected" in h.status[-1]
    h.hear(WELCOME)
    assert h.conn.send({"type": "ready", "ready": True}) == 1
    assert h.conn.send({"type": "start"}) == 2
    assert [m.get("id") for m in h.sent()] == [1, 2]
    assert h.conn.request_of(2) == {"type": "start", "id": 2}


def test_the_schema_refuses_a_bad_request_before_it_is_sent() -> None:
    h = Harness()
    h.hear(WELCOME)
    h.sent()
    with pytest.raises(ProtocolError) as err:
        h.conn.send({"type": "chat", "text": "x" * 5000})
    assert err.value.code == "bad_field"
    assert h.sent() == []


def test_ping_is_answered_with_pong_and_the_same_id() -> None:
    h = Harness()
    h.hear(WELCOME)
    h.sent()
    h.hear({"type": "ping", "id": 42})
    assert h.sent() == [{"type": "pong", "id": 42}]


def test_an_unreadable_frame_is_reported_not_fatal() -> None:
    h = Harness()
    h.hear(WELCOME)
    h.proto.dataReceived(struct.pack(">I", 3) + b"\xc1\xc1\xc1")  # not msgpack
    h.hear({"type": "no_such_message_yet"})
    assert sum("cannot read" in s for s in h.status) == 2
    assert h.conn.connected and not h.transport.disconnecting


def test_an_oversized_frame_drops_the_connection() -> None:
    h = Harness()
    h.proto.dataReceived(struct.pack(">I", MAX_SERVER_FRAME + 1))
    assert h.transport.disconnecting or h.transport.disconnected


def test_an_expired_token_is_forgotten() -> None:
    h = Harness()
    h.hear(WELCOME)
    h.hear({"type": "error", "code": "bad_token", "message": "expired"})
    assert h.conn.token is None and h.conn.fatal is None


def test_being_replaced_stops_reconnecting() -> None:
    h = Harness()
    h.hear(WELCOME)
    h.hear({"type": "replaced", "message": "resumed elsewhere"})
    assert h.conn.fatal == "replaced"
    assert "for good" in h.status[-1]


def test_tab_completion_offers_exactly_the_legal_moves() -> None:
    with create_pipe_input() as pipe:
        app = ClientApp(Look(), "tester", input=pipe, output=DummyOutput())
        app.state.legal = [{"kind": "play", "card": "7h"},
                           *({"kind": "play", "card": "Js", "suit": s} for s in "cdhs"),
                           {"kind": "draw"}]
        completer = app.session.completer
        assert completer is not None

        def complete(text: str) -> list[str]:
            return [c.text for c in completer.get_completions(Document(text), CompleteEvent())]

        assert complete("") == ["7h", "js c", "js d", "js h", "js s", "draw"]
        assert complete("J") == ["js c", "js d", "js h", "js s"]
        assert complete("/re") == ["/ready", "/rematch"]
        app.state.legal = []
        assert complete("") == []


def test_a_view_the_client_cannot_draw_costs_one_message_not_the_game() -> None:
    with create_pipe_input() as pipe:
        app = ClientApp(Look(), "tester", input=pipe, output=DummyOutput())
        app.on_message({"type": "table", "table": {"id": 1, "seats": [{"seat": "x"}]},
                        "you": {"seat": 0}, "view": None, "match": None})
        assert "could not show a table message" in app.log[-1]
        app.on_message({"type": "chat", "scope": "lobby", "name": "ayse", "text": "hi",
                        "spectator": False})
        assert app.log[-1].endswith("ayse: hi")
