"""The web client shows a bot account (a program registered with `register.bot`) as a
bot: its seat, its profile, its ladder row and its seat in a replay carry the bot tag
the server's bots have, and the lobby counts it among the bots. A real server process,
a TCP client for the bot, headless Chromium."""

from __future__ import annotations

from typing import Any

from browser_kit import Page
from test_web_accounts import Player, play_out
from web_fixtures import driver, page, server, viewport  # noqa: F401
from web_kit import WebServer

PASSWORD = "correct horse battery"


def bot_account(port: int, name: str) -> Player:
    """A TCP client that registered `name` as a bot's account."""
    tcp = Player(port, name)
    account = tcp.request({"type": "register", "password": PASSWORD, "bot": True})
    assert account["bot"] is True
    return tcp


def bot_tags(element: Any) -> list[str]:
    """The bot tags inside a page element (a Selenium `WebElement`)."""
    return [tag.text for tag in element.find_elements("css selector", ".tag.bot")]


def test_a_bot_accounts_seat_and_profile_are_tagged_as_a_bot(page: Page,
                                                               server: WebServer) -> None:
    page.open(server.url)
    page.name_and_enter("Zeynep")
    robo = bot_account(server.tcp_port, "Robo")
    try:
        snap = robo.request({"type": "create_table", "rules": "classic", "seats": 2,
                             "name": "Robo's game"})
        table_id = snap["table"]["id"]
        row = page.wait_css(f'.lobby-row[data-table="{table_id}"]')
        assert "(1 bot)" in row.text
        row.find_element("css selector", "button.join").click()
        page.wait_screen("table")
        robo.until(lambda m: m["type"] == "table_update"
                   and m["table"]["seats"][1].get("name") == "Zeynep")
        bot_seat = page.css('.seat-row[data-seat="0"]')
        assert "Robo" in bot_seat.text and bot_tags(bot_seat) == ["bot"]
        assert bot_tags(page.css('.seat-row[data-seat="1"]')) == []  # a person's seat

        page.driver.execute_script("location.hash = '#profile=Robo'")
        page.wait_screen("profile")
        page.wait_css("#profile-totals")
        title = page.css("#profile-title")
        assert "Robo" in title.text and bot_tags(title) == ["bot"]
    finally:
        robo.close()


def test_a_bot_accounts_ladder_row_and_replay_seat_are_tagged(page: Page,
                                                              server: WebServer) -> None:
    makine = bot_account(server.tcp_port, "Makine")
    try:
        makine.request({"type": "create_table", "rules": "classic", "seats": 2,
                        "rated": True, "options": {"match_end": "deals:1",
                                                   "turn_seconds": 0}})
        makine.request({"type": "add_bot", "seat": 1, "level": "easy"})
        makine.request({"type": "start"})
        play_out(makine)
        for _ in range(50):  # the store keeps the match a moment after its last update
            mine = makine.request({"type": "history", "of": "mine"})
            if mine["matches"]:
                break
            makine.poll(0.1)
        match = int(mine["matches"][0]["id"])
    finally:
        makine.close()
    page.open(server.url)
    page.name_and_enter("Umay")
    page.driver.execute_script("location.hash = '#ladder'")
    page.click("#ladder-provisional")  # one rated match settles nobody's rating
    row = page.wait_css('#ladder-table tr[data-name="Makine"]')
    assert bot_tags(row) == ["bot"]
    assert bot_tags(page.css('#ladder-table tr[data-name="bot (easy)"]')) == []
    page.driver.execute_script(f"location.hash = '#replay={match}'")
    page.wait_screen("replay")
    seat = page.wait_css('#replay-hands .replay-seat[data-seat="0"]')
    assert "Makine" in seat.text and bot_tags(seat) == ["bot"]
    assert bot_tags(page.css('#replay-hands .replay-seat[data-seat="1"]')) == []
