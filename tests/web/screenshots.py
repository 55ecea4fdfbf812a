"""Take the README's screenshots of the web client: `python tests/web/screenshots.py`.

A real server (seeded, so the deals are the same each time; a long pause after a deal,
so its results stay up) and the browser the tests use: the lobby with a few tables, a
table in the middle of a deal, a deal's results (1280x800), and a deal on a 360-px phone.
The PNGs go to docs/screenshots/. Not a test (pytest does not collect it): it writes
into the repository.
"""

from __future__ import annotations

from pathlib import Path

from browser_kit import Page, chromium, set_viewport
from test_web_browser import TcpPlayer
from web_kit import served

OUT = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
SEED = "11"


def mid_deal(page: Page, turns: int) -> None:
    """Play at least `turns` of our decisions, until one with a card to play is up."""
    played = 0
    while True:
        page.wait(lambda d: page.body("turn") == "mine", what="our turn")
        if played >= turns and page.all("#hand button.card.legal"):
            return
        page.take_turn()
        played += 1


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with served("--seed", SEED, "--deal-pause", "3600") as server, chromium(1280, 800) as d:
        page = Page(d)
        hosts = [TcpPlayer(server.tcp_port, name) for name in ("Mehmet", "Zeynep", "Deniz")]
        hosts[0].request({"type": "create_table", "rules": "classic", "seats": 4,
                          "name": "Friday night", "options": {"match_end": "deals:4"}})
        hosts[0].request({"type": "add_bot", "seat": 1, "level": "medium"})
        hosts[1].request({"type": "create_table", "rules": "cardiva", "seats": 3,
                          "options": {"ten": "bounce", "match_end": "points:101"}})
        hosts[2].request({"type": "create_table", "rules": "classic", "seats": 2,
                          "name": "Deniz vs. the bot", "private": True})
        hosts[2].request({"type": "add_bot", "seat": 1, "level": "hard"})
        hosts[2].request({"type": "start"})

        page.open(server.url)
        page.name_and_enter("Ayşe")
        page.wait(lambda _: len(page.all(".lobby-row")) == 3, what="three tables")
        hosts[1].request({"type": "chat", "text": "cardiva, anyone? iyi oyunlar!",
                          "scope": "lobby"})
        page.wait(lambda _: "anyone" in page.css("#chat-list").text, what="the chat line")
        d.save_screenshot(str(OUT / "lobby.png"))

        page.driver.get(server.url + "?play=1&name=Ayşe&rules=classic&bots=3&level=medium")
        page.wait_screen("table")
        mid_deal(page, 3)
        d.execute_script("document.activeElement.blur(); window.scrollTo(0, 0)")
        d.save_screenshot(str(OUT / "table.png"))

        page.play_until(lambda: page.body("phase") == "over")
        page.wait_css("#deal-result").location_once_scrolled_into_view  # noqa: B018
        d.save_screenshot(str(OUT / "results.png"))

        set_viewport(d, 360, 740, mobile=True)
        d.execute_script("localStorage.clear()")  # another player, on a phone
        page.driver.get(server.url + "?play=1&name=Efe&rules=cardiva&bots=2&level=easy")
        page.wait_screen("table")
        mid_deal(page, 2)
        d.execute_script("document.activeElement.blur();"
                         "document.getElementById('hand').scrollIntoView({block: 'end'})")
        d.save_screenshot(str(OUT / "phone.png"))
        for host in hosts:
            host.close()
    for name in ("lobby", "table", "results", "phone"):
        print(OUT / f"{name}.png")


if __name__ == "__main__":
    main()
