"""A player kicked from the page, in a real browser (headless Chromium) against a real
server process: the page says why and for how long, goes back to the name screen
instead of coming back as a new player, and a return within the kick is refused so.
Its own server: a kick keeps the page's address (loopback) out."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_kit import Page
from process_output import add_operator
from test_web_accounts import OPERATOR, OPERATOR_PASSWORD, Player
from web_fixtures import ROOMY, driver, page  # noqa: F401
from web_kit import WebServer, served

KICKED = ("An operator removed you from the server. Reason: flooding the chat. "
          "You may come back in 5 minutes.")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    db = tmp_path_factory.mktemp("store") / "pisyedili.db"
    add_operator(str(db), OPERATOR, OPERATOR_PASSWORD)
    with served(*ROOMY, "--db", str(db), "--operator", OPERATOR, "--kick-seconds",
                "300") as srv:
        yield srv


@pytest.fixture(scope="module")
def viewport() -> tuple[int, int]:
    return (1280, 900)


def test_a_kicked_page_says_why_and_does_not_come_back(
        page: Page, server: WebServer, tmp_path: Path) -> None:
    operator = Player(server.tcp_port, "x", source="127.0.0.8")
    try:
        operator.request({"type": "login", "name": OPERATOR, "password": OPERATOR_PASSWORD})
        page.open(server.url)
        page.name_and_enter("Bora")
        page.wait_screen("lobby")
        operator.request({"type": "kick", "name": "Bora", "reason": "flooding the chat"})
        page.wait_screen("name")
        page.wait(lambda d: page.text("#name-error") == KICKED, what="why, and how long")
        assert page.state("me") is None and page.state("status") == "stopped"
        page.driver.save_screenshot(str(tmp_path / "kicked.png"))

        told = page.log_text().count(KICKED)
        page.click("#connect")  # back too soon, as "Bora" still: refused, with the time left
        page.wait(lambda d: page.log_text().count(KICKED) > told
                  and page.state("status") == "stopped", what="the refusal of a return")
        assert page.text("#name-error") == KICKED
        assert page.body("screen") == "name" and page.state("me") is None
    finally:
        operator.close()
