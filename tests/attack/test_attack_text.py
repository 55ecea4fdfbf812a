"""Invisible characters in what people write: one text rule for every human-written string.

A table name or a chat line with a zero-width space, a joiner, a byte order mark, a tag
character, a Hangul filler or a bidirectional mark could pass for another (two tables
"Friday" that differ invisibly) or hide what it says; names refused them, table names
and chat did not. Now every `text` field follows `pisyedili.protocol.text`, whose
docstring writes the rule down class by class; Persian's zero-width non-joiner and
emoji sequences stay writable.

Over real sockets to a real server; then a property test that the rule accepts
exactly what its written form says.
"""

from __future__ import annotations

import unicodedata
from collections.abc import AsyncIterator

import pytest
import pytest_twisted
from hypothesis import example, given
from hypothesis import strategies as st
from twisted.python import usage
from wireclient import Server, WireClient

from pisyedili.protocol import names
from pisyedili.protocol import text as text_rule
from pisyedili.protocol.errors import ProtocolError
from pisyedili.protocol.limits import MAX_CHAT
from pisyedili.protocol.types import StrT
from pisyedili.server.service import tap

INVISIBLE = {
    "\u200b": "ZERO WIDTH SPACE",
    "\u200d": "ZERO WIDTH JOINER",
    "\u2060": "WORD JOINER",
    "\ufeff": "ZERO WIDTH NO-BREAK SPACE",  # the byte order mark
    "\U000e0001": "LANGUAGE TAG",
    "\U000e0041": "TAG LATIN CAPITAL LETTER A",
    "\u3164": "HANGUL FILLER",
    "\u200f": "RIGHT-TO-LEFT MARK",
    "\u061c": "ARABIC LETTER MARK",
}

PERSIAN = "می\u200cخواهم بازی کنم"
""""I want to play", with the zero-width non-joiner Persian writes inside a word."""


@pytest_twisted.async_yield_fixture
async def ayse() -> AsyncIterator[WireClient]:
    server = await Server.start()
    client = await server.connect("Ayse")
    await client.ok("lobby_subscribe")
    yield client
    await server.stop()


@pytest.mark.parametrize("ch", list(INVISIBLE), ids=list(INVISIBLE.values()))
@pytest_twisted.ensureDeferred
async def test_an_invisible_character_is_refused_in_a_table_name_and_in_chat(
        ayse: WireClient, ch: str) -> None:
    for kind, fields, field in (
            ("create_table", {"rules": "classic", "seats": 2, "name": f"Fri{ch}day"}, "name"),
            ("chat", {"text": f"hi{ch} there", "scope": "lobby"}, "text")):
        refused = await ayse.request(kind, **fields)
        assert (refused["type"], refused["code"], refused["field"]) == (
            "error", "bad_field", field), refused
        assert INVISIBLE[ch] in refused["message"], refused
    assert [m for m in ayse.received if m["type"] in ("table", "chat")] == []


@pytest_twisted.ensureDeferred
async def test_persian_with_its_non_joiner_and_emoji_sequences_are_accepted(
        ayse: WireClient) -> None:
    for line in (PERSIAN, "\U0001f469\u200d\U0001f4bb kod yazıyor", "\u2764\ufe0f 1\ufe0f\u20e3"):
        await ayse.ok("chat", text=line, scope="lobby")
        said = await ayse.wait_type("chat")
        assert said["text"] == line
    table = await ayse.ok("create_table", rules="classic", seats=2, name="میز\u200cها")
    assert table["table"]["name"] == "میز\u200cها"


@pytest.mark.parametrize("name", ["Kahve\u200b", "\u3164", "Kahve\u202eevil", "K" * 65])
def test_the_operators_server_name_follows_it_too(name: str) -> None:
    """`--name` is shown to every player (`welcome.server`, the LAN announcement)."""
    with pytest.raises(usage.UsageError, match="--name: must"):
        tap.Options().parseOptions(["--name", name])  # type: ignore[no-untyped-call]
    tap.Options().parseOptions(["--name", "Kahve\u200cخانه"])  # type: ignore[no-untyped-call]


# -- the rule as written -----------------------------------------------------------------

WRITTEN_INVISIBLE = {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D,
                     0x180F, 0x3164, 0xFFA0, *range(0xFE00, 0xFE10),
                     *range(0xE0100, 0xE01F0)}
"""The docstring's default-ignorable characters that are not format characters."""
WRITTEN_BLANK = {0x2800, 0x1D159, 0x16FE4}


def written_rule(text: str, name: bool) -> bool:
    """Whether the rule, as `pisyedili.protocol.text` writes it down, accepts `text`."""
    for i, ch in enumerate(text):
        category, cp = unicodedata.category(ch), ord(ch)
        before, after = text[i - 1] if i else "", text[i + 1] if i + 1 < len(text) else ""
        free_exception = not name and (
            ch == "\u200c"
            or (ch == "\u200d" and after != "" and unicodedata.category(after) == "So"
                and before != "" and (unicodedata.category(before).startswith("S")
                                      or before == "\ufe0f"))
            or (ch in "\ufe0e\ufe0f" and before != ""
                and unicodedata.category(before).startswith("S"))
            or (ch == "\ufe0f" and before in "0123456789#*" and before != ""
                and after == "\u20e3"))
        refused = (category in ("Cc", "Cs", "Co", "Zl", "Zp", "Cf")
                   or (name and category == "Cn")
                   or cp in WRITTEN_INVISIBLE or cp in WRITTEN_BLANK)
        if refused and not free_exception:
            return False
    return name or any(not ch.isspace() and ch not in "\u200c\u200d\ufe0e\ufe0f"
                       for ch in text)


INTERESTING = st.sampled_from(
    [*INVISIBLE, "\u200c", "\u200d", "\ufe0e", "\ufe0f", "\u20e3", "\u2764", "\U0001f469",
     "\U0001f3fd", "\U0001f4bb", "1", "#", "a", "ş", "م", " ", "\u3000", "\t", "\n",
     "\u202e", "\u2066", "\u00ad", "\u0301", "\ue000", "\u0378", "\u2800", "\u034f",
     "\U000e0100", "\u180b", "\u2028", "\x7f"])
TEXTS = st.lists(INTERESTING | st.characters(), max_size=12).map("".join)


@given(TEXTS, st.booleans())
@example(PERSIAN, False)
@example("\U0001f469\U0001f3fd\u200d\U0001f4bb", False)
@example("a\u200db", False)
@example("\u200c", False)
def test_the_rule_accepts_exactly_what_it_says(text: str, name: bool) -> None:
    assert (text_rule.refusal(text, name=name) is None) == written_rule(text, name)


@given(TEXTS)
def test_every_text_field_and_every_name_follow_the_one_rule(text: str) -> None:
    field = StrT(MAX_CHAT, text=True)
    try:
        field.check(text, "text")
        checked = True
    except ProtocolError as e:
        assert e.code == "bad_field"
        checked = False
    assert checked == (text_rule.refusal(text) is None)  # all far below MAX_CHAT
    nfc = unicodedata.normalize("NFC", text)
    if text_rule.refusal(nfc, name=True) is not None:
        with pytest.raises(names.BadName):
            names.normalise(text)
