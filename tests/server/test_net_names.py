"""Names over real sockets: a refused name closes, look-alikes get suffixes."""

from __future__ import annotations

import unicodedata

import pytest
import pytest_twisted
from wireclient import Server

from pisyedili.protocol.version import PROTOCOL_VERSION

AYSE = "Ay\u015fe"


@pytest.mark.parametrize(("name", "says"), [
    ("A\u200byşe", "U+200B ZERO WIDTH SPACE"),
    ("\u3164", "U+3164 HANGUL FILLER"),
    ("\u2800\u2800", "U+2800 BRAILLE PATTERN BLANK"),
    ("\u0301\u0301", "combining mark"),
    ("Ali\ue000", "private-use"),
    ("...", "letter or digit"),
    ("b\u043et (easy)", "kept for the server's bots"),  # a Cyrillic о
    ("B0T (hard)", "kept for the server's bots"),
    ("\uff42ot (easy)", "kept for the server's bots"),  # a fullwidth ｂ
    ("bot \uff08easy\uff09", "kept for the server's bots"),  # fullwidth brackets
    ("bot 2", "kept for the server's bots"),  # how clients show a bot seat
])
@pytest_twisted.ensureDeferred
async def test_a_refused_name_is_a_bad_field_then_a_close(name: str, says: str) -> None:
    server = await Server.start()
    try:
        client = await server.connect()
        client.send({"type": "hello", "id": 1, "protocol": PROTOCOL_VERSION, "name": name})
        err = await client.wait_for_id(1)
        assert (err["type"], err["code"], err["field"]) == ("error", "bad_field", "name")
        assert err["message"].startswith("name: ") and says in err["message"]
        await client.closed
        assert client.types() == ["error"]
        assert len(server.factory.sessions) == 0
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_look_alikes_are_welcomed_under_distinct_names() -> None:
    server = await Server.start()
    try:
        first = await server.connect(AYSE)
        cyrillic = await server.connect("A\u0443\u015fe")
        decomposed = await server.connect(unicodedata.normalize("NFD", AYSE))
        shouting = await server.connect("  AYŞE  ")
        plain = await server.connect("Ayse")  # ş and s are not confusable: no suffix
        assert [c.welcome["name"] for c in (first, cyrillic, decomposed, shouting, plain)] \
            == [AYSE, "A\u0443\u015fe 2", AYSE + " 3", "AYŞE 4", "Ayse"]
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_resuming_hello_keeps_its_name_whatever_it_says() -> None:
    server = await Server.start()
    try:
        first = await server.connect("Mehmet")
        await first.close()
        await server.dropped(first)
        # A name `accept` refuses, though the schema's text rule lets it through.
        again = await server.connect("bot (easy)", token=first.welcome["token"])
        assert again.welcome["resumed"] and again.welcome["name"] == "Mehmet"
    finally:
        await server.stop()
