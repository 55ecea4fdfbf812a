"""Friction a new player met in the browser (issue 38), in a real browser (headless
Chromium) against a real server process: a finished table leaves the lobby, a login is
said once, a returning player meets no protocol words, and a table opened without a name
is named in the page's language.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from browser_kit import Page
from catalog_kit import build_all
from test_web_accounts import Player, fill, play_out, register_in_page, registered_player
from test_web_i18n import html, set_field
from web_fixtures import ROOMY, driver, page, viewport  # noqa: F401
from web_kit import WebServer, served

from pisyedili.client.render.lobby import lobby

PASSWORD = "a long password"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    """A server with accounts (a real store), serving the catalogs as built now."""
    build_all()
    db = tmp_path_factory.mktemp("store") / "pisyedili.db"
    with served(*ROOMY, "--db", str(db)) as srv:
        yield srv


def row_selector(table: int) -> str:
    return f"#lobby-list [data-table='{table}']"


def test_a_finished_table_leaves_the_lobby(page: Page, server: WebServer) -> None:
    """A table whose match is over takes no one: it is listed while it plays, and no
    longer (no row with a Join button that does nothing) once the match has ended."""
    page.open(server.url)
    page.name_and_enter("Seyirci")
    tcp = Player(server.tcp_port, "Biten")
    try:
        table = tcp.request({"type": "create_table", "rules": "classic", "seats": 2,
                             "options": {"match_end": "deals:1", "turn_seconds": 0}})
        table_id = int(table["table"]["id"])
        tcp.request({"type": "add_bot", "seat": 1, "level": "easy"})
        page.wait(lambda d: page.all(row_selector(table_id)), what="the table listed")
        tcp.request({"type": "start"})
        play_out(tcp)
        # The server still lists it (its players may ask for a rematch); the page knows it
        # is over, and shows it no more.
        page.wait(lambda d: page.state(
            f"lobby.tables.find(r => r.id === {table_id})?.phase") == "over",
            what="the lobby row to say the match is over")
        assert page.all(row_selector(table_id)) == []
    finally:
        tcp.close()


def test_the_terminal_lobby_lists_no_finished_table() -> None:
    rows = [{"id": 1, "name": "Açık", "rules": "classic", "seats": 2, "taken": 1,
             "phase": "waiting"},
            {"id": 2, "name": "Biten", "rules": "classic", "seats": 2, "taken": 2,
             "phase": "over"}]
    text = "\n".join("".join(part for _, part in line) for line in lobby(rows))
    assert "Açık" in text
    assert "Biten" not in text


def test_a_login_is_said_once(page: Page, server: WebServer) -> None:
    """The account panel names the account once: its status line, no second line."""
    registered_player(server.tcp_port, "Bora", PASSWORD).close()
    page.open(server.url)
    page.name_and_enter("Misafir")
    fill(page, {"#login-name": "Bora", "#login-password": PASSWORD})
    page.click("#login")
    page.wait(lambda d: page.all("#account-status"), what="logged in")
    assert page.text("#account-panel").count("Logged in as Bora") == 1


def test_a_returning_player_meets_no_protocol_words(page: Page, server: WebServer) -> None:
    """The kept session has expired (the server knows its token no more) and the login is
    kept: the page comes back with no refusal in red, and greets the account's name, not
    the guest's name it had for a moment."""
    page.open(server.url)
    page.name_and_enter("Alma")
    register_in_page(page, PASSWORD)
    page.driver.execute_script(
        "localStorage.setItem('pisyedili.session', arguments[0])",
        json.dumps({"name": "Alma", "token": "an expired session's token"}))
    page.open(server.url)
    page.wait(lambda d: page.all("#account-status"), what="logged in by the kept login")
    page.wait(lambda d: "Welcome" in page.log_text(), what="the greeting")
    log = page.log_text()
    assert page.all("#log li.error") == [], log
    assert "token" not in log
    assert "Welcome to web test, Alma." in log
    assert "Alma 2" not in log
    assert page.text("#account-panel").count("Logged in as Alma") == 1


def test_a_table_opened_without_a_name_is_named_in_the_page_language(
        page: Page, server: WebServer) -> None:
    """The server sends the host's name (`named_for`) beside its English name, for old
    clients; the page words it in Turkish."""
    page.open(server.url)
    page.name_and_enter("Lale")
    set_field(page, "#lang-choice", "tr")
    page.wait(lambda d: html(page) == ("tr", "ltr"), what="the page in Turkish")
    tcp = Player(server.tcp_port, "Deniz")
    try:
        info = tcp.request({"type": "create_table", "rules": "classic", "seats": 3})["table"]
        assert info["name"] == "Deniz's table"
        assert info["named_for"] == "Deniz"
        row = row_selector(int(info["id"]))
        page.wait(lambda d: page.all(row), what="the table listed")
        page.wait(lambda d: page.text(f"{row} strong") == "Masa: Deniz",
                  what="the name in Turkish")
        page.click(f"{row} button.watch")
        page.wait_screen("table")
        page.wait(lambda d: page.all("#table-title"), what="the table we watch")
        assert page.text("#table-title") == "Masa: Deniz"
        page.click("#leave")
        page.wait_screen("lobby")
        tcp.request({"type": "leave_table"})
        named = tcp.request({"type": "create_table", "rules": "classic", "seats": 2,
                             "name": "Akşam masası"})
        assert "named_for" not in named["table"]
    finally:
        tcp.close()


def test_the_terminal_lobby_words_a_default_name_from_the_host() -> None:
    rows = [{"id": 4, "name": "the server's words", "named_for": "Deniz", "rules": "classic",
             "seats": 2, "taken": 1, "phase": "waiting"}]
    text = "\n".join("".join(part for _, part in line) for line in lobby(rows))
    assert "Deniz's table" in text
    assert "the server's words" not in text
