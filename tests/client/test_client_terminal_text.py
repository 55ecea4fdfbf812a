"""`visible`, the one rule for text the program did not write on its way to a terminal,
and the client's screen keeping to it: the log printed above the prompt (where
prompt_toolkit replaces ESC and nothing else), the status area, and `/log`."""

from __future__ import annotations

import argparse
import unicodedata
from pathlib import Path

from client_kit import seat, table_info, view
from hypothesis import given
from hypothesis import strategies as st
from prompt_toolkit.input import create_pipe_input
from test_client_prompt import Screen, Wired

from pisyedili.client.app import ClientApp
from pisyedili.client.cli import claim_session, name_for, server_key, session_key
from pisyedili.client.render import Look
from pisyedili.client.terminal_text import visible, visible_fragments
from pisyedili.client.token_store import TokenStore
from pisyedili.protocol.text import BIDI_CONTROLS

PAYLOAD = ("\x1b]0;PWNED\x07\x1b]2;PWNED\x07\x1b[2J\x1b[31mYour password is needed\x1b[0m "
           "\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\ \x1b]52;c;cHduZWQ=\x07 "
           "\x9b2J \u202eevil\u2069")
"""Retitle the window (OSC 0, 2), clear the screen, a red line, a hidden link (OSC 8),
a clipboard write (OSC 52), a C1 CSI, a right-to-left override."""

ACTS = ("\x1b", "\x07", "\x9b", "\u202e", "\u2069")
"""What a terminal would act on in PAYLOAD."""


def acted_on(text: str) -> list[str]:
    """The characters of `text` a terminal would act on rather than show."""
    return [ch for ch in text if unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp")
            or ord(ch) in BIDI_CONTROLS]


def test_controls_escapes_and_bidi_are_written_out() -> None:
    assert visible(PAYLOAD) == (
        "\\x1b]0;PWNED\\x07\\x1b]2;PWNED\\x07\\x1b[2J\\x1b[31mYour password is needed"
        "\\x1b[0m \\x1b]8;;http://evil.example/\\x1b\\link\\x1b]8;;\\x1b\\ "
        "\\x1b]52;c;cHduZWQ=\\x07 \\x9b2J \\u202eevil\\u2069")
    assert visible("bob: hi\ralice: hello\b\x7f\n\t") == (
        "bob: hi\\x0dalice: hello\\x08\\x7f\\x0a\\x09")
    assert visible("\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u2066\u2067\u2068") == (
        "\\u200e\\u200f\\u061c\\u202a\\u202b\\u202c\\u202d\\u2066\\u2067\\u2068")
    assert visible("a\u2028b\u2029c\ud800") == "a\\u2028b\\u2029c\\ud800"
    assert visible_fragments([("class:me", "x\x1b"), ("", "y")]) == [
        ("class:me", "x\\x1b"), ("", "y")]


def test_every_language_is_left_as_it_is() -> None:
    for text in ("Ayşe Çay ocağı", "Пётр", "Петро ї", "می‌خواهم", "สวัสดี",  # ZWNJ in fa
                 "家族 👨\u200d👩\u200d👧", "e\u0301", "non\u00a0breaking", ""):
        assert visible(text) == text


@given(st.text())
def test_nothing_a_terminal_acts_on_comes_out(text: str) -> None:
    shown = visible(text)
    assert acted_on(shown) == []
    assert visible(shown) == shown, "idempotent"
    if not acted_on(text):
        assert shown == text, "text with nothing to act on is left alone"


# -- the screen -----------------------------------------------------------------------------


def test_a_refusal_in_the_log_reaches_the_terminal_as_text() -> None:
    screen = Screen(columns=200)
    with create_pipe_input() as pipe:
        app = ClientApp(Look(unicode=False, color=False), "tester", input=pipe, output=screen)
        w = Wired(app)
        w.hear({"type": "error", "code": "evil", "message": PAYLOAD})  # as a server sends it
    written = screen.buffer.getvalue()
    assert "\\x1b]52;c;cHduZWQ=\\x07" in written and "\\u202eevil" in written
    assert not [ch for ch in ACTS if ch in written.replace("\x1b[", "")], written
    assert "\x1b]" not in written, "no OSC but the ones the program writes (none)"


def test_a_chat_line_cannot_overwrite_its_sender() -> None:
    screen = Screen(columns=80)
    with create_pipe_input() as pipe:
        app = ClientApp(Look(unicode=False, color=False), "tester", input=pipe, output=screen)
        app.on_message({"type": "chat", "name": "mallory", "text": "hi\ralice: I resign\x08"})
    assert "mallory: hi\\x0dalice: I resign\\x08" in screen.text()
    assert "hi\ralice" not in screen.buffer.getvalue()
    assert app.log[-1] == "mallory: hi\\x0dalice: I resign\\x08"


def test_the_status_area_shows_names_as_text() -> None:
    with create_pipe_input() as pipe:
        app = ClientApp(Look(unicode=False, color=False), "tester", input=pipe, output=Screen())
        w = Wired(app)
        info = table_info([seat(0, name="tester"), seat(1, name="ali"), seat(2, "bot")])
        info["seats"][1]["name"] = "ali\x1b]2;x\x07\u202e"  # past the schema: as sent
        app.on_message({"type": "table", "table": info, "view": view(),
                        "you": {"seat": 0, "spectator": False}})
    status = app.status_text()
    assert "ali\\x1b]2;x\\x07\\u202e" in status
    assert acted_on(status.replace("\n", "")) == []
    assert w.app is app


# -- names kept in a file -------------------------------------------------------------------
# The session and login files hold names a server gave: they reach the terminal before
# the screen is taken over, on stderr and in questions.


def test_names_from_the_session_file_are_shown_as_text(tmp_path: Path) -> None:
    store, address = TokenStore(tmp_path / "sessions.json"), "example.org"
    server = server_key(address)
    store.save(session_key(server, "ali"), "token", "ali\x1b]0;PWNED\x07\u202e")
    said = claim_session(argparse.ArgumentParser(), store, address, "ali", fresh=True,
                         take_over=False)
    assert said is not None and "ali\\x1b]0;PWNED\\x07\\u202e" in said
    assert acted_on(said) == []

    store.save_login(server, "Ayşe\x1b[2J", "one")
    store.save_login(server, "Mehmet\x9b2J", "two")
    asked: list[str] = []

    def ask(question: str) -> str:
        asked.append(question)
        return ""

    name_for(store, address, ask)
    assert "Mehmet\\x9b2J, Ayşe\\x1b[2J" in asked[0] and acted_on(asked[0]) == []
