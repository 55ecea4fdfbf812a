"""The nemesis's pure halves: its seeded fault schedule, and its checker fed histories
that hold each kind of fault it must find (a lost acknowledgement, a move stored twice,
two writers of one table, a traceback, a session that did not come back, an id given
twice), beside one that holds none."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from pisyedili.server.bench.nemesis_check import Verdict, check
from pisyedili.server.bench.nemesis_plan import KINDS, ON_A_PROCESS, PAUSE, schedule

Event = dict[str, Any]
TABLE = 5
A, B = {"kind": "play", "card": "9h"}, {"kind": "draw"}


def take(seed: int, n: int, kinds: tuple[str, ...] = tuple(KINDS)) -> list[Any]:
    return list(itertools.islice(schedule(seed, 3, 4.0, kinds), n))


def test_a_seed_gives_the_same_faults_and_another_seed_others() -> None:
    assert take(7, 200) == take(7, 200)
    assert take(7, 200) != take(8, 200)


def test_the_schedule_draws_every_kind_on_a_real_target() -> None:
    faults = take(1, 600)
    assert {f.kind for f in faults} == set(KINDS)
    assert [f.n for f in faults] == list(range(600))
    for f in faults:
        if f.kind in ON_A_PROCESS:
            assert f.target in (0, 1, 2), f
        else:
            assert f.target is None, f
        if f.kind == PAUSE:
            assert f.hold > 4.0, f  # past the lease, so the others take it for dead
        assert f.hold >= 0 and f.calm > 0, f
    assert {f.kind for f in take(1, 50, (PAUSE,))} == {PAUSE}
    with pytest.raises(ValueError):
        next(schedule(1, 3, 4.0, ("flood",)))


class Story:
    """A history built line by line, with its table's stored record."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.stored: list[tuple[int, float, list[Any]]] = []
        self.t = 0.0
        self.rid = 0

    def add(self, ev: str, **fields: Any) -> Event:
        self.t += 1.0
        e = {"t": self.t, "ev": ev, **fields}
        self.events.append(e)
        return e

    def fault(self, kind: str) -> None:
        self.add("fault", n=0, kind=kind, target=0, phase="start")
        self.add("fault", n=0, kind=kind, target=0, phase="end")

    def move(self, who: str, member: int, move: dict[str, Any], acked: bool = True,
             stored: int = 1) -> None:
        self.rid += 1
        self.add("send", who=who, rid=self.rid, table=TABLE, member=member, move=move)
        for _ in range(stored):
            self.store(["Play", str(member), move])
        if acked:
            self.add("ack", who=who, rid=self.rid)

    def store(self, record: list[Any], at: float | None = None) -> None:
        self.stored.append((len(self.stored), self.t if at is None else at, record))

    def check(self, logs: dict[str, str] | None = None) -> Verdict:
        return check(self.events, {TABLE: self.stored}, logs or {}, back_limit=10.0)


def clean() -> Story:
    s = Story()
    s.add("welcome", who="ann", player=1, resumed=False)
    s.add("welcome", who="bob", player=2, resumed=False)
    s.add("table_made", who="ann", table=TABLE)
    s.store(["Join", "1", "ann"])
    s.move("ann", 1, A)
    s.store(["BotMoved", 3, 0])  # a stand-in's move is no player's
    s.move("bob", 2, B)
    s.move("ann", 1, B, acked=False)  # its ack lost with the connection: stored
    s.fault("kill")
    s.add("drop", who="ann", why="reset")
    s.move("bob", 2, A, acked=False, stored=0)  # sent, lost before the table had it
    s.add("back", who="ann", table=TABLE)
    s.move("ann", 1, A)
    s.move("bob", 2, B)
    return s


def kinds(verdict: Verdict) -> list[str]:
    return [v.kind for v in verdict.violations]


def test_a_history_without_a_fault_passes() -> None:
    verdict = clean().check({"process-0.log": "started\nserving\n"})
    assert verdict.ok, verdict.violations
    assert verdict.acked == 4
    assert verdict.back_s == [2.0]  # the drop at t, back at t + 2
    assert verdict.faults == {"kill": 1} and verdict.survived == {"kill": 1}
    assert verdict.sessions_lost == 0


def test_an_acknowledged_move_missing_from_the_record_is_a_lost_ack() -> None:
    s = clean()
    s.fault("pg_restart")
    s.move("ann", 1, {"kind": "play", "card": "Qs"}, stored=0)
    verdict = s.check()
    assert kinds(verdict) == ["lost_ack"]
    (v,) = verdict.violations
    assert "Qs" in v.detail and [e["ev"] for e in v.lines] == ["send", "ack"]
    assert verdict.faults == {"kill": 1, "pg_restart": 1}
    assert verdict.survived == {"kill": 1}  # the lost ack fell in the restart's window


def test_one_lost_move_is_one_lost_ack_though_the_same_move_comes_again_later(
        ) -> None:
    """The pairing is not thrown off by a later move that looks the same: each move
    after the lost one is paired with its own row."""
    s = clean()
    s.move("ann", 1, {"kind": "play", "card": "3c"}, stored=0)  # acknowledged, lost
    for card in ("Ac", "9c", "7c", "3c", "6s"):
        s.move("ann", 1, {"kind": "play", "card": card})
    verdict = s.check()
    assert kinds(verdict) == ["lost_ack"] and verdict.acked == 10
    assert verdict.violations[0].lines[0]["rid"] == s.rid - 5


def test_a_move_stored_twice_is_a_duplicate() -> None:
    s = clean()
    s.move("bob", 2, A, stored=2)
    assert kinds(s.check()) == ["duplicate"]


def test_acknowledged_moves_stored_out_of_their_order_are_found() -> None:
    s = clean()
    s.rid += 1
    s.add("send", who="ann", rid=s.rid, table=TABLE, member=1, move=B)
    s.add("ack", who="ann", rid=s.rid)
    s.rid += 1
    s.add("send", who="ann", rid=s.rid, table=TABLE, member=1,
          move={"kind": "play", "card": "2c"})
    s.add("ack", who="ann", rid=s.rid)
    s.store(["Play", "1", {"kind": "play", "card": "2c"}])
    s.store(["Play", "1", B])  # ann's two moves, the other way round
    verdict = s.check()
    assert kinds(verdict) == ["order"]  # one of the two is stored on the wrong side
    assert "stored out of its order" in verdict.violations[0].detail


def test_a_move_stored_before_one_acknowledged_before_it_was_sent_is_out_of_order(
        ) -> None:
    s = clean()
    s.rid += 1
    s.add("send", who="ann", rid=s.rid, table=TABLE, member=1, move=A)
    first = s.add("ack", who="ann", rid=s.rid)
    s.rid += 1
    s.add("send", who="bob", rid=s.rid, table=TABLE, member=2, move=B)
    s.add("ack", who="bob", rid=s.rid)
    s.store(["Play", "2", B], at=first["t"])  # bob's move before ann's, in the record
    s.store(["Play", "1", A])
    assert kinds(s.check()) == ["order"]


def test_a_move_sent_again_unanswered_pairs_with_the_later_copy_stored() -> None:
    """A move refused while the cluster was away, sent again and acknowledged, then
    sent a third time with no answer (its connection dropped) and refused by the table,
    which stores every command: the acknowledged send is the first copy stored, in its
    order, and the third the copy after another member's moves."""
    s = clean()
    s.rid += 1
    s.add("send", who="ann", rid=s.rid, table=TABLE, member=1, move=A)
    s.add("refused", who="ann", rid=s.rid, code="cluster_unavailable")
    s.move("ann", 1, A)
    s.move("bob", 2, B)
    s.rid += 1
    s.add("send", who="ann", rid=s.rid, table=TABLE, member=1, move=A)
    s.store(["Play", "1", A])
    assert kinds(s.check()) == []


def test_two_writers_of_one_table_are_found_from_its_record() -> None:
    s = clean()
    s.store(["Seen", "1"], at=1.0)  # table time goes back: another holder's clock
    assert kinds(s.check()) == ["two_writers"]
    s = clean()
    seq, at, rec = s.stored.pop()
    s.stored.append((seq + 1, at, rec))  # a gap: rows of another holder in between
    assert kinds(s.check()) == ["two_writers"]


def test_a_traceback_in_a_log_is_reported_with_its_lines() -> None:
    log = ("ok\nTraceback (most recent call last):\n  File \"x.py\", line 1\n"
           "KeyError: 3\n")
    verdict = clean().check({"process-1.log": log})
    assert kinds(verdict) == ["traceback"]
    assert "process-1.log:2" in verdict.violations[0].detail
    assert "KeyError: 3" in verdict.violations[0].detail
    assert verdict.survived == {}  # found at no known time: no fault counts as survived


def test_a_session_that_does_not_come_back_is_lost() -> None:
    s = clean()
    s.add("drop", who="bob", why="reset")
    verdict = s.check()
    assert kinds(verdict) == ["session_lost"] and verdict.sessions_lost == 1
    s = clean()
    s.add("drop", who="bob", why="reset")
    s.add("lost", who="bob", why="resume refused: bad_token")
    assert kinds(s.check()) == ["session_lost"]
    s = clean()
    s.add("drop", who="bob", why="reset")
    s.t += 30  # past the limit of 10 s
    s.add("back", who="bob", table=TABLE)
    verdict = s.check()
    assert kinds(verdict) == ["session_lost"] and 30 < max(verdict.back_s) < 32


def test_an_id_given_twice_is_found() -> None:
    s = clean()
    s.add("welcome", who="cem", player=2, resumed=False)
    s.add("table_made", who="cem", table=TABLE)
    assert sorted(kinds(s.check())) == ["duplicate_id", "duplicate_id"]
    s = clean()
    s.add("welcome", who="bob", player=2, resumed=True)  # bob's own resume
    assert s.check().ok


def test_a_resume_welcomed_without_the_table_that_still_held_it_is_found() -> None:
    s = clean()
    s.add("drop", who="bob", why="reset")
    s.add("no_table", who="bob", table=TABLE)
    s.add("back", who="bob", table=TABLE)  # its table's snapshot came all the same
    verdict = s.check()
    assert kinds(verdict) == ["resume_without_table"] and verdict.sessions_lost == 0


def test_a_move_answered_with_internal_error_is_found() -> None:
    s = clean()
    s.rid += 1
    s.add("send", who="bob", rid=s.rid, table=TABLE, member=2, move=A)
    s.add("refused", who="bob", rid=s.rid, code="internal_error")
    verdict = s.check()
    assert kinds(verdict) == ["internal_error"] and verdict.acked == 4
    s = clean()
    s.rid += 1
    s.add("send", who="bob", rid=s.rid, table=TABLE, member=2, move=A)
    s.add("refused", who="bob", rid=s.rid, code="not_your_turn")  # a stale decision
    assert s.check().ok
