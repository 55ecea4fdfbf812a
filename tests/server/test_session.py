"""Sessions without sockets: tokens, replacement, grace and expiry."""

from __future__ import annotations

from typing import Any

from twisted.internet import task

from pisyedili.server.people.session import Sessions


class FakeConnection:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.was_replaced = False

    def send_message(self, msg: dict[str, Any]) -> None:
        self.sent.append(msg)

    def replaced(self) -> None:
        self.was_replaced = True


def test_tokens_are_long_random_and_never_in_repr() -> None:
    sessions = Sessions(task.Clock(), grace_seconds=10)
    a = sessions.open("ann", FakeConnection())
    b = sessions.open("ann", FakeConnection())
    assert a.token != b.token and len(a.token) >= 40
    assert a.player_id != b.player_id
    assert a.token not in repr(a)


def test_newest_connection_wins_and_the_old_one_is_told() -> None:
    sessions = Sessions(task.Clock(), grace_seconds=10)
    first, second = FakeConnection(), FakeConnection()
    session = sessions.open("ann", first)
    assert sessions.resume(session.token, second) is session
    assert first.was_replaced and session.peer is second
    sessions.lost(session, first)  # the replaced connection's close changes nothing
    assert session.connected
    session.send({"type": "ok"})
    assert second.sent == [{"type": "ok"}] and first.sent == []


def test_unknown_token_resumes_nothing() -> None:
    sessions = Sessions(task.Clock(), grace_seconds=10)
    assert sessions.resume("not-a-token", FakeConnection()) is None


def test_dropped_session_without_a_table_expires_after_grace() -> None:
    clock = task.Clock()
    sessions = Sessions(clock, grace_seconds=10)
    conn = FakeConnection()
    session = sessions.open("ann", conn)
    sessions.lost(session, conn)
    assert not session.connected
    session.send({"type": "ok"})  # dropped silently while disconnected
    clock.advance(9)
    assert sessions.resume(session.token, FakeConnection()) is session  # in time
    sessions.lost(session, session.peer)  # type: ignore[arg-type]
    clock.advance(10)
    assert sessions.find(session.token) is None and len(sessions) == 0


def test_names_are_unique_while_a_session_lives() -> None:
    clock = task.Clock()
    sessions = Sessions(clock, grace_seconds=10)
    ann = sessions.open("Ann", FakeConnection())
    assert sessions.open("ann", FakeConnection()).name == "ann 2"
    assert sessions.open("ANN", FakeConnection()).name == "ANN 3"
    long = sessions.open("x" * 24, FakeConnection())
    assert sessions.open("x" * 24, FakeConnection()).name == "x" * 22 + " 2"
    assert long.name == "x" * 24
    sessions.lost(ann, ann.peer)  # type: ignore[arg-type]
    clock.advance(10)  # ann's session expires: the name is free again
    assert sessions.open("Ann", FakeConnection()).name == "Ann"
