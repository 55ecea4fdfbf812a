"""Take the README's screenshots of the web client: `python tests/web/screenshots.py`.

Two real servers and the browser the tests use. The first is seeded, so the deals are
the same each time, with a long pause after a deal, so its results stay up: the lobby
with a few tables, a table in the middle of a deal, the lost-connection banner over it,
a deal's results (1280x800), and a deal on a 360-px phone. The second plays at test
speed so that matches finish: the leaderboard after two rated matches, a player's
profile, and the replay viewer a few moves into a deal. The PNGs go to
docs/screenshots/, squeezed by `pngquant` where it is installed (a palette of 256
colours: a screenshot of flat panels loses nothing a reader sees). Not a test (pytest
does not collect it): it writes into the repository.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, as pytest has it

from browser_kit import Page, chromium, set_viewport
from test_web_accounts import rated_match
from test_web_browser import TcpPlayer
from test_web_table import DEAD_PATH
from web_kit import served

OUT = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
SEED = "11"
SHOTS = ("lobby", "table", "banner", "results", "phone", "ladder", "profile", "replay")


def mid_deal(page: Page, turns: int) -> None:
    """Play at least `turns` of our decisions, until one with a card to play is up."""
    played = 0
    while True:
        page.wait(lambda d: page.body("turn") == "mine", what="our turn")
        if played >= turns and page.all("#hand button.card.legal"):
            return
        page.take_turn()
        played += 1


def save(page: Page, name: str, folder: Path = OUT) -> Path:
    """The page as it stands: no focus ring, and no card caught in the middle of a flight."""
    page.driver.execute_script("document.activeElement && document.activeElement.blur()")
    page.wait(lambda d: not d.execute_script("return document.querySelector('#flights .flying')"),
              what="the flights to land")
    path = folder / f"{name}.png"
    page.driver.save_screenshot(str(path))
    return path


def lost_link(page: Page) -> None:
    """The banner of a lost connection: the tries fail until Try now goes to the server."""
    d = page.driver
    d.execute_script("const w = window.pisyedili.wire; w.realUrl = w.url;"
                     f"w.url = w.url.replace(/\\/ws$/, '/{DEAD_PATH}'); w.ws.close();")
    page.wait(lambda _: page.all("#banner-countdown[data-at]"), what="the banner's countdown")
    save(page, "banner")
    d.execute_script("const w = window.pisyedili.wire; w.url = w.realUrl;"
                     "document.getElementById('retry-now').click()")
    page.wait(lambda _: page.body("link") == "welcomed" and page.body("banner") == "none",
              what="the reconnect")


def table_shots(d: Any) -> None:
    """The lobby, a table, the banner, a deal's results and the phone, on a seeded server."""
    with served("--seed", SEED, "--deal-pause", "3600") as server:
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
        save(page, "lobby")

        page.driver.get(server.url + "?play=1&name=Ayşe&rules=classic&bots=3&level=medium")
        page.wait_screen("table")
        mid_deal(page, 3)
        d.execute_script("window.scrollTo(0, 0)")
        save(page, "table")
        lost_link(page)

        page.play_until(lambda: page.body("phase") == "over")
        page.wait_css("#deal-result").location_once_scrolled_into_view  # noqa: B018
        save(page, "results")

        set_viewport(d, 360, 740, mobile=True)
        d.execute_script("localStorage.clear()")  # another player, on a phone
        page.driver.get(server.url + "?play=1&name=Efe&rules=cardiva&bots=2&level=easy")
        page.wait_screen("table")
        mid_deal(page, 2)
        # The top of the page, as the player meets it: the hand and the move controls
        # are on screen there (the dock at the bottom).
        d.execute_script("document.activeElement.blur(); window.scrollTo(0, 0)")
        save(page, "phone")
        for host in hosts:
            host.close()


def page_shots(d: Any) -> None:
    """The leaderboard, a profile and a replay, after two rated matches have ended."""
    set_viewport(d, 1280, 800)
    with served("--seed", SEED, "--max-tables-per-address", "100") as server:
        players = [rated_match(server.tcp_port, name)[0] for name in ("Zeynep", "Mehmet")]
        page = Page(d)
        d.get("about:blank")
        d.execute_cdp_cmd("Storage.clearDataForOrigin", {
            "origin": server.url.rstrip("/"), "storageTypes": "local_storage"})
        page.open(server.url + "#ladder")
        field = page.wait_css("#name-input")
        field.clear()
        field.send_keys("Ayşe")
        page.click("#connect")
        page.wait_screen("ladder")
        page.click("#ladder-provisional")  # two matches settle nobody: show them all
        page.wait_css("#ladder-table")
        save(page, "ladder")

        page.click('#ladder-table a.name-link[href="#profile=Zeynep"]')
        page.wait_screen("profile")
        page.wait_css("#profile-recent")
        save(page, "profile")

        page.click("#profile-recent a.replay-link")
        page.wait_screen("replay")
        page.wait(lambda _: page.all("#replay-hands"), what="the first position")
        for n in range(1, 7):
            page.click("#replay-forward")
            page.wait(lambda _: page.css("#replay").get_attribute("data-index") == str(n),  # noqa: B023
                      what=f"move {n}")
        save(page, "replay")
        for player in players:
            player.close()


def squeeze(path: Path) -> None:
    """A 256-colour palette (pngquant), when the tool is here; else the PNG as taken."""
    tool = shutil.which("pngquant")
    if tool:
        subprocess.run([tool, "--force", "--skip-if-larger", "--speed", "1", "--quality",
                        "70-95", "--output", str(path), str(path)], check=False)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with chromium(1280, 800) as d:
        table_shots(d)
        page_shots(d)
    for name in SHOTS:
        squeeze(OUT / f"{name}.png")
        print(OUT / f"{name}.png", (OUT / f"{name}.png").stat().st_size)


if __name__ == "__main__":
    main()
