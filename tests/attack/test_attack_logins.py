"""A saved login belongs to one name: friends sharing one computer (one home folder,
one `sessions.json`) each keep their own login and session on a server, and a client
started under another name never logs in to someone else's account, nor takes their
seat or their session.

Real processes throughout: the server on loopback with its own database, and each
player's `pisyedili` with a pipe for its keyboard (test_client_connect's kit), all
sharing one state folder; the web client in headless Chromium, whose one browser
profile is the page's shared computer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_kit import Page, fresh_page
from test_client_connect import Client, client, server
from test_web_accounts import Player
from web_fixtures import ROOMY, driver  # noqa: F401
from web_kit import WebServer, served

PASSWORD = "correct horse battery"
CONNECTED = r"connected to .* as {}\b"
LOGGED_IN = r"logged in as {}\b"
GONE = "disconnected for good"


def saved(tmp_path: Path) -> dict[str, Any]:
    data = json.loads((tmp_path / "state" / "pisyedili" / "sessions.json").read_text("utf-8"))
    assert isinstance(data, dict)
    return data


def register(player: Client, name: str) -> None:
    player.out.wait_for(CONNECTED.format(name))
    player.type("/register")
    player.type(PASSWORD)
    player.type(PASSWORD)
    player.out.wait_for(LOGGED_IN.format(name))


def test_another_name_never_uses_a_saved_login_nor_takes_its_seat(tmp_path: Path) -> None:
    """Two accounts (Ayse, Mehmet) and a third name (Zeynep) on one computer: Zeynep is a
    guest of her own, at Ayse's table beside her, and Mehmet registers his own account,
    while Ayse plays on, still connected; without `--name` the login used last is used."""
    with server(tmp_path) as (_, port):
        target = f"127.0.0.1:{port}"
        with client(tmp_path, target, "--name", "Ayse") as ayse:
            register(ayse, "Ayse")
            ayse.type("/create classic 3")
            ayse.out.wait_for(r"seat 1: Ayse")
            with client(tmp_path, target, "--name", "Zeynep") as zeynep:
                zeynep.out.wait_for(CONNECTED.format("Zeynep"))
                zeynep.type("/join 1")
                zeynep.out.wait_for(r"seat 2: Zeynep")
                ayse.out.wait_for(r"seat 2: Zeynep")  # Ayse, at her seat, sees her come
                ayse.type("/say still here")
                zeynep.out.wait_for(r"Ayse.*still here")
                with client(tmp_path, target, "--name", "Mehmet") as mehmet:
                    register(mehmet, "Mehmet")
                    mehmet.type("/quit")
                    assert mehmet.exit_status() == 0
                zeynep.type("/say me too")
                ayse.out.wait_for(r"Zeynep.*me too")
                zeynep.type("/leave")
                zeynep.type("/quit")
                assert zeynep.exit_status() == 0
                seen = zeynep.out.text
            assert "logged in as" not in seen and GONE not in seen, seen
            assert ayse.proc.poll() is None and GONE not in ayse.out.text, ayse.out.text
            logins = saved(tmp_path)["@logins"][target]
            assert sorted(entry["name"] for entry in logins.values()) == ["Ayse", "Mehmet"]
            sessions = {v["name"] for k, v in saved(tmp_path).items() if not k.startswith("@")}
            assert sessions == {"Ayse"}, sessions  # the others' quits dropped their own

            # Each account's own name still logs in by itself, with its own login; no
            # `--name` (and no terminal to ask) takes the login used last: Mehmet's.
            for args in (("--name", "Mehmet"), ()):
                with client(tmp_path, target, *args) as again:
                    again.out.wait_for(LOGGED_IN.format("Mehmet"))
                    again.type("/quit")
                    assert again.exit_status() == 0
            ayse.type("/say and still here")
            ayse.out.wait_for(r"Ayse.*and still here")
            assert ayse.proc.poll() is None and GONE not in ayse.out.text, ayse.out.text
            ayse.type("/leave")
            ayse.type("/quit")
            assert ayse.exit_status() == 0


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    db = tmp_path_factory.mktemp("store") / "pisyedili.db"
    with served(*ROOMY, "--db", str(db)) as srv:
        yield srv


@pytest.fixture(scope="module")
def viewport() -> tuple[int, int]:
    return (1280, 800)


def test_the_page_logs_in_only_the_name_it_connected_as(
        driver: Any, web_server: WebServer) -> None:  # noqa: F811 (the fixture, by name)
    """The browser keeps Ayse's login, and Zeynep's guest session from an earlier visit
    that the server has forgotten since: the page comes back as the guest Zeynep, and
    Ayse, at her seat elsewhere, keeps her session."""
    ayse = Player(web_server.tcp_port, "Ayse")
    login = ayse.request({"type": "register", "password": PASSWORD})["login"]
    ayse.request({"type": "create_table", "rules": "classic", "seats": 3})
    try:
        page: Page = fresh_page(driver, web_server.url)
        page.open(web_server.url)
        page.wait_screen("name")
        page.driver.execute_script(
            "localStorage.setItem('pisyedili.login', JSON.stringify("
            "{name: 'Ayse', token: arguments[0]}));"
            "localStorage.setItem('pisyedili.session', JSON.stringify("
            "{name: 'Zeynep', token: 'a session the server forgot'}));", login)
        page.open(web_server.url)
        page.wait_screen("lobby")
        # Replies come in order: once this one is in, so is any login the page sent first.
        assert page.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "window.pisyedili.wire.request({type: 'lobby_subscribe'}).then(r => done(r.type));"
        ) == "lobby"
        assert page.state("me.name") == "Zeynep"
        assert page.driver.execute_script("return window.pisyedili.acc.registered") is False
        assert page.all("#register-form") and not page.all("#account-status")
        stored = page.driver.execute_script("return localStorage.getItem('pisyedili.login')")
        assert json.loads(stored)["name"] == "Ayse"  # kept for Ayse, unused by Zeynep
        ayse.request({"type": "lobby_subscribe"})  # her connection still answers
        assert all(m["type"] != "replaced" for m in ayse.seen), ayse.seen[-5:]
        assert page.errors() == []
    finally:
        ayse.sock.close()
