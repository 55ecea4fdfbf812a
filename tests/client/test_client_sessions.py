"""Two `pisyedili` processes of one user against one real server: a saved session
belongs to its name, and the same name is taken over only when the player says so.

The clients share one state folder, as two terminals of one user do; their input is a
pipe (not a terminal), so the question a terminal would get has its default: no.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_client_connect import client, server

from pisyedili.client.cli import claim_session, server_key, session_key
from pisyedili.client.token_store import TokenStore, in_use

CONNECTED = r"connected to .* as {}\b"
RESUMED = r"reconnected: your session and seat are back"
REPLACED = r"disconnected for good: .*another connection"


def sessions(tmp_path: Path) -> dict[str, dict[str, object]]:
    data = json.loads((tmp_path / "state" / "pisyedili" / "sessions.json").read_text("utf-8"))
    return {k: v for k, v in data.items() if not k.startswith("@")}


def test_another_name_on_the_same_server_is_a_session_of_its_own(tmp_path: Path) -> None:
    with server(tmp_path) as (_, port):
        target = f"127.0.0.1:{port}"
        with client(tmp_path, target, "--name", "ayse") as first, \
                client(tmp_path, target, "--name", "mehmet") as second:
            first.out.wait_for(CONNECTED.format("ayse"))
            second.out.wait_for(CONNECTED.format("mehmet"))
            assert len(sessions(tmp_path)) == 2
            second.type("/quit")
            assert second.exit_status() == 0
            first.type("/quit")
            assert first.exit_status() == 0
            assert "disconnected for good" not in first.out.rest(), first.out.text


def test_the_same_name_in_use_is_taken_over_only_when_asked_for(tmp_path: Path) -> None:
    with server(tmp_path) as (_, port):
        target = f"127.0.0.1:{port}"
        with client(tmp_path, target, "--name", "ayse") as first:
            first.out.wait_for(CONNECTED.format("ayse"))
            with client(tmp_path, target, "--name", "ayse") as second:
                assert second.exit_status() == 1
                text = second.out.rest()
            assert "is in use by another pisyedili" in text and "--take-over" in text, text
            assert first.proc.poll() is None
            with client(tmp_path, target, "--name", "ayse", "--take-over") as third:
                third.out.wait_for(RESUMED)
                first.out.wait_for(REPLACED)
                third.type("/quit")
                assert third.exit_status() == 0
            first.type("/quit")
            assert first.exit_status() == 0


def test_a_session_whose_client_is_gone_is_resumed_and_fresh_says_what_it_drops(
        tmp_path: Path) -> None:
    with server(tmp_path) as (_, port):
        target = f"127.0.0.1:{port}"
        with client(tmp_path, target, "--name", "ayse") as first:
            first.out.wait_for(CONNECTED.format("ayse"))
            first.proc.send_signal(signal.SIGKILL)  # the terminal closed: nothing let go
            first.proc.wait()
        with client(tmp_path, target, "--name", "ayse") as again:
            again.out.wait_for(RESUMED)
            again.proc.send_signal(signal.SIGKILL)
            again.proc.wait()
        with client(tmp_path, target, "--name", "ayse", "--fresh") as fresh:
            fresh.out.wait_for(r"--fresh: forgetting the saved session of ayse on ")
            fresh.out.wait_for(CONNECTED.format(r"ayse( \d+)?"))
            fresh.type("/quit")
            assert fresh.exit_status() == 0


def parser() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog="pisyedili")


def held_by_another(tmp_path: Path) -> TokenStore:
    """A store whose session of ayse is held by a live process that is not this one."""
    store = TokenStore(tmp_path / "sessions.json")
    key = session_key(server_key("example.org"), "ayse")
    store.save(key, "tok", "ayse", holder=os.getppid())
    saved = store.load(key)
    assert saved is not None and in_use(saved)
    return store


@pytest.mark.parametrize(("answer", "takes"), [("y", True), ("yes", True), ("n", False),
                                               ("", False)])
def test_a_terminal_is_asked_whether_to_take_the_seat_over(
        tmp_path: Path, answer: str, takes: bool) -> None:
    store, asked = held_by_another(tmp_path), []

    def ask(question: str) -> str:
        asked.append(question)
        return answer

    if takes:
        assert claim_session(parser(), store, "example.org", "ayse", False, False, ask) is None
    else:
        with pytest.raises(SystemExit) as exited:
            claim_session(parser(), store, "example.org", "ayse", False, False, ask)
        assert exited.value.code == 1
    assert len(asked) == 1 and "Take the seat over?" in asked[0] and "[y/N]" in asked[0]


def test_names_the_server_takes_for_one_share_a_session_and_others_do_not() -> None:
    server = server_key("example.org")
    assert session_key(server, "Ayşe") == session_key(server, "AYŞE")
    assert session_key(server, "Ayşe") != session_key(server, "Mehmet")


def test_a_file_of_one_session_per_server_keeps_it_for_its_name(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "sessions.json")
    store.save(server_key("example.org"), "old-tok", "ayse")
    assert claim_session(parser(), store, "example.org", "mehmet", False, False) is None
    assert store.load(session_key(server_key("example.org"), "mehmet")) is None
    assert claim_session(parser(), store, "example.org", "ayse", False, False) is None
    moved = store.load(session_key(server_key("example.org"), "ayse"))
    assert moved is not None and moved.token == "old-tok"
    assert store.load(server_key("example.org")) is None


def test_a_holder_that_exited_holds_nothing_and_only_the_holder_lets_go(
        tmp_path: Path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    store = TokenStore(tmp_path / "sessions.json")
    store.save("k", "tok", "ayse", holder=int(gone.stdout))
    saved = store.load("k")
    assert saved is not None and not in_use(saved)
    store.release("k", "tok")  # not ours: left as it is
    assert store.load("k") == saved
    store.save("k", "tok", "ayse", holder=os.getpid())
    store.release("k", "other-tok")
    assert store.load("k").holder == os.getpid()  # type: ignore[union-attr]
    store.release("k", "tok")
    assert store.load("k").holder is None  # type: ignore[union-attr]
    store.delete("k", "other-tok")
    assert store.load("k") is not None
    store.delete("k", "tok")
    assert store.load("k") is None


def test_a_saved_token_the_server_does_not_know_starts_a_fresh_session(
        tmp_path: Path) -> None:
    with server(tmp_path) as (_, port):
        target = f"127.0.0.1:{port}"
        store = TokenStore(tmp_path / "state" / "pisyedili" / "sessions.json")
        store.save(session_key(server_key(target), "ayse"), "stale-token", "ayse")
        with client(tmp_path, target, "--name", "ayse") as c:
            c.out.wait_for(CONNECTED.format("ayse"))
            c.type("/quit")
            assert c.exit_status() == 0
            assert "cannot connect" not in c.out.rest(), c.out.text
