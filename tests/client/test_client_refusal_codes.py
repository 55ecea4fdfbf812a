"""Every error code the server can send is worded by both clients in every language:
a refusal never falls back to the server's English message.

The codes are the protocol package's registry (`pisyedili.protocol.errors.ERRORS`); the
terminal's words are `render.REFUSALS`, the web page's the `PLAIN` table of
client/web/refusals.js, each text looked up in the catalogs of each language.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog

from pisyedili.client import catalogs, i18n, render
from pisyedili.protocol.errors import ERRORS

ROOT = Path(__file__).resolve().parents[2] / "client"
REFUSALS_JS = ROOT / "web" / "refusals.js"
ENTRY = re.compile(r'^  (\w+): \((?:err)?\) =>(.*)$', re.M)
TEXT = re.compile(r'\b(tn?)\("((?:[^"\\]|\\.)*)"(?:, "((?:[^"\\]|\\.)*)")?')


def web_words() -> dict[str, list[str | tuple[str, str]]]:
    """Code → the catalog ids its entry of `PLAIN` words it with."""
    out: dict[str, list[str | tuple[str, str]]] = {}
    for code, body in ENTRY.findall(REFUSALS_JS.read_text(encoding="utf-8")):
        out[code] = [one if kind == "t" else (one, other)
                     for kind, one, other in TEXT.findall(body)]
    return out


def catalog(lang: str, domain: str) -> Catalog:
    return catalogs.read_catalog(catalogs.po_path(ROOT, lang, domain))


def test_the_page_words_every_code() -> None:
    words = web_words()
    assert set(ERRORS) - set(words) == set()
    assert set(words) - set(ERRORS) == {"not_connected"}  # the page's own, for no link
    sanctions = {"kicked", "banned", "muted"}  # worded by sanctionText, with the reason
    assert all(texts for code, texts in words.items() if code not in sanctions), words


def test_the_terminal_words_every_code_and_nothing_else() -> None:
    assert sorted(render.REFUSALS) == sorted(ERRORS)


@pytest.mark.parametrize("lang", catalogs.LANGUAGES)
def test_every_refusal_is_translated(lang: str) -> None:
    """Each code's words have a translation in both catalogs of `lang`, and the
    terminal shows it (not the server's message) for a refusal with that code."""
    web = catalog(lang, "web")
    for code, texts in web_words().items():
        for text in texts:
            found = web.get(text)
            assert found is not None and found.string and found.string != text, (code, text)
    terminal = catalog(lang, "terminal")
    look = render.Look(unicode=True, color=False)
    i18n.set_language(lang)
    try:
        for code in ERRORS:
            found = terminal.get(render.REFUSALS[code])
            assert found is not None and found.string, code
            shown = render.plain(render.refusal(
                {"code": code, "message": "ENGLISH WORDS", "field": "seat"}, look))
            assert "ENGLISH WORDS" not in shown and "seat" not in shown, (code, shown)
    finally:
        i18n.set_language("en")


def test_an_unknown_code_is_a_plain_refusal_outside_english() -> None:
    """A newer server's code in the terminal: in English its message, in another
    language the plain words for a refusal (its message is English)."""
    look = render.Look(unicode=True, color=False)
    msg = {"code": "brand_new", "message": "the moon is full"}
    assert render.plain(render.refusal(msg, look)) == "The moon is full"
    i18n.set_language("ru")
    try:
        plain = i18n._("the server refused that")
        assert plain != "the server refused that"
        assert render.plain(render.refusal(msg, look)) == plain[:1].upper() + plain[1:]
    finally:
        i18n.set_language("en")
