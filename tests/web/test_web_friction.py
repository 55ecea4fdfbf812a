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
from test_web_accounts import fill, register_in_page, registered_player
from web_fixtures import ROOMY, driver, page, viewport  # noqa: F401
from web_kit import WebServer, served

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
