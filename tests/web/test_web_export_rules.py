"""The browser's counterparts of terminal commands, in a real browser (headless
Chromium) against a real server process: the replay viewer's Download (`/export`).

The export is compared with what the terminal's own code writes for the same match,
fetched over a real TCP connection.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_kit import Page, chromium, set_viewport
from test_web_accounts import Player, enter_name, finished_match
from web_kit import WebServer, served

from pisyedili.client import replay

Msg = dict[str, Any]


@pytest.fixture(scope="module")
def server() -> Iterator[WebServer]:
    with served("--max-tables-per-address", "100", "--max-sessions-per-address", "100",
                "--max-per-address", "100") as srv:
        yield srv


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with chromium(1280, 900) as d:
        yield d


@pytest.fixture
def page(driver: Any, server: WebServer, tmp_path: Path) -> Iterator[Page]:
    """A fresh visitor whose downloads land in `tmp_path`."""
    set_viewport(driver, 1280, 900)
    driver.get("about:blank")
    driver.execute_cdp_cmd("Storage.clearDataForOrigin", {
        "origin": server.url.rstrip("/"), "storageTypes": "local_storage"})
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {
        "behavior": "allow", "downloadPath": str(tmp_path)})
    driver.get_log("browser")
    p = Page(driver)
    yield p
    assert p.errors() == [], "the page logged errors"


def terminal_export(port: int, match_id: int, path: Path) -> str:
    """The file the terminal's `/export ID FILE` writes: its pages fetched as
    `App.fetch_match` fetches them, joined and saved by `client/replay.py`."""
    tcp = Player(port, "Exporter")
    try:
        replies: list[Msg] = []
        deal, start, deals = 1, 0, 1
        while deal <= deals:
            ask: Msg = {"type": "replay", "match": match_id, "deal": deal}
            if start:
                ask["from"] = start
            reply = tcp.request(ask)
            replies.append(reply)
            deals = int(reply["match"]["deals"])
            got = int(reply["from"]) + len(reply["record"]["moves"])
            if got < int(reply["move_count"]) and got > start:
                start = got
            else:
                deal, start = deal + 1, 0
    finally:
        tcp.close()
    replay.save(replay.from_replies(replies), path)
    return path.read_text(encoding="utf-8")


def test_the_replay_viewer_downloads_the_terminals_export_file(
        page: Page, server: WebServer, tmp_path: Path) -> None:
    match = finished_match(server.tcp_port, "Tuna", deals=2)
    page.open(f"{server.url}#replay={match}")
    enter_name(page, "Viewer")
    page.wait_screen("replay")
    page.wait(lambda d: page.all("#replay-hands"), what="the first position")
    link = page.wait_css("#replay-download")
    assert link.get_attribute("download") == f"pisyedili-match-{match}.json"
    assert link.text == "Download"
    # The page's CSP lets it fetch nothing but its server, blob: URLs included, so the
    # file is read from the Blob the link is made of.
    page.driver.execute_script(
        "const make = URL.createObjectURL;"
        "URL.createObjectURL = (blob) => { window.exported = blob; return make.call(URL, blob); };")
    page.click("#replay-download")
    page.wait(lambda d: page.css("#replay-download").get_attribute("data-ready") == "yes",
              what="the export file made")
    href = page.css("#replay-download").get_attribute("href")
    assert href.startswith("blob:")
    text = page.driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.exported.text().then(done);")
    assert isinstance(text, str)
    browser_file = tmp_path / "browser.json"
    browser_file.write_text(text, encoding="utf-8")
    loaded = replay.load(browser_file)  # the loader `pisyedili replay FILE` uses
    assert loaded.id == match and len(loaded.deals) == 2
    expected = terminal_export(server.tcp_port, match, tmp_path / "terminal.json")
    assert json.loads(text) == json.loads(expected)
    assert text == expected  # laid out the same too: one deal a line
    # Every deal's seed, a 64-bit integer, came through with every digit.
    assert [d["record"]["seed"] for d in json.loads(text)["deals"]] == \
        [d["record"]["seed"] for d in json.loads(expected)["deals"]]
    # The click saved the same file where the browser puts its downloads.
    saved = tmp_path / f"pisyedili-match-{match}.json"
    page.wait(lambda d: saved.exists() and saved.read_text(encoding="utf-8") == expected,
              what="the downloaded file")
