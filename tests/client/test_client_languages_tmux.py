"""The real `pisyedili play` in a real terminal (tmux), in each of its languages: how the
language is chosen, that every line a player reads comes from the catalog, and that the
screens fit 80×24 in every language."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po
from prompt_toolkit.utils import get_cwidth
from screen_app import HAND, LEGAL
from test_client_tmux import TMUX, Terminal, command, screen_app, terminal

from pisyedili.client import catalogs, i18n, render

__all__ = ["terminal"]  # the fixture, shared with test_client_tmux

pytestmark = [pytest.mark.skipif(TMUX is None, reason="tmux is not installed"),
              pytest.mark.usefixtures("english")]  # tests/conftest.py

NO_LOCALE = {"LC_ALL": "", "LC_MESSAGES": ""}
"""The test's own locale variables must not decide for the program under test."""


def play(*args: str) -> list[str]:
    return [*command(), "play", "--name", "tester", *args]


def said(lang: str, message: str, **fields: object) -> str:
    """`message` as the program shows it in `lang`."""
    i18n.set_language(lang)
    try:
        return i18n._(message, **fields)
    finally:
        i18n.set_language("en")


def test_lang_from_the_environment_without_flags(terminal: Terminal) -> None:
    terminal.start(play("--seed", "5"), env={**NO_LOCALE, "LANG": "tr_TR.UTF-8"})
    screen = terminal.wait_for(lambda s: "hamleniz: " in s, "Turkish: our move")
    assert "Komutlar için /help yazın." in screen
    assert "your move" not in screen


def test_lang_flag_overrides_the_environment(terminal: Terminal) -> None:
    terminal.start(play("--seed", "5", "--lang", "ru"), env={**NO_LOCALE, "LANG": "tr_TR.UTF-8"})
    screen = terminal.wait_for(lambda s: "ваш ход: " in s, "Russian: our move")
    assert "hamleniz" not in screen


def test_slash_lang_switches_and_redraws(terminal: Terminal) -> None:
    terminal.start(play("--seed", "5"), env=NO_LOCALE)
    terminal.wait_for(lambda s: "your move: " in s, "English: our move")
    terminal.type("/lang uk")
    screen = terminal.wait_for(lambda s: "ваш хід: " in s, "the status area in Ukrainian")
    assert "Тепер екран говорить українською." in screen
    assert said("uk", "hand ").strip() in screen
    terminal.type("/help")
    terminal.wait_for(lambda s: "Довідка" in s, "/help in Ukrainian")


# ----------------------------------------------------------------- 80×24 in each language


def _rows_on(screen: str, head: str) -> str:
    """The text of the screen's row starting with `head` and its indented continuations."""
    found = re.search(rf"^{re.escape(head)}(.*(?:\n {{2,}}.*)*)", screen, re.M)
    assert found, (head, screen)
    return found.group(1)


@pytest.mark.parametrize("lang", ["en", *catalogs.LANGUAGES])
def test_a_match_and_help_fit_80_by_24(terminal: Terminal, lang: str) -> None:
    """Every row is the width the client laid it out for (none cut or wrapped by the
    terminal), the whole hand and every legal move are on screen over as many rows as
    they take, and each /help page is on screen whole."""
    terminal.start(play("--bots", "5", "--seed", "5", "--lang", lang), env=NO_LOCALE)
    move_head = said(lang, "your move: ")
    screen = terminal.wait_for(lambda s: move_head in s, f"our turn in {lang}")
    for line in screen.splitlines():
        assert get_cwidth(line.rstrip()) <= 80, line
    hand = re.findall(r"(\d+):(\S+)", _rows_on(screen, said(lang, "hand ")))
    assert [int(n) for n, _ in hand] == list(range(1, len(hand) + 1)), screen
    assert len(hand) == 7, screen
    held = {card for _, card in hand}
    for item in _rows_on(screen, move_head).split():
        card = item.partition(":")[2]
        if card:
            assert card.removesuffix(said(lang, "+suit")) in held, (item, screen)
    i18n.set_language(lang)
    try:
        pages = {topic: [render.plain(f).rstrip() for f in render.help_lines(topic, 80)]
                 for topic in ("", "moves", "screen")}
    finally:
        i18n.set_language("en")
    for topic, rows in pages.items():
        terminal.type(f"/help {topic}".strip())
        shown = terminal.wait_for(lambda s, last=rows[-1]: last in s.splitlines(),  # type: ignore[misc]
                                  f"the end of /help {topic} in {lang}")
        lines = [ln.rstrip() for ln in shown.splitlines()]
        start = lines.index(rows[0])
        assert lines[start:start + len(rows)] == rows, (lang, topic, shown)
        assert all(get_cwidth(row) <= 80 for row in rows)


LOCALES = {"en": "C.UTF-8", "tr": "tr_TR.UTF-8", "ru": "ru_RU.UTF-8", "uk": "uk_UA.UTF-8",
           "fa": "fa_IR.UTF-8", "th": "th_TH.UTF-8"}


@pytest.mark.parametrize("lang", ["en", *catalogs.LANGUAGES])
def test_a_hand_of_18_and_its_moves_wrap_at_80_columns(terminal: Terminal, lang: str) -> None:
    """A hand of 18 and six seats (screen_app.py) in each language: the hand and the
    legal moves flow onto as many rows as they need, every card and move on screen."""
    terminal.start(screen_app("crowded"), env={**NO_LOCALE, "LANG": LOCALES[lang]})
    move_head = said(lang, "your move: ")
    screen = terminal.wait_for(lambda s: move_head in s, f"the table in {lang}")
    for line in screen.splitlines():
        assert get_cwidth(line.rstrip()) <= 80, line
    hand_rows = _rows_on(screen, said(lang, "hand "))
    assert "\n" in hand_rows, "eighteen cards take more than one row at 80 columns"
    hand = re.findall(r"(\d+):(\S+)", hand_rows)
    assert [int(n) for n, _ in hand] == list(range(1, 19)), screen
    assert len(hand) == len(HAND)
    moves = _rows_on(screen, move_head).split()
    assert len(moves) == len(LEGAL) + 1, screen
    assert moves[-1] == said(lang, "draw")
    shown = dict(hand)
    for move in moves[:-1]:
        number, card = move.split(":")
        assert shown[number] == card.removesuffix(said(lang, "+suit")), (move, screen)


# ------------------------------------------------------------------------- pseudo-locale

PLAIN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
MARKED = "ȧƀċḋėḟġḣıĵķĺṁṅȯṗʠŗṡṫųṿẇẋẏżȦƁĊḊĖḞĠḢİĴĶĹṀṄȮṖǪŔṠṪŲṾẆẊẎŻ"
_MARK = str.maketrans(PLAIN, MARKED)
_KEPT = re.compile(r"(\{[^{}]*\}|%\([^)]*\)[sdr]|%[sdr])")


def pseudo(text: str) -> str:
    """`text` with every ASCII letter swapped for a marked one of the same width; its
    placeholders (`{who}`, `%(prog)s`) kept, so the program fills them in."""
    return "".join(part if _KEPT.fullmatch(part) else part.translate(_MARK)
                   for part in _KEPT.split(text))


def pseudo_catalog(folder: Path) -> None:
    """A catalog for `tr` in `folder` with every message of the template pseudo-translated."""
    with (catalogs.ROOT / "locale" / "terminal.pot").open("rb") as f:
        template = read_po(f)
    catalog = Catalog(locale="tr", domain="terminal")
    for message in template:
        if not message.id:
            continue
        if isinstance(message.id, str):
            string: str | tuple[str, ...] = pseudo(message.id)
        else:
            string = (pseudo(message.id[0]), pseudo(message.id[1]))
        catalog.add(message.id, string)
    po = folder / "tr" / "LC_MESSAGES" / "terminal.po"
    po.parent.mkdir(parents=True)
    with po.open("wb") as f:
        write_po(f, catalog)


ALLOWED = re.compile("|".join((
    r"(?:10|[2-9JQKA])[cdhs♣♦♥♠]",  # cards
    r"\btester\b",  # the player's name
    r"/[a-z]+", r"--[a-z-]+",  # commands and options, typed as they are
    r"(?<=--ten )reverse\|bounce", r"(?<=--empty-stock )end_deal\|reshuffle",
    r"(?<=--match-end )deals:N\|points:N", r"(?<=--decks )1\|2",  # their values
    r"\b(?:rank\|suit|on\|off|no|next\|prev|mine\|recent|everywhere)\b",  # a command's words
    r"(?<=\|)next\|prev", r"(?<=/create )classic\|cardiva", r"(?<=/create )classic",
    r"\bpisyedili play \d+\.\d+\.\d+\b",  # the embedded server's name and version
)))


def unmarked(screen: str) -> list[str]:
    """The lines with English the catalog did not give: letters left once the names,
    cards and typed words are taken out, and no marked letter."""
    found = []
    for line in screen.splitlines():
        if any(ch in MARKED for ch in line):
            continue
        if re.search(r"[A-Za-z]", ALLOWED.sub("", line)):
            found.append(line)
    return found


def test_every_line_on_screen_comes_from_the_catalog(terminal: Terminal, tmp_path: Path) -> None:
    """A pseudo-locale (every letter of every message marked) through the real program:
    the table, the help pages, the rules, then the lobby. A line in plain English was
    built outside the catalog."""
    pseudo_catalog(tmp_path)
    terminal.start(play("--bots", "2", "--seed", "5", "--lang", "tr"), 100, 50,
                   env={**NO_LOCALE, i18n.LOCALE_VARIABLE: str(tmp_path)})
    turn = pseudo("your move: ")
    screens = [terminal.wait_for(lambda s: turn in s, "our turn, pseudo-translated")]
    for typed, last in (("/help", pseudo("leave and exit (Ctrl-D and Ctrl-C too)")),
                        ("/help moves", pseudo("pick face-down card number 4 (K14)")),
                        ("/help table", pseudo("take your ready back")),
                        ("/help screen", pseudo("Ctrl-C, Ctrl-D or /quit leaves; during a "
                                                "match, press it twice.")[:30]),
                        ("/rules", pseudo("C16 a match is 4 deals; the lowest total wins.")),
                        ("/moves", pseudo("legal: ")),
                        ("/log", pseudo("deal {deal}, page {page} of {pages}",
                                        ).split("{")[0])):
        terminal.type(typed)
        screens.append(terminal.wait_for(lambda s, t=last: t in s,  # type: ignore[misc]
                                         f"{typed}'s last line"))
    terminal.type("/leave")
    terminal.type("/leave")
    screens.append(terminal.wait_for(lambda s: pseudo("you left the table") in s, "the lobby"))
    found = [line for screen in screens for line in unmarked(screen)]
    assert found == [], "\n".join(found)
