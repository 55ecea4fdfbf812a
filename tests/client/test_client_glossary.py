"""One voice per language: each language's glossary (client/locale/<lang>/glossary.toml)
fixes the words of the game, and both clients' catalogs say them.

For every term, each message of either catalog whose English names the term (the
term's `english` pattern) must, in every translated form, say one of the term's `words`
and none of its `wrong` ones: in the rule lines, the move log, the help and the
screens alike. A term that matches no message fails too, so no term passes by
checking nothing; and a catalog with a wrong word put back is caught (the last test).
The terminal's parser reads every word of a glossary's `typed`. `catalogs check`
reports the same (client/catalogs.py, `glossary_problems`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pisyedili.client import cards, catalogs
from pisyedili.client.parse import Context, Move, parse_move

ROOT = catalogs.ROOT
TERMS = ("clubs", "diamonds", "hearts", "spades", "jack", "queen", "king", "ace",
         "draw", "pass", "penalty", "stack", "named_suit", "muamele", "deal", "match",
         "round", "seat", "table", "lobby", "rule_set", "stock", "pile")
"""The terms every glossary fixes (issue: one voice per language)."""
SUITS = {"clubs": "c", "diamonds": "d", "hearts": "h", "spades": "s"}
RANKS = {"jack": "J", "queen": "Q", "king": "K", "ace": "A"}
MOVES = {"draw": "draw", "pass": "pass"}


def glossary(lang: str) -> dict[str, catalogs.Term]:
    return catalogs.glossary(ROOT, lang)


def violations(lang: str, root: Path = ROOT) -> tuple[list[str], dict[str, int]]:
    return catalogs.glossary_problems(root, lang)


@pytest.mark.parametrize("lang", catalogs.LANGUAGES)
def test_the_glossary_fixes_every_term_with_its_reason(lang: str) -> None:
    terms = glossary(lang)
    assert set(TERMS) <= set(terms)
    for term in terms.values():
        assert term.words and term.note.strip() and term.source.strip(), term.key


@pytest.mark.parametrize("lang", catalogs.LANGUAGES)
def test_both_catalogs_say_each_term_as_the_glossary_does(lang: str) -> None:
    found, checked = violations(lang)
    assert found == [], "\n".join(found)
    assert [key for key, n in checked.items() if n == 0] == []


@pytest.mark.parametrize("lang", catalogs.LANGUAGES)
def test_the_parser_reads_the_glossarys_words(lang: str) -> None:
    """What the glossary says a player types: the suits and ranks as cards' words, and
    draw and pass as moves, through the terminal's own parser."""
    ctx = Context(hand=["7h", "Jc"], legal=[{"kind": "draw"}, {"kind": "pass"}])
    typed = 0
    for term in glossary(lang).values():
        for word in term.typed:
            typed += 1
            if term.key in SUITS:
                assert cards.parse_suit(word) == SUITS[term.key], (term.key, word)
            elif term.key in RANKS:
                assert cards.parse_rank(word) == RANKS[term.key], (term.key, word)
            else:
                assert parse_move(word, ctx) == Move({"kind": MOVES[term.key]}), (term.key, word)
    assert typed >= 10


def test_a_wrong_word_put_back_is_caught(tmp_path: Path) -> None:
    """The check is real: the Turkish web catalog saying "Koltuk" for a seat again
    fails it, as the catalogs did before the glossary."""
    root = tmp_path / "client"
    shutil.copytree(ROOT / "locale", root / "locale")
    assert violations("tr", root)[0] == []
    po = catalogs.po_path(root, "tr", "web")
    text = po.read_text(encoding="utf-8")
    assert 'msgid "Seat"\nmsgstr "Yer"' in text
    po.write_text(text.replace('msgid "Seat"\nmsgstr "Yer"', 'msgid "Seat"\nmsgstr "Koltuk"'),
                  encoding="utf-8")
    found = violations("tr", root)[0]
    assert found == ["tr web seat: 'Seat' -> 'Koltuk' says none of the glossary's words",
                     "tr web seat: 'Seat' -> 'Koltuk' says ['koltuk']"]
    assert set(found) <= set(catalogs.check(root))

