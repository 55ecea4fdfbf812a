"""No English at the table: the real `pisyedili play` in a real terminal (tmux), in each
of its languages, shows none of the English words a player would meet there (rule sets,
bot levels and names, a table's options, its name, the help's placeholders, refusals).

What the player types stays as typed: a command and the words after it (`/create
classic 4`, `/lobby [PAGE|next|prev]`), an option and its values (`--ten
reverse|bounce`), and the move words of `/help moves` (`d  draw`), are taken out before
the words are looked for.
"""

from __future__ import annotations

import re

import pytest
from english_kit import english_words
from poll_kit import poll_until
from test_client_tmux import TMUX, Terminal, command, terminal

from pisyedili.client import catalogs, i18n

__all__ = ["terminal"]  # the fixture, shared with test_client_tmux

pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

TYPED = re.compile("|".join((
    r"/[a-z]+(?: [a-z0-9|:.\-]+)*",  # a command and what is typed after it
    r"--[a-z-]+(?: (?:[a-z0-9_|]|:N?)+)?",  # an option and its values (`deals:N|points:N`)
    r"\bdeal N\b",  # a replay's word (/help replay: `d N or deal N`)
    r"\bpisyedili play \d+\.\d+\.\d+",  # the embedded server's name and version
    r"\btester\b",  # the player's name
)))

SCREENS = ("/rules", "/help", "/help table", "/help lobby", "/help create", "/help moves",
           "/help replay", "/help account", "/moves", "/sit 9", "/bot 2 hard", "/history",
           "/top")
"""What is typed at the table: the rules and options, the help pages and their
placeholders, and requests the table or the embedded server refuses."""


def shown_words(text: str, lang: str) -> list[str]:
    """The English words in `text`, once what the player types is taken out."""
    return english_words(TYPED.sub(" ", text), lang)


def said(lang: str, message: str) -> str:
    i18n.set_language(lang)
    try:
        return i18n._(message)
    finally:
        i18n.set_language("en")


def typed(terminal: Terminal, text: str, lang: str) -> None:
    """Type `text` at the prompt and wait for its line in the log, and for what it
    answers (a request the server refuses answers a moment later)."""
    before = terminal.history().count(f"> {text}\n")
    terminal.type(text)
    poll_until(lambda: terminal.history().count(f"> {text}\n") > before or None, 20,
               f"{text} in {lang}")


@pytest.mark.parametrize("lang", catalogs.LANGUAGES)
def test_a_table_and_the_lobby_speak_no_english(terminal: Terminal, lang: str) -> None:
    terminal.start([*command(), "play", "--name", "tester", "--bots", "2", "--seed", "5",
                    "--lang", lang], 120, 60, env={"LC_ALL": "", "LC_MESSAGES": ""})
    terminal.wait_for(lambda s: said(lang, "your move: ") in s, f"our turn in {lang}")
    for text in SCREENS:
        typed(terminal, text, lang)
    refused = said(lang, "a match is being played: seats cannot change now")  # /bot 2 hard
    terminal.wait_for(lambda s: refused[1:] in s, "the refusals")
    for __ in range(2):  # a match is on: the second /leave confirms
        terminal.type("/leave")
    terminal.wait_for(lambda s: said(lang, "you left the table") in s, "the lobby")
    typed(terminal, "/help create", lang)
    typed(terminal, "/rules", lang)
    shown = terminal.history()
    assert said(lang, "options: {options}").split("{")[0] in shown  # /rules was answered
    assert shown_words(shown, lang) == [], shown
