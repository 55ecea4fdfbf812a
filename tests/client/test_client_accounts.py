"""The terminal client's account, rating and operator commands: parsing, the login kept
per server (a token, never the password), the warning before a password goes out in
clear, and `/register`, `/login`, `/logout`, `/top`, `/profile` typed into the real app
against a real server with accounts on loopback."""

from __future__ import annotations

import asyncio
import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput
from test_client_app import in_log, run, until
from twisted.internet.endpoints import TCP4ClientEndpoint, serverFromString

from pisyedili.client.app import ClientApp
from pisyedili.client.cli import default_name, insecure_target, name_for, server_key
from pisyedili.client.offline import wire
from pisyedili.client.parse import Context, Invalid, Request, Secret, parse_input
from pisyedili.client.render import Look
from pisyedili.client.token_store import Login, ServerLogins, TokenStore
from pisyedili.server.people.accounts import CHEAP, AccountSettings
from pisyedili.server.service.assembly import make_factory
from pisyedili.server.store import MEMORY, Archive
from pisyedili.server.store.sqlite import SqliteStore

PASSWORD = "correct horse battery"
CTX = Context()


@pytest.mark.parametrize(("typed", "parsed"), [
    ("/register", Secret("register")),
    ("/create classic 3 --rated", Request({"type": "create_table", "rules": "classic",
                                           "seats": 3, "rated": True})),
    ("/login Ayşe", Secret("login", "Ayşe")),
    ("/passwd", Secret("passwd")),
    ("/logout", Request({"type": "logout"})),
    ("/logout everywhere", Request({"type": "logout", "everywhere": True})),
    ("/top", Request({"type": "leaderboard", "rules": "classic"})),
    ("/top cardiva 5", Request({"type": "leaderboard", "rules": "cardiva", "limit": 5})),
    ("/profile Ayşe", Request({"type": "profile", "name": "Ayşe"})),
    ("/kick Troll spamming the lobby",
     Request({"type": "kick", "name": "Troll", "reason": "spamming the lobby"})),
    ("/mute Troll 30", Request({"type": "mute", "name": "Troll", "minutes": 30})),
    ("/ban 203.0.113.0/24 60 flood",
     Request({"type": "ban", "network": "203.0.113.0/24", "minutes": 60, "reason": "flood"})),
    ("/ban Troll", Request({"type": "ban", "name": "Troll"})),
    ("/unban 2001:db8::/48", Request({"type": "unban", "network": "2001:db8::/48"})),
    ("/closetable 7 bad name", Request({"type": "close_table", "table": 7,
                                        "reason": "bad name"})),
    ("/announce restart at ten", Request({"type": "announce", "text": "restart at ten"})),
])
def test_account_and_operator_commands_parse(typed: str, parsed: object) -> None:
    assert parse_input(typed, CTX) == parsed


@pytest.mark.parametrize("typed", ["/login", "/register secret123", "/login Ayşe pw",
                                   "/top classic cardiva", "/closetable x", "/unmute",
                                   "/logout now", "/profile"])
def test_a_password_is_never_taken_on_the_command_line(typed: str) -> None:
    assert isinstance(parse_input(typed, CTX), Invalid)


def token_of(login: Login | None) -> str | None:
    return None if login is None else login.token


def test_a_login_is_kept_per_server_and_name_beside_the_sessions(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "state" / "sessions.json")
    store.save("example.org:7707", "session-token", "Ayşe")
    logins = ServerLogins(store, "example.org:7707", "AYŞE")
    assert logins.mine() is None
    logins.save("Ayşe", "login-token")
    assert logins.mine() == logins.load("ayşe")  # a name the server takes for it
    assert token_of(logins.mine()) == "login-token"
    assert ServerLogins(store, "other:7707", "Ayşe").mine() is None
    zeynep = ServerLogins(store, "example.org:7707", "Zeynep")
    assert zeynep.mine() is None  # another name never gets Ayşe's
    zeynep.save("Zeynep", "zeynep-token")
    assert token_of(logins.mine()) == "login-token"  # nor takes its place
    assert token_of(zeynep.mine()) == "zeynep-token"
    assert store.load("example.org:7707") is not None  # the session is untouched
    store.delete("example.org:7707")
    assert token_of(logins.mine()) == "login-token"  # and the login outlives it
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    logins.delete("Ayşe")
    assert logins.mine() is None and token_of(zeynep.mine()) == "zeynep-token"


def test_a_login_kept_per_server_alone_is_kept_under_its_account_name(
        tmp_path: Path) -> None:
    """A file written before logins were kept per name: its one login of a server is
    its account's, never another name's, and is moved under that name on the next save."""
    path = tmp_path / "sessions.json"
    path.write_text(json.dumps({"@logins": {
        "example.org:7707": {"name": "Ayşe", "token": "old-login", "saved_at": 5.0}}}),
        encoding="utf-8")
    store = TokenStore(path)
    assert ServerLogins(store, "example.org:7707", "Zeynep").mine() is None
    assert store.logins("example.org:7707") == [Login("Ayşe", "old-login", 5.0)]
    ServerLogins(store, "example.org:7707", "Zeynep").save("Zeynep", "new-login")
    assert token_of(ServerLogins(store, "example.org:7707", "Ayşe").mine()) == "old-login"
    saved = json.loads(path.read_text(encoding="utf-8"))["@logins"]["example.org:7707"]
    assert {entry["name"] for entry in saved.values()} == {"Ayşe", "Zeynep"}
    assert [login.name for login in store.logins("example.org:7707")] == ["Zeynep", "Ayşe"]


def test_without_a_name_the_saved_login_of_the_server_decides_it(tmp_path: Path) -> None:
    """No `--name`: the login name with no saved login; the one account saved for the
    server; among several, the player's pick, Enter (or no terminal) the one used last."""
    store, server, asked = TokenStore(tmp_path / "sessions.json"), "example.org", []

    def answer(typed: str) -> Callable[[str], str]:
        def ask(question: str) -> str:
            asked.append(question)
            return typed
        return ask

    assert name_for(store, server, answer("x")) == default_name()
    store.save_login(server_key(server), "Ayşe", "ayse-login")
    store.save_login("other.example:7707", "Deniz", "deniz-login")
    assert name_for(store, server, answer("x")) == "Ayşe"
    assert not asked  # one account: nothing to ask
    store.save_login(server_key(server), "Mehmet", "mehmet-login")
    assert name_for(store, server) == "Mehmet"  # no terminal: the one used last
    assert name_for(store, server, answer("")) == "Mehmet"
    assert "Logins saved for example.org: Mehmet, Ayşe." in asked[-1], asked
    assert "Enter: Mehmet" in asked[-1]
    assert name_for(store, server, answer(" Ayşe ")) == "Ayşe"
    assert name_for(store, server, answer("Zeynep")) == "Zeynep"  # a guest


@pytest.mark.parametrize(("address", "warned"), [
    ("localhost", None), ("127.0.0.1:7707", None), ("[::1]:7707", None),
    ("tls:example.org:7707", None), ("ssl:host=example.org:port=7707", None),
    ("unix:/run/pisyedili.sock", None), ("example.org", "example.org"),
    ("203.0.113.9:7707", "203.0.113.9"), ("tcp:example.org:7707", "example.org"),
])
def test_which_connections_warn_before_a_password(address: str, warned: str | None) -> None:
    assert insecure_target(address) == warned


def test_register_login_logout_top_and_profile_typed_in_the_app(tmp_path: Path) -> None:
    path = tmp_path / "sessions.json"

    async def scenario(reactor: Any) -> None:
        loop = asyncio.get_running_loop()
        # The passwords are hashed on the reactor's pool, which a running reactor starts;
        # this one is driven by the loop without being run.
        reactor.getThreadPool().start()
        archive = Archive(lambda: SqliteStore(MEMORY), reactor)
        await archive.open().asFuture(loop)
        factory = make_factory(reactor, name="accounts", archive=archive,
                               account_settings=AccountSettings(cost=CHEAP))
        port = await serverFromString(reactor, "tcp:0:interface=127.0.0.1").listen(  # type: ignore[no-untyped-call]
            factory).asFuture(loop)
        endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", port.getHost().port)
        try:
            with create_pipe_input() as pipe:
                app = await client(reactor, pipe, endpoint, path, insecure="example.org")
                pipe.send_text("/register\r")
                await until(app, lambda: app.secret_prompt == "New password: ", "a prompt")
                assert in_log(app, "not encrypted")  # warned before anything is typed
                pipe.send_text("1234567\r1234567\r")  # the server's rule, checked first
                await until(app, lambda: in_log(app, "at least 8 characters"), "refused")
                assert in_log(app, "nothing was sent")
                pipe.send_text("/register\r")
                await until(app, lambda: app.secret_prompt == "New password: ", "again")
                pipe.send_text(f"{PASSWORD}\r{PASSWORD}\r")
                await until(app, lambda: in_log(app, "logged in as tester"), "registered")
                saved = json.loads(path.read_text(encoding="utf-8"))
                assert saved["@logins"]["127.0.0.1"]["tester"]["name"] == "tester"
                assert PASSWORD not in path.read_text(encoding="utf-8")
                assert not any(PASSWORD in line for line in app.log)
                pipe.send_text("/top\r")
                await until(app, lambda: in_log(app, "Top 0 (classic)"), "the ladder")
                pipe.send_text("/profile tester\r")
                await until(app, lambda: in_log(app, "tester: 0 matches"), "the profile")
                pipe.send_text("/quit\r")
                await app.task  # type: ignore[attr-defined]

            # Another run with the same state file logs in by itself, by the token.
            with create_pipe_input() as pipe:
                again = await client(reactor, pipe, endpoint, path)
                await until(again, lambda: in_log(again, "logged in as tester"), "auto-login")
                assert again.state.registered and again.state.name == "tester"
                pipe.send_text("/logout\r")
                await until(again, lambda: in_log(again, "logged out"), "the logout")
                assert ServerLogins(TokenStore(path), "127.0.0.1", "tester").mine() is None
                pipe.send_text("/login tester\r")
                await until(again, lambda: again.secret_prompt is not None, "the prompt")
                pipe.send_text("wrong password\r")
                await until(again, lambda: in_log(again, "rong name, password"), "refusal")
                pipe.send_text(f"/login tester\r{PASSWORD}\r")
                await until(again, lambda: again.state.registered, "logged in again")
                pipe.send_text("/quit\r")
                await again.task  # type: ignore[attr-defined]
        finally:
            factory.shutdown()
            for session in factory.sessions.each():
                factory.sessions.forget(session)
            await port.stopListening().asFuture(loop)
            await archive.close().asFuture(loop)
            reactor.getThreadPool().stop()

    run(scenario)


async def client(reactor: Any, pipe: PipeInput, endpoint: Any, path: Path,
                 insecure: str | None = None) -> ClientApp:
    app = ClientApp(Look(unicode=False, color=False), "tester", input=pipe,
                    output=DummyOutput())
    app.logins = ServerLogins(TokenStore(path), "127.0.0.1", "tester")
    app.insecure = insecure
    link = wire(app, reactor, endpoint, "tester")
    link.start()
    task = asyncio.get_running_loop().create_task(app.run())
    app.task = task  # type: ignore[attr-defined]  # kept alive until it ends
    await until(app, lambda: link.connected, "the welcome")
    return app


def test_what_moderation_did_is_printed() -> None:
    """The operator's `ok` says what was done; a table hears who an operator removed."""
    from pisyedili.client.render import plain
    from pisyedili.client.state import ClientState

    st = ClientState(look=Look(unicode=False, color=False))
    said = st.handle({"type": "ok", "done": "kicked Troll: spam", "id": 4}, now=0.0)
    assert [plain(line) for line in said] == ["kicked Troll: spam"]
    assert st.handle({"type": "ok", "id": 5}, now=0.0) == []  # other requests: silent
    removed = st.handle({"type": "player_removed", "table": 7, "name": "Troll", "seat": 1,
                         "action": "kick", "reason": "spam"}, now=0.0)
    assert [plain(line) for line in removed] == [
        "Troll was removed by an operator (kicked: spam)"]
    banned = st.handle({"type": "player_removed", "table": 7, "name": "Troll",
                        "action": "ban"}, now=0.0)
    assert [plain(line) for line in banned] == ["Troll was removed by an operator (banned)"]
