"""Seats, membership, the host's powers and the start conditions."""

from __future__ import annotations

import random

import pytest
from table_kit import TIMED_NO_DELAYS, Fake, make_table

from pisyedili.protocol.errors import ERRORS
from pisyedili.server.rules import Options
from pisyedili.server.table.core import (
    CODE_ALPHABET,
    CODE_LENGTH,
    SPECTATOR_NAMES_SHOWN,
    TableCore,
    TableError,
    invite_code,
)


def refused(code: str, fn: object, *args: object) -> TableError:
    assert code in ERRORS, f"{code} is not a registered protocol error code"
    with pytest.raises(TableError) as info:
        fn(*args)  # type: ignore[operator]
    assert info.value.code == code
    return info.value


def test_host_joins_first_seat_and_gets_snapshot() -> None:
    rig = make_table("classic", 3)
    rig.table.join(rig.host)
    snap = rig.host.last("table")
    assert (snap["you"]["seat"], snap["you"]["spectator"]) == (0, False)
    assert snap["table"]["host_name"] == "Host"
    assert snap["you"]["host"] is True
    assert [s["kind"] for s in snap["table"]["seats"]] == ["human", "open", "open"]
    assert snap["view"] is None
    assert rig.changes, "the lobby hears of every change"


def test_private_code_reaches_members_never_the_lobby() -> None:
    rig = make_table("classic", 2, private=True)
    t = rig.table
    t.join(rig.host)
    code = t.code
    assert code is not None
    assert rig.host.last("table")["table"]["code"] == code
    guest = Fake("G")
    t.join(guest)
    assert guest.last("table")["table"]["code"] == code
    assert rig.host.last("table_update")["table"]["code"] == code
    assert "code" not in t.summary() and code not in repr(t.summary())
    assert "code" not in t.core.info(for_member=False)
    assert code not in repr(rig.changes)


def test_invite_codes_are_drawn_from_an_unambiguous_alphabet() -> None:
    rng = random.Random(4)
    codes = {invite_code(rng) for _ in range(200)}
    assert len(codes) == 200, "codes do not repeat"
    assert all(len(c) == CODE_LENGTH and set(c) <= set(CODE_ALPHABET) for c in codes)
    assert not set("01IO") & set(CODE_ALPHABET), "no characters read alike"
    options = Options.make("classic", 2)
    public = TableCore(1, "t", options, private=False, host="1", settings=TIMED_NO_DELAYS,
                       code="ABCDEF")
    assert public.code is None and "code" not in public.info()
    with pytest.raises(ValueError):
        TableCore(1, "t", options, private=True, host="1", settings=TIMED_NO_DELAYS)


def test_join_takes_open_seat_then_watches_when_full() -> None:
    rig = make_table("classic", 2)
    a, b = Fake("A"), Fake("B")
    rig.table.join(rig.host)
    rig.table.join(a)
    rig.table.join(b)
    assert rig.table.seat_of(a) == 1
    assert b.last("table")["you"] == {"seat": None, "spectator": True, "host": False}
    info = rig.host.last("table_update")["table"]
    assert info["spectators"] == ["B"]
    summary = rig.table.summary()
    assert (summary["taken"], summary["free"], summary["spectators"]) == (2, 0, 1)


def test_explicit_spectate_keeps_seats_open() -> None:
    rig = make_table("classic", 2)
    rig.table.join(rig.host)
    watcher = Fake("W")
    rig.table.join(watcher, spectate=True)
    assert rig.table.seat_of(watcher) is None
    assert rig.table.summary()["free"] == 1


def test_seat_refusals() -> None:
    rig = make_table("classic", 3)
    t, a = rig.table, Fake("A")
    t.join(rig.host)
    t.join(a)
    refused("seat_taken", t.sit, a, 0)
    refused("no_such_seat", t.sit, a, 3)
    refused("no_such_seat", t.sit, a, -1)
    refused("no_such_seat", t.sit, a, "1")
    refused("not_host", t.add_bot, a, 2)
    refused("bad_field", t.add_bot, rig.host, 2, "godlike")
    refused("not_a_bot", t.remove_bot, rig.host, 1)
    refused("not_a_bot", t.remove_bot, rig.host, 2)
    t.add_bot(rig.host, 2, "hard")
    refused("seat_taken", t.add_bot, rig.host, 2)
    refused("seat_taken", t.sit, a, 2)
    stranger = Fake("S")
    refused("not_at_table", t.set_ready, stranger, True)
    refused("not_at_table", t.chat, stranger, "hi")
    refused("not_at_table", t.sit, stranger, 1)
    refused("not_at_table", t.stand, stranger)
    refused("not_at_table", t.move, stranger, {"kind": "draw"})


def test_sit_moves_and_stand_watches() -> None:
    rig = make_table("classic", 3)
    t, a = rig.table, Fake("A")
    t.join(rig.host)
    t.join(a)
    t.set_ready(a, True)
    t.sit(a, 2)
    assert t.seat_of(a) == 2
    seats = rig.host.last("table_update")["table"]["seats"]
    assert [s["kind"] for s in seats] == ["human", "open", "human"]
    assert seats[2]["ready"] is False, "a new seat starts unready"
    t.stand(a)
    assert t.seat_of(a) is None
    refused("not_seated", t.set_ready, a, True)
    t.sit(a, 1)
    assert t.seat_of(a) == 1


def test_bots_are_ready_and_removable() -> None:
    rig = make_table("classic", 2)
    t = rig.table
    t.join(rig.host)
    t.add_bot(rig.host, 1, "easy")
    seat = rig.host.last("table_update")["table"]["seats"][1]
    assert seat["kind"] == "bot" and seat["ready"] and seat["level"] == "easy"
    assert t.summary()["bots"] == 1
    t.remove_bot(rig.host, 1)
    assert rig.host.last("table_update")["table"]["seats"][1]["kind"] == "open"


def test_start_needs_every_seat_filled_and_every_human_ready() -> None:
    rig = make_table("classic", 3)
    t, a = rig.table, Fake("A")
    t.join(rig.host)
    t.join(a)
    err = refused("table_not_ready", t.start, rig.host)
    assert err.extra["waiting_for"] == [1, 2]
    t.add_bot(rig.host, 2)
    refused("table_not_ready", t.start, rig.host)
    refused("not_host", t.start, a)
    t.set_ready(a, True)
    t.start(rig.host)  # the host's start is its own ready
    assert t.phase == "playing"
    assert rig.changes[-1] == t.summary() and rig.changes[-1]["phase"] == "playing"


def test_seats_are_frozen_during_a_match() -> None:
    rig = make_table("classic", 2)
    t = rig.table
    t.join(rig.host)
    t.add_bot(rig.host, 1)
    t.start(rig.host)
    refused("game_in_progress", t.remove_bot, rig.host, 1)
    refused("game_in_progress", t.stand, rig.host)
    refused("game_in_progress", t.set_ready, rig.host, False)
    refused("game_in_progress", t.start, rig.host)
    refused("match_not_over", t.rematch, rig.host, True)


def test_host_passes_on_and_last_human_closes() -> None:
    rig = make_table("classic", 3)
    t, a, w = rig.table, Fake("A"), Fake("W")
    t.join(rig.host)
    t.join(a)
    t.join(w, spectate=True)
    t.leave(rig.host)
    assert t.host is a
    assert a.last("table_update")["table"]["host_name"] == "A"
    assert t.snapshot_for(a)["you"]["host"] is True
    t.leave(a)
    assert t.host is None and not rig.closed  # a spectator never hosts
    assert w.last("table_update")["table"]["host_name"] is None
    t.sit(w, 1)
    assert t.host is w  # the next human to sit does
    t.leave(w)
    assert rig.closed == [t.id] and t.closed
    assert rig.left == [rig.host.player_id, a.player_id, w.player_id]
    refused("no_such_table", t.join, Fake("Late"))


def test_leaving_a_waiting_table_frees_the_seat() -> None:
    rig = make_table("classic", 2)
    t, a = rig.table, Fake("A")
    t.join(rig.host)
    t.join(a)
    t.leave(a)
    assert rig.host.last("table_update")["table"]["seats"][1]["kind"] == "open"
    assert a not in t.members()


def test_rejoin_resends_snapshot_without_duplicating() -> None:
    rig = make_table("classic", 2)
    t = rig.table
    t.join(rig.host)
    t.join(rig.host)
    assert len(rig.host.of_type("table")) == 2
    assert len(t.members()) == 1 and t.seat_of(rig.host) == 0


def test_a_crowd_of_spectators_does_not_grow_every_update() -> None:
    rig = make_table("classic", 2)
    t = rig.table
    t.join(rig.host)
    crowd = [Fake(f"W{i}") for i in range(SPECTATOR_NAMES_SHOWN + 10)]
    for w in crowd:
        t.join(w, spectate=True)
    info = rig.host.last("table_update")["table"]
    assert len(info["spectators"]) == SPECTATOR_NAMES_SHOWN
    assert info["spectator_count"] == len(crowd) == t.summary()["spectators"]
