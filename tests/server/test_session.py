"""Sessions without sockets: tokens, replacement, grace and expiry."""

from __future__ import annotations

from collections.abc import Callable

from peer_kit import Peer
from twisted.internet import task

from pisyedili.server.cluster.local import LocalCluster
from pisyedili.server.people import names
from pisyedili.server.people.session import Sessions


def test_tokens_are_long_random_and_never_in_repr() -> None:
    sessions = Sessions(task.Clock(), grace_seconds=10)
    a = sessions.open("ann", Peer())
    b = sessions.open("ann", Peer())
    assert a.token != b.token and len(a.token) >= 40
    assert a.player_id != b.player_id
    assert a.token not in repr(a)


def test_newest_connection_wins_and_the_old_one_is_told() -> None:
    sessions = Sessions(task.Clock(), grace_seconds=10)
    first, second = Peer(), Peer()
    session = sessions.open("ann", first)
    assert sessions.resume(session.token, second) is session
    assert first.was_replaced and session.peer is second
    sessions.lost(session, first)  # the replaced connection's close changes nothing
    assert session.connected
    session.send({"type": "ok"})
    assert second.sent == [{"type": "ok"}] and first.sent == []


def test_unknown_token_resumes_nothing() -> None:
    sessions = Sessions(task.Clock(), grace_seconds=10)
    assert sessions.resume("not-a-token", Peer()) is None


def test_dropped_session_without_a_table_expires_after_grace() -> None:
    clock = task.Clock()
    sessions = Sessions(clock, grace_seconds=10)
    conn = Peer()
    session = sessions.open("ann", conn)
    sessions.lost(session, conn)
    assert not session.connected
    session.send({"type": "ok"})  # dropped silently while disconnected
    clock.advance(9)
    assert sessions.resume(session.token, Peer()) is session  # in time
    sessions.lost(session, session.peer)  # type: ignore[arg-type]
    clock.advance(10)
    assert sessions.find(session.token) is None and len(sessions) == 0


def test_names_are_unique_while_a_session_lives() -> None:
    clock = task.Clock()
    sessions = Sessions(clock, grace_seconds=10)
    ann = sessions.open("Ann", Peer())
    assert sessions.open("ann", Peer()).name == "ann 2"
    assert sessions.open("ANN", Peer()).name == "ANN 3"
    long = sessions.open("x" * 24, Peer())
    assert sessions.open("x" * 24, Peer()).name == "x" * 22 + " 2"
    assert long.name == "x" * 24
    sessions.lost(ann, ann.peer)  # type: ignore[arg-type]
    clock.advance(10)  # ann's session expires: the name is free again
    assert sessions.open("Ann", Peer()).name == "Ann"


class TellingCluster(LocalCluster):
    """A process alone that notes what it was told of sessions."""

    def __init__(self) -> None:
        self.told: list[tuple[str, object]] = []

    def session_gone(self, hashed: bytes, player_id: str, keys: tuple[str, ...],
                     forgotten: Callable[[], None] | None = None) -> None:
        self.told.append(("gone", player_id))
        super().session_gone(hashed, player_id, keys, forgotten)

    def release_name(self, player_id: str, keys: tuple[str, ...]) -> None:
        self.told.append(("release", keys))

    def session_moved(self, hashed: bytes, keys: tuple[str, ...]) -> None:
        self.told.append(("moved", keys))


def test_a_session_handed_over_leaves_without_freeing_its_keys_in_the_cluster() -> None:
    clock, cluster = task.Clock(), TellingCluster()
    sessions = Sessions(clock, grace_seconds=10, cluster=cluster)
    conn = Peer()
    session = sessions.open("ann", conn, "10.0.0.1")
    sessions.lost(session, conn)  # its grace is running
    sessions.hand_over(session)
    assert cluster.told == [("moved", names.keys("ann"))]  # the new home's keys stand
    assert sessions.find(session.token) is None and sessions.by_id(session.player_id) is None
    assert sessions.opened_from("10.0.0.1") == 0 and len(sessions) == 0
    clock.advance(10)  # its expiry was cancelled: nothing more is told
    assert cluster.told == [("moved", names.keys("ann"))]
    assert sessions.open("ann", Peer()).name == "ann"  # free here


def test_an_adopted_session_resumes_by_its_token_and_holds_its_name() -> None:
    sessions = Sessions(task.Clock(), grace_seconds=10)
    first, second = Peer(), Peer()
    session = sessions.adopt("7", "ann", "the-token", first, "10.0.0.2")
    assert (session.player_id, session.name, session.token) == ("7", "ann", "the-token")
    assert sessions.by_id("7") is session and sessions.opened_from("10.0.0.2") == 1
    assert sessions.resume("the-token", second) is session and first.was_replaced
    assert sessions.open("ann", Peer()).name == "ann 2"
