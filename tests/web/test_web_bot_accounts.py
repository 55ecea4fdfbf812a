"""The web client shows a bot account (a program registered with `register.bot`) as a
bot: its seat and its profile carry the bot tag the server's bots have, and the lobby
counts it among the bots. A real server process, a TCP client for the bot, headless Chromium."""

from __future__ import annotations

import socket

from browser_kit import Page
from test_web_browser import TcpPlayer
from web_fixtures import driver, page, server, viewport  # noqa: F401
from web_kit import WebServer


class AccountPlayer(TcpPlayer):
    """`TcpPlayer` with the `accounts` feature, so it may register."""

    def __init__(self, port: int, name: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buffer = b""
        self.seen = []
        self.moves = []
        self.next_id = 1
        self.send({"type": "hello", "protocol": 2, "name": name,
                   "features": ["accounts", "chat", "rematch"]})
        self.welcome = self.until(lambda m: m["type"] == "welcome")


def test_a_bot_accounts_seat_is_tagged_as_a_bot(page: Page, server: WebServer) -> None:
    page.open(server.url)
    page.name_and_enter("Zeynep")
    robo = AccountPlayer(server.tcp_port, "Robo")
    try:
        account = robo.request({"type": "register", "password": "correct horse battery",
                                "bot": True})
        assert account["bot"] is True
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
        assert "Robo" in bot_seat.text
        tags = bot_seat.find_elements("css selector", ".tag.bot")
        assert [tag.text for tag in tags] == ["bot"]
        own = page.css('.seat-row[data-seat="1"]')
        assert own.find_elements("css selector", ".tag.bot") == []

        # Its profile is headed as a bot's.
        page.driver.execute_script("location.hash = '#profile=Robo'")
        page.wait_screen("profile")
        page.wait_css("#profile-totals")
        title = page.css("#profile-title")
        assert "Robo" in title.text
        assert [t.text for t in title.find_elements("css selector", ".tag.bot")] == ["bot"]
    finally:
        robo.close()
