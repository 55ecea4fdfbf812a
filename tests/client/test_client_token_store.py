"""Resume tokens on disk: the store itself, and a player coming back to their seat after
the client was gone (a closed terminal), against the real server on loopback."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from client_kit import Inbox, Msg, table
from process_output import Output
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from sibling_kit import sibling
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.logger import LogLevel, capturedLogs, formatEvent

from pisyedili.client import token_store
from pisyedili.client.app import ClientApp
from pisyedili.client.cli import RESUME_NOTE, build_parsers, remember_session, server_key
from pisyedili.client.render import Look
from pisyedili.client.token_store import TokenStore
from pisyedili.client.wire import Link

wireclient = sibling("server", "wireclient")

TIMEOUT = 10.0
POSIX = os.name == "posix"


def store_in(tmp_path: Path) -> TokenStore:
    return TokenStore(tmp_path / "state" / "sessions.json")


def warnings_of(events: list[dict[str, Any]]) -> list[str]:
    return [formatEvent(e) for e in events if e.get("log_level") == LogLevel.warn]


# ------------------------------------------------------------------------ the store


def test_save_load_delete(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    assert store.load("example.org:7707") is None  # no file yet
    store.save("example.org:7707", "tok-1", "Ayşe")
    saved = store.load("example.org:7707")
    assert saved is not None and (saved.token, saved.name) == ("tok-1", "Ayşe")
    assert saved.saved_at > 0
    store.save("example.org:7707", "tok-2", "Ayşe")
    assert store.load("example.org:7707").token == "tok-2"  # type: ignore[union-attr]
    store.delete("example.org:7707")
    assert store.load("example.org:7707") is None
    store.delete("example.org:7707")  # deleting what is not there is fine


def test_servers_have_their_own_tokens(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    store.save("a.example:7707", "tok-a", "Ayşe")
    store.save("tls:b.example:7707", "tok-b", "Mehmet")
    assert store.load("a.example:7707").token == "tok-a"  # type: ignore[union-attr]
    assert store.load("tls:b.example:7707").token == "tok-b"  # type: ignore[union-attr]
    store.delete("a.example:7707")
    assert store.load("a.example:7707") is None
    assert store.load("tls:b.example:7707") is not None
    # A second store on the same file (another client process) sees the same.
    assert TokenStore(store.path).load("tls:b.example:7707") is not None


def test_server_keys_are_normalised() -> None:
    assert server_key("Example.ORG") == server_key("example.org:7707") == "example.org:7707"
    assert server_key(" localhost:8000 ") == "localhost:8000"
    assert server_key("[::1]:7707") == server_key("[::1]") == "[::1]:7707"
    assert server_key("tls:example.org:7707") == "tls:example.org:7707"
    assert server_key("example.org:7708") != server_key("example.org")


@pytest.mark.skipif(not POSIX, reason="mode bits are POSIX; a Windows profile is private")
def test_the_file_is_readable_by_its_owner_alone(tmp_path: Path) -> None:
    store = store_in(tmp_path)
    old = os.umask(0)  # even a permissive umask must not open it up
    try:
        store.save("a:1", "tok", "Ayşe")
    finally:
        os.umask(old)
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    store.save("a:2", "tok2", "Ayşe")  # each save replaces the file: the mode stays
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600


def test_a_save_replaces_the_file_atomically(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    store = store_in(tmp_path)
    store.save("a:1", "tok-old", "Ayşe")
    replaced: list[tuple[str, str]] = []
    real_replace = os.replace

    def spy(src: Any, dst: Any) -> None:
        replaced.append((str(src), str(dst)))
        assert Path(src).parent == store.path.parent  # same folder: a rename, not a copy
        assert json.loads(Path(src).read_text("utf-8"))["a:1"]["token"] == "tok-new"
        assert store.load("a:1").token == "tok-old"  # type: ignore[union-attr]
        real_replace(src, dst)

    monkeypatch.setattr(token_store.os, "replace", spy)  # type: ignore[attr-defined]
    store.save("a:1", "tok-new", "Ayşe")
    assert [dst for _, dst in replaced] == [str(store.path)]
    assert store.load("a:1").token == "tok-new"  # type: ignore[union-attr]
    assert sorted(p.name for p in store.path.parent.iterdir()) == [
        "sessions.json", "sessions.json.lock"]  # no temporary file left


SAVER = """
import sys
from pathlib import Path
from pisyedili.client.token_store import TokenStore
store = TokenStore(Path(sys.argv[1]))
print("ready", flush=True)
sys.stdin.readline()
for i in range(40):
    store.save(f"{sys.argv[2]}:{i}", f"tok-{i}", sys.argv[2])
"""


def test_two_clients_saving_at_once_both_keep_their_sessions(tmp_path: Path) -> None:
    """Two processes of one user save forty sessions each into one file at the same
    moment: every save is kept (a read-modify-write without the lock loses some)."""
    path = tmp_path / "state" / "sessions.json"
    savers = [subprocess.Popen([sys.executable, "-c", SAVER, str(path), who],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
              for who in ("ayse", "mehmet")]
    for saver in savers:
        assert saver.stdout is not None
        Output(saver.stdout).wait_for("^ready$")
    for saver in savers:  # both go at once
        assert saver.stdin is not None
        saver.stdin.write("go\n")
        saver.stdin.flush()
    assert [saver.wait(timeout=60) for saver in savers] == [0, 0]
    kept = json.loads(path.read_text("utf-8"))
    assert {k for k in kept if not k.startswith("@")} == {
        f"{who}:{i}" for who in ("ayse", "mehmet") for i in range(40)}


def test_a_failed_write_keeps_the_old_file_and_does_not_raise(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = store_in(tmp_path)
    store.save("a:1", "tok-old", "Ayşe")

    def broken(src: Any, dst: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(token_store.os, "replace", broken)  # type: ignore[attr-defined]
    with capturedLogs() as events:
        store.save("a:1", "tok-secret", "Ayşe")
    monkeypatch.undo()
    assert store.load("a:1").token == "tok-old"  # type: ignore[union-attr]
    assert sorted(p.name for p in store.path.parent.iterdir()) == [
        "sessions.json", "sessions.json.lock"]  # no temporary file left
    (warning,) = warnings_of(events)  # type: ignore[arg-type]
    assert "cannot save" in warning and "tok-secret" not in warning


@pytest.mark.parametrize("content", [b"{not json", b"[1, 2]", b"\xff\xfe\x00",
                                     b'{"a:1": "tok"}', b""])
def test_a_corrupt_file_is_ignored_with_a_warning_and_replaced(tmp_path: Path,
                                                               content: bytes) -> None:
    store = store_in(tmp_path)
    store.path.parent.mkdir(parents=True)
    store.path.write_bytes(content)
    with capturedLogs() as events:
        assert store.load("a:1") is None
    if content != b'{"a:1": "tok"}':  # valid JSON with one bad entry: just that one is skipped
        (warning,) = warnings_of(events)  # type: ignore[arg-type]
        assert str(store.path) in warning
    store.save("a:1", "tok", "Ayşe")
    assert json.loads(store.path.read_text("utf-8"))["a:1"]["token"] == "tok"
    assert store.load("a:1").token == "tok"  # type: ignore[union-attr]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG is Linux's")
def test_the_default_file_is_in_the_users_state_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert TokenStore().path == tmp_path / "pisyedili" / "sessions.json"


def test_fresh_is_an_option_of_joining_a_server_only() -> None:
    net, subcommands = build_parsers()
    assert net.parse_args(["example.org", "--fresh"]).fresh is True
    assert net.parse_args(["example.org"]).fresh is False
    assert not hasattr(subcommands["play"].parse_args([]), "fresh")


@pytest.mark.parametrize(("in_match", "keeps"), [(True, True), (False, False)])
def test_quitting_a_match_keeps_the_token_and_quitting_the_lobby_does_not(
        in_match: bool, keeps: bool) -> None:
    with create_pipe_input() as pipe:
        app = ClientApp(Look(unicode=False, color=False), "tester", input=pipe,
                        output=DummyOutput())
        app.resume_note = RESUME_NOTE
        if in_match:
            app.on_message(table())  # seated, the match being played
        app.submit("/help")
        assert app.log[-1] == RESUME_NOTE
        app.submit("/quit")
        if in_match:
            app.submit("/quit")  # mid-match the first one only asks
        assert app._quit
        assert app.quit_from_match is keeps  # cli.py drops the saved token unless set


# ------------------------------------------------------------------- end to end


def guard(d: Deferred[Any]) -> Deferred[Any]:
    return d.addTimeout(TIMEOUT, reactor)


class Player:
    """One run of the client: a link wired to the token file as `pisyedili HOST` wires it."""

    def __init__(self, server: Any, store: TokenStore, fresh: bool = False) -> None:
        port = server.port.getHost().port
        self.key = server_key(f"127.0.0.1:{port}")
        self.inbox = Inbox(reactor, TIMEOUT)
        endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", port)
        self.link = Link(endpoint, "tester", self.inbox, clock=reactor,  # type: ignore[arg-type]
                         on_status=self.inbox.status.append, retry=lambda attempt: 0.0)
        self.resumed_from = remember_session(self.link, store, self.key, fresh)
        self.link.start()

    async def welcome(self) -> Msg:
        msg: Msg = await self.inbox.wait_type("welcome")
        return msg

    async def ask(self, msg: Msg) -> Msg:
        reply: Msg = await guard(self.link.request(msg))
        assert reply["type"] != "error", reply
        return reply


@pytest_twisted.ensureDeferred
async def test_a_new_client_takes_the_seat_back_and_fresh_starts_anew(tmp_path: Path) -> None:
    server = await wireclient.Server.start()
    path = tmp_path / "state" / "sessions.json"
    players: list[Player] = []
    try:
        first = Player(server, TokenStore(path))
        players.append(first)
        assert first.resumed_from is None  # nothing saved yet
        hello = await first.welcome()
        assert hello["resumed"] is False
        table = await first.ask({"type": "create_table", "rules": "classic", "seats": 3})
        if table["you"]["seat"] is None:
            table = await first.ask({"type": "sit", "seat": 1})
        seat = table["you"]["seat"]
        for other in (s["seat"] for s in table["table"]["seats"] if s["kind"] == "open"):
            await first.ask({"type": "add_bot", "seat": other})
        await first.ask({"type": "ready", "ready": True})
        await first.ask({"type": "start"})
        saved = TokenStore(path).load(first.key)
        assert saved is not None and saved.token == hello["token"]
        assert hello["token"] not in " ".join(first.inbox.status)

        await guard(first.link.stop())  # the terminal closed: no leave_table was sent

        again = Player(server, TokenStore(path))
        players.append(again)
        assert again.resumed_from is not None
        back = await again.welcome()
        assert back["resumed"] is True
        assert back["player"] == hello["player"] and back["name"] == hello["name"]
        snapshot: Msg = await again.inbox.wait_type("table")
        assert snapshot["you"]["seat"] == seat and snapshot["table"]["phase"] == "playing"
        await guard(again.link.stop())

        fresh = Player(server, TokenStore(path), fresh=True)
        players.append(fresh)
        assert fresh.resumed_from is None
        new = await fresh.welcome()
        assert new["resumed"] is False and new["player"] != hello["player"]
        assert TokenStore(path).load(fresh.key).token == new["token"]  # type: ignore[union-attr]
    finally:
        for p in players:
            await guard(p.link.stop())
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_token_the_server_does_not_know_is_dropped_from_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = await wireclient.Server.start()
    store = TokenStore(tmp_path / "sessions.json")
    port = server.port.getHost().port
    store.save(server_key(f"127.0.0.1:{port}"), "expired-token", "tester")
    deleted: list[str] = []
    real_delete = store.delete

    def watch(key: str) -> None:
        deleted.append(key)
        real_delete(key)

    monkeypatch.setattr(store, "delete", watch)
    player = Player(server, store)
    try:
        assert player.resumed_from is not None
        await player.inbox.wait_type("error", code="bad_token")
        hello = await player.welcome()  # the next hello started a fresh session
        assert deleted == [player.key]  # dropped at the refusal, before the new one was saved
        assert hello["resumed"] is False
        assert store.load(player.key).token == hello["token"]  # type: ignore[union-attr]
    finally:
        await guard(player.link.stop())
        await server.stop()
