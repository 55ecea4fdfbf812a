"""The nemesis's checker: what a run recorded, held to what the cluster promises.

A function of three things the runner gathers, and of nothing else, so that a failed
run can be checked again from its folder: the history (every request, reply and event
the players saw, and every fault, with its time: `history.jsonl`), each table's stored
record (its journal's commands, by `seq`) and the processes' logs. It reports:

- `lost_ack`: a move whose `ok` a player received that its table's record lacks;
- `duplicate`: a member's move stored more often than it was sent and not refused;
- `order`: a member's acknowledged moves stored in another order than acknowledged, or
  a move stored before one that had been acknowledged before it was sent;
- `two_writers`: a table's record that two holders wrote at once: its `seq` not one
  after another, or its table time going back;
- `session_lost`: a player (or spectator) whose resume was refused, or who was not back
  at its table, seated or watching, within `back_limit` seconds of a drop;
- `resume_without_table`: a resume welcomed without `table` (which says the session is
  at no table) for a player whose table still held it;
- `internal_error`: a request answered with `internal_error` (a fault is answered with a
  code that says what to do, never with the server's own failure);
- `duplicate_id`: one player id given to two sessions, or one table id to two tables;
- `traceback`: a traceback in a process's log.

A fault is survived when no violation fell between its start and the next fault's.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Event = dict[str, Any]
StoredCommand = tuple[int, float, list[Any]]
"""One row of a table's journal: its `seq`, its table time, the command's record."""

BACK_LIMIT = 60.0
"""Seconds after a drop by which a client must be back at its table, or its session
counts as lost. The bound for the verdict; the target for the time back (p99) is a
figure the summary reports beside it."""
TRACEBACK = "Traceback (most recent call last)"


@dataclass
class Violation:
    kind: str
    t: float | None
    """When, in the history's time (seconds from the run's start), if known."""
    detail: str
    lines: list[Event] = field(default_factory=list)
    """The history lines that show it."""


@dataclass
class Verdict:
    violations: list[Violation]
    acked: int
    back_s: list[float]
    faults: dict[str, int]
    survived: dict[str, int]
    sessions_lost: int

    @property
    def ok(self) -> bool:
        return not self.violations

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = defaultdict(int)
        for v in self.violations:
            found[v.kind] += 1
        return dict(found)


def percentile(values: Sequence[float], p: float) -> float | None:
    """The nearest-rank percentile, or None of nothing."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def check(history: Iterable[Event], stored: Mapping[int, Sequence[StoredCommand]],
          logs: Mapping[str, str], back_limit: float = BACK_LIMIT) -> Verdict:
    events = sorted(history, key=lambda e: e["t"])
    violations: list[Violation] = []
    acked = _moves(events, stored, violations)
    violations += _writers(stored)
    back_s, lost = _sessions(events, back_limit, violations)
    violations += _ids(events)
    violations += [Violation("internal_error", e["t"], f"{e['who']}'s request {e['rid']} "
                             "was answered with internal_error", [e])
                   for e in events if e["ev"] == "refused" and e.get("code") == "internal_error"]
    violations += _tracebacks(logs)
    faults, survived = _faults(events, violations)
    return Verdict(violations, acked, back_s, faults, survived, lost)


@dataclass
class _Move:
    send: Event
    ack: Event | None = None
    refused: bool = False
    seq: int | None = None


def _moves(events: list[Event], stored: Mapping[int, Sequence[StoredCommand]],
           violations: list[Violation]) -> int:
    """Match each member's sent moves to its table's stored `Play` commands; the
    acknowledged ones must all be there, once, in order."""
    sent: dict[tuple[str, int], _Move] = {}
    by_member: dict[tuple[int, str], list[_Move]] = defaultdict(list)
    for e in events:
        if e["ev"] == "send":
            move = _Move(e)
            sent[e["who"], e["rid"]] = move
            by_member[e["table"], str(e["member"])].append(move)
        elif e["ev"] in ("ack", "refused") and (e["who"], e["rid"]) in sent:
            move = sent[e["who"], e["rid"]]
            if e["ev"] == "ack":
                move.ack = e
            else:
                move.refused = True
    acked = 0
    for (table, member), moves in by_member.items():
        plays = [(seq, rec[2]) for seq, _at, rec in stored.get(table, ())
                 if rec and rec[0] == "Play" and len(rec) > 2 and str(rec[1]) == member]
        _align(moves, plays)
        extra = {seq: m for seq, m in plays}
        for move in moves:
            if move.seq is not None:
                del extra[move.seq]
        for move in moves:
            if move.ack is None:
                continue
            acked += 1
            if move.seq is not None:
                continue
            elsewhere = [seq for seq, m in extra.items() if m == move.send["move"]]
            if elsewhere:  # stored, but not where its acknowledgement puts it
                del extra[elsewhere[0]]
            violations.append(Violation(
                "order" if elsewhere else "lost_ack", move.ack["t"],
                f"table {table}: member {member}'s acknowledged move {move.send['move']} "
                f"(request {move.send['rid']} of {move.send['who']}) is "
                + (f"stored out of its order (seq {elsewhere[0]})" if elsewhere
                   else "not in its record"), [move.send, move.ack]))
        if extra:
            last = max((m.send for m in moves if m.ack is not None), key=lambda e: e["t"],
                       default=moves[-1].send)
            violations.append(Violation(
                "duplicate", last["t"], f"table {table}: member {member} has "
                f"{len(extra)} stored moves that no move it sent accounts for (seq "
                f"{sorted(extra)[:10]})", [last]))
    violations += _real_time_order(by_member)
    return acked


def _align(moves: list[_Move], plays: list[tuple[int, Any]]) -> None:
    """Pair a member's sends with its stored moves, in order, each at most once, the
    same move on both sides, keeping as many acknowledged sends as can be kept and then
    as many others (a send without an acknowledgement, its reply lost with the
    connection or refused, may or may not be stored): a weighted longest common
    subsequence, so that one move lost does not push the pairing of every later one
    onto a later move that looks the same. Where two pairings keep as many, an
    acknowledged send takes the earlier stored move and a send without an answer the
    later: a player sends a move again when it heard nothing, and a copy the table
    refused is stored all the same (every command is). Sets each paired send's `seq`."""
    n, m = len(moves), len(plays)
    score = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        want, gain = moves[i].send["move"], 1 + n * (moves[i].ack is not None)
        row, below = score[i], score[i + 1]
        for j in range(m - 1, -1, -1):
            best = max(below[j], row[j + 1])
            if plays[j][1] == want:
                best = max(best, gain + below[j + 1])
            row[j] = best
    i = j = 0
    while i < n and j < m:
        answered = moves[i].ack is not None
        pairs = plays[j][1] == moves[i].send["move"] \
            and score[i][j] == 1 + n * answered + score[i + 1][j + 1]
        if pairs and answered:
            moves[i].seq = plays[j][0]
            i, j = i + 1, j + 1
        elif score[i][j] == score[i + 1][j]:
            i += 1
        elif pairs:
            moves[i].seq = plays[j][0]
            i, j = i + 1, j + 1
        else:
            j += 1


def _real_time_order(by_member: Mapping[tuple[int, str], list[_Move]]) -> list[Violation]:
    """A move sent after another was acknowledged comes after it in the record: the
    table had applied the first before the second left its player."""
    found: list[Violation] = []
    per_table: dict[int, list[_Move]] = defaultdict(list)
    for (table, _member), moves in by_member.items():
        per_table[table] += [m for m in moves if m.ack is not None and m.seq is not None]
    for table, moves in per_table.items():
        moves.sort(key=lambda m: m.seq or 0, reverse=True)
        earliest: _Move | None = None  # of the moves stored later, the first acknowledged
        for m in moves:
            assert m.ack is not None
            if earliest is not None and earliest.ack is not None \
                    and earliest.ack["t"] < m.send["t"]:
                found.append(Violation(
                    "order", m.send["t"], f"table {table}: a move sent after another's "
                    f"acknowledgement is stored before it (seq {m.seq} < {earliest.seq})",
                    [earliest.send, earliest.ack, m.send, m.ack]))
            if earliest is None or (earliest.ack is not None
                                    and m.ack["t"] < earliest.ack["t"]):
                earliest = m
    return found


def _writers(stored: Mapping[int, Sequence[StoredCommand]]) -> list[Violation]:
    found: list[Violation] = []
    for table, rows in stored.items():
        rows = sorted(rows, key=lambda r: r[0])
        for (seq_a, at_a, _), (seq_b, at_b, rec_b) in itertools.pairwise(rows):
            if seq_b != seq_a + 1:
                found.append(Violation("two_writers", None, f"table {table}: seq {seq_a} "
                                       f"is followed by seq {seq_b}"))
            elif at_b < at_a:
                found.append(Violation("two_writers", None, f"table {table}: seq {seq_b} "
                                       f"({rec_b[:1]}) at table time {at_b} follows "
                                       f"seq {seq_a} at {at_a}"))
    return found


def _sessions(events: list[Event], back_limit: float,
              violations: list[Violation]) -> tuple[list[float], int]:
    """Each drop is followed by the client back at its table within `back_limit`."""
    away: dict[str, Event] = {}
    back_s: list[float] = []
    lost: set[str] = set()
    end = events[-1]["t"] if events else 0.0

    def lose(who: str, t: float, detail: str, lines: list[Event]) -> None:
        if who not in lost:
            lost.add(who)
            violations.append(Violation("session_lost", t, detail, lines))

    for e in events:
        who = e.get("who", "")
        if e["ev"] == "drop" and who not in away and who not in lost:
            away[who] = e
        elif e["ev"] == "back" and who in away:
            drop = away.pop(who)
            waited = e["t"] - drop["t"]
            back_s.append(waited)
            if waited > back_limit:
                lose(who, e["t"], f"{who} was back at its table {waited:.1f} s after a "
                     f"drop (limit {back_limit:g} s)", [drop, e])
        elif e["ev"] == "no_table":
            violations.append(Violation(
                "resume_without_table", e["t"], f"{who} was welcomed back without its "
                f"table {e.get('table')}, as if at no table", [e]))
        elif e["ev"] == "lost":
            lose(who, e["t"], f"{who} could not resume: {e.get('why')}",
                 [x for x in (away.pop(who, None), e) if x is not None])
    for who, drop in away.items():
        lose(who, drop["t"], f"{who} was not back at its table after a drop "
             f"({end - drop['t']:.1f} s to the history's end)", [drop])
    return back_s, len(lost)


def _ids(events: list[Event]) -> list[Violation]:
    found: list[Violation] = []
    players: dict[int, Event] = {}
    tables: dict[int, Event] = {}
    for e in events:
        if e["ev"] == "welcome":
            first = players.setdefault(e["player"], e)
            if first["who"] != e["who"]:
                found.append(Violation("duplicate_id", e["t"], f"player id {e['player']} "
                                       f"given to {first['who']} and {e['who']}",
                                       [first, e]))
        elif e["ev"] == "table_made":
            first = tables.setdefault(e["table"], e)
            if first is not e:
                found.append(Violation("duplicate_id", e["t"], f"table id {e['table']} "
                                       "given to two tables", [first, e]))
    return found


def _tracebacks(logs: Mapping[str, str]) -> list[Violation]:
    found: list[Violation] = []
    for name, text in sorted(logs.items()):
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if TRACEBACK in line:
                found.append(Violation("traceback", None, f"{name}:{i + 1}: "
                                       + "\n".join(lines[max(0, i - 2):i + 14])))
    return found


def _faults(events: list[Event],
            violations: list[Violation]) -> tuple[dict[str, int], dict[str, int]]:
    """Faults injected and survived, by kind: a fault is survived when no violation with
    a time fell from its start to the next fault's start, and none without a time was
    found at all (those could be anywhere)."""
    starts = [e for e in events if e["ev"] == "fault" and e.get("phase") == "start"]
    injected: dict[str, int] = defaultdict(int)
    survived: dict[str, int] = defaultdict(int)
    untimed = any(v.t is None for v in violations)
    timed = sorted(v.t for v in violations if v.t is not None)
    for i, start in enumerate(starts):
        injected[start["kind"]] += 1
        until = starts[i + 1]["t"] if i + 1 < len(starts) else math.inf
        hit = any(start["t"] <= t < until for t in timed)
        if not hit and not untimed:
            survived[start["kind"]] += 1
    return dict(injected), dict(survived)
