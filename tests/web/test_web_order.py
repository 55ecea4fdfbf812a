"""Replies in the order of requests over the WebSocket too: its connection is held
behind a later answer as a TCP one is (server/net/connection.py, `Connection.answer_later`)."""

from __future__ import annotations

import pytest_twisted
from twisted.internet import reactor
from ws_kit import WebServer

from pisyedili.protocol.codec import encode
from pisyedili.server.people.accounts import CHEAP, AccountSettings
from pisyedili.server.store import MEMORY, Archive
from pisyedili.server.store.sqlite import SqliteStore

PASSWORD = "correct horse battery"


@pytest_twisted.ensureDeferred
async def test_a_register_and_a_ping_behind_it_come_back_in_order_over_websocket() -> None:
    web = await WebServer.start(archive=Archive(lambda: SqliteStore(MEMORY), reactor),
                                accounts=AccountSettings(cost=CHEAP))
    try:
        wire = await web.ws("Ayse")
        start = len(wire.received)
        wire.send_body(encode({"type": "register", "password": PASSWORD, "id": 501}))
        wire.send_body(encode({"type": "ping", "id": 502}))
        await wire.wait_for_id(502, start)
        await wire.wait_for_id(501, start)
        answers = [(m["id"], m["type"]) for m in wire.received[start:]
                   if m.get("id") in (501, 502)]
        assert answers == [(501, "account"), (502, "pong")]
    finally:
        await web.stop()
