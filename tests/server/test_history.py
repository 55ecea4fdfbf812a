"""Finished matches over loopback (the `history` feature): lists, paging, privacy,
replays deal by deal, refusals, and nothing of a match in progress.

Every server here keeps its matches in a real SQLite file, filled by playing matches:
over the wire against bots, or (for the long lists paging needs) in a table core with
bots, then stored the way the server stores them. Every frame the clients receive is
validated against the schema by the harness.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import random
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
import wireclient
from net_match import open_table, play_to_match_end
from test_store import play_match
from twisted.internet import reactor
from twisted.logger import globalLogPublisher
from wireclient import Msg, Server, WireClient

from pisyedili.protocol.shapes import HISTORY_PAGE, REPLAY_STEP_MOVES
from pisyedili.server import rules as engine
from pisyedili.server.service.assembly import make_factory
from pisyedili.server.store import Archive, Viewer, history, open_store
from pisyedili.server.store.sqlite import MIGRATIONS, SqliteStore

FEATURES = ["chat", "history", "rematch"]


async def _serve(path: str | Path, monkeypatch: pytest.MonkeyPatch,
                 opened: bool = True) -> tuple[Server, Archive]:
    """A server on loopback keeping its matches at `path` (an archive never opened,
    unless `opened`: a server whose store could not be opened)."""
    archive = Archive(lambda: open_store(path), reactor)
    if opened:
        await archive.open()
    monkeypatch.setattr(wireclient, "make_factory",
                        functools.partial(make_factory, archive=archive))
    return await Server.start(), archive


@contextlib.asynccontextmanager
async def _serving(path: str | Path, monkeypatch: pytest.MonkeyPatch
                   ) -> AsyncIterator[tuple[Server, Archive]]:
    server, archive = await _serve(path, monkeypatch)
    try:
        yield server, archive
    finally:
        await server.stop()
        await archive.close()


@pytest_twisted.async_yield_fixture
async def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                 ) -> AsyncIterator[tuple[Server, Archive]]:
    async with _serving(tmp_path / "history.sqlite3", monkeypatch) as serving:
        yield serving


@pytest_twisted.async_yield_fixture
async def served_anywhere(db: str, monkeypatch: pytest.MonkeyPatch
                          ) -> AsyncIterator[tuple[Server, Archive]]:
    """`served`, once per backend of the store."""
    async with _serving(db, monkeypatch) as serving:
        yield serving


async def finish(server: Server, archive: Archive, name: str, seed: int, *,
                 private: bool = False, deals: int = 2) -> tuple[WireClient, Msg]:
    """`name` plays a whole match against an easy bot; the client and its `match_end`."""
    (client,), _ = await open_table(server, [name], "classic", 2, bots=1, private=private,
                                    options={"match_end": f"deals:{deals}"})
    end = await play_to_match_end(client, random.Random(seed))
    await archive.flush()  # the match was handed to the store before the last update
    return client, end


async def replay_all(client: WireClient, match_id: int) -> list[Msg]:
    """Every deal of a match, each put together from as many pages as it takes."""
    deals: list[Msg] = []
    deal_no, count = 1, 1
    while deal_no <= count:
        first = await client.request("replay", match=match_id, deal=deal_no)
        assert first["type"] == "replay", first
        moves = list(first["record"]["moves"])
        while len(moves) < first["move_count"]:
            page = await client.ok("replay", match=match_id, deal=deal_no, **{"from": len(moves)})
            assert page["from"] == len(moves) and page["match"] == first["match"]
            moves += page["record"]["moves"]
        deals.append({**first, "record": {**first["record"], "moves": moves}})
        count = first["match"]["deals"]
        deal_no += 1
    return deals


def assert_replays(deals: list[Msg], totals: list[int]) -> None:
    """Each record replays through the engine to the result sent with it; the results
    add up to the match's totals."""
    summed = [0] * len(totals)
    for deal in deals:
        replayed = engine.replay(engine.DealRecord.from_wire(deal["record"]))
        assert replayed.over and replayed.result is not None
        assert replayed.result.to_wire() == deal["result"]
        summed = [t + p for t, p in zip(summed, deal["result"]["points"], strict=True)]
    assert summed == totals


@pytest_twisted.ensureDeferred
async def test_lists_and_replays_of_matches_played_over_the_wire(
        served_anywhere: tuple[Server, Archive]) -> None:
    server, archive = served_anywhere
    ayse, ayse_end = await finish(server, archive, "Ayse", 5)
    mehmet, _ = await finish(server, archive, "Mehmet", 6, private=True)
    # A match in progress: Zeynep never moves, so it never ends.
    (zeynep,), in_progress = await open_table(server, ["Zeynep"], "classic", 2, bots=1)
    for client in (ayse, mehmet, zeynep):
        client.cursor = len(client.received)

    mine = await ayse.ok("history", of="mine")
    assert (mine["of"], mine["name"], mine["total"], mine["offset"]) == ("mine", "Ayse", 1, 0)
    (row,) = mine["matches"]
    assert [(p["seat"], p["name"], p["kind"], p.get("level")) for p in row["players"]] == [
        (0, "Ayse", "human", None), (1, "bot 2", "bot", "easy")]
    assert [p["total"] for p in row["players"]] == ayse_end["totals"]
    assert row["winners"] == ayse_end["winners"]
    assert (row["rules"], row["deals"], row["private"]) == ("classic", 2, False)
    assert row["options"]["match_end"] == "deals:2" and row["started_at"] <= row["finished_at"]

    # The public list holds Ayse's match only: not the private one, not the one playing.
    recent = await zeynep.ok("history", of="recent")
    assert [m["id"] for m in recent["matches"]] == [row["id"]] and recent["total"] == 1
    assert "name" not in recent
    nothing = await zeynep.ok("history", of="mine")
    assert (nothing["matches"], nothing["total"]) == ([], 0)

    # A private table's match: its player sees it, nobody else does, by any way.
    (private,) = (await mehmet.ok("history", of="mine"))["matches"]
    assert private["private"] and private["id"] != row["id"]
    by_name = await zeynep.ok("history", of="player", name="Mehmet")
    assert (by_name["matches"], by_name["total"], by_name["name"]) == ([], 0, "Mehmet")
    assert (await mehmet.ok("history", of="player", name="Mehmet"))["total"] == 1
    refused = await zeynep.request("replay", match=private["id"])
    assert (refused["type"], refused["code"]) == ("error", "no_such_match")
    assert (await ayse.ok("history", of="player", name=" Ayse "))["total"] == 1  # as kept

    # Replays: every deal, rebuilt by the engine, ends as it was scored.
    deals = await replay_all(ayse, row["id"])
    assert [d["deal_no"] for d in deals] == [1, 2]
    assert all(d["match"] == row and d["from"] == 0 for d in deals)
    assert_replays(deals, ayse_end["totals"])
    assert_replays(await replay_all(mehmet, private["id"]), [p["total"] for p in
                                                             private["players"]])
    # Each deal's first page carries the match's score sheet: a row per deal, from
    # the results (C13, C14), its totals the match's.
    sheet = engine.sheet_rows(d["result"] for d in deals)
    assert all(d["sheet"] == sheet for d in deals) and len(sheet) == 2
    assert sheet[-1]["totals"] == ayse_end["totals"]

    # Nothing of the match being played: no id past the finished ones answers.
    for match_id in (private["id"] + 1, 0, 2**53 - 1):
        unknown = await zeynep.request("replay", match=match_id)
        assert (unknown["type"], unknown["code"]) == ("error", "no_such_match"), match_id
    past = await ayse.request("replay", match=row["id"], deal=3)
    assert (past["code"], past["field"]) == ("bad_field", "deal")
    moves = deals[0]["move_count"]
    beyond = await ayse.request("replay", match=row["id"], **{"from": moves + 1})
    assert (beyond["code"], beyond["field"]) == ("bad_field", "from")
    empty = await ayse.ok("replay", match=row["id"], **{"from": moves})
    assert empty["record"]["moves"] == [] and empty["move_count"] == moves
    assert "sheet" not in empty  # a later page of the deal: the sheet came with the first
    assert in_progress not in {m["id"] for m in recent["matches"]}  # a table id, at that

    nameless = await ayse.request("history", of="player")
    assert (nameless["code"], nameless["field"]) == ("missing_field", "name")
    blank = await ayse.request("history", of="player", name="\u200b")
    assert (blank["code"], blank["field"]) == ("bad_field", "name")


@pytest_twisted.ensureDeferred
async def test_long_lists_come_in_pages_newest_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "many.sqlite3"
    played = play_match(11, match_end="deals:1")
    store = SqliteStore(path)
    ids = [store.record_match(dataclasses.replace(played, finished_at=2_000.0 + i,
                                                  private=i % 4 == 3))
           for i in range(HISTORY_PAGE + 13)]
    store.close()
    public = [i for n, i in enumerate(ids) if n % 4 != 3][::-1]  # newest first
    server, archive = await _serve(path, monkeypatch)
    try:
        ayse = await server.connect("Ayse")
        assert ayse.welcome["player"] == 1  # the session play_match seats (member "1")
        first = await ayse.ok("history", of="mine")
        assert first["total"] == len(ids) and [m["id"] for m in first["matches"]] == \
            ids[::-1][:HISTORY_PAGE]
        rest = await ayse.ok("history", of="mine", offset=HISTORY_PAGE)
        assert [m["id"] for m in rest["matches"]] == ids[::-1][HISTORY_PAGE:]
        assert rest["offset"] == HISTORY_PAGE
        small = await ayse.ok("history", of="player", name="Ayse", offset=3, limit=7)
        assert [m["id"] for m in small["matches"]] == ids[::-1][3:10]
        past = await ayse.ok("history", of="mine", offset=len(ids))
        assert (past["matches"], past["total"]) == ([], len(ids))

        other = await server.connect("Mehmet")
        pages = [await other.ok("history", of="recent", offset=o, limit=20)
                 for o in range(0, len(public), 20)]
        assert [m["id"] for p in pages for m in p["matches"]] == public
        assert {p["total"] for p in pages} == {len(public)}
        assert not any(m["private"] for p in pages for m in p["matches"])
        theirs = await other.ok("history", of="player", name="Ayse")
        assert theirs["total"] == len(public)  # Ayse's private matches are hers alone
    finally:
        await server.stop()
        await archive.close()


@pytest_twisted.ensureDeferred
async def test_a_long_deal_comes_in_pages_of_moves(
        served: tuple[Server, Archive], monkeypatch: pytest.MonkeyPatch) -> None:
    server, archive = served
    monkeypatch.setattr(history, "REPLAY_MOVES", 4)  # every deal is "long" now
    ayse, end = await finish(server, archive, "Ayse", 8, deals=1)
    (row,) = (await ayse.ok("history", of="mine"))["matches"]
    first = await ayse.ok("replay", match=row["id"])
    assert len(first["record"]["moves"]) == 4 < first["move_count"]
    deals = await replay_all(ayse, row["id"])
    assert len(deals[0]["record"]["moves"]) == first["move_count"]
    assert_replays(deals, end["totals"])


@pytest_twisted.ensureDeferred
async def test_replies_from_the_store_keep_the_order_of_requests(
        served: tuple[Server, Archive]) -> None:
    server, archive = served
    ayse, _ = await finish(server, archive, "Ayse", 9, deals=1)
    start = len(ayse.received)
    for rid, msg in enumerate([{"type": "history", "of": "mine"}, {"type": "ping"},
                               {"type": "replay", "match": 1}, {"type": "ping"},
                               {"type": "history", "of": "recent"}], 1000):
        ayse.send({**msg, "id": rid})  # type: ignore[dict-item]
    await ayse.wait_for_id(1004, start)
    answers = [m for m in ayse.received[start:] if m.get("id", 0) >= 1000]
    assert [(m["id"], m["type"]) for m in answers] == [
        (1000, "history"), (1001, "pong"), (1002, "replay"), (1003, "pong"),
        (1004, "history")]


@pytest_twisted.ensureDeferred
async def test_a_client_gone_before_its_answer_costs_nothing(
        served: tuple[Server, Archive]) -> None:
    server, archive = served
    ayse, _ = await finish(server, archive, "Ayse", 11, deals=1)
    failures: list[Any] = []

    def observe(event: dict[str, Any]) -> None:
        if event.get("log_failure") is not None:
            failures.append(event)

    globalLogPublisher.addObserver(observe)  # type: ignore[arg-type]
    try:
        for msg in ({"type": "replay", "match": 1, "id": 1}, {"type": "ping", "id": 2}):
            ayse.send(msg)
        await ayse.close()
        await server.dropped(ayse)
        await archive.flush()  # the read ran, and its answer found the connection gone
    finally:
        globalLogPublisher.removeObserver(observe)  # type: ignore[arg-type]
    assert not failures, failures
    other = await server.connect("Mehmet")
    assert (await other.ok("history", of="recent"))["total"] == 1


@pytest_twisted.ensureDeferred
async def test_a_store_that_fails_is_an_internal_error_and_logged(
        served: tuple[Server, Archive], tmp_path: Path) -> None:
    server, archive = served
    ayse, _ = await finish(server, archive, "Ayse", 10, deals=1)
    conn = sqlite3.connect(tmp_path / "history.sqlite3")
    conn.execute("DROP TABLE deals")  # behind the server's back: its reads now fail
    conn.commit()
    conn.close()
    failed: list[Any] = []

    def observe(event: dict[str, Any]) -> None:
        if event.get("log_failure") is not None:
            failed.append(event)

    globalLogPublisher.addObserver(observe)  # type: ignore[arg-type]
    try:
        reply = await ayse.request("history", of="mine")
    finally:
        globalLogPublisher.removeObserver(observe)  # type: ignore[arg-type]
    assert (reply["type"], reply["code"]) == ("error", "internal_error")
    assert failed and "deals" in str(failed[0]["log_failure"].value)
    assert (await ayse.request("ping"))["type"] == "pong", "the connection reads on"


@pytest_twisted.ensureDeferred
async def test_without_a_store_the_feature_is_not_offered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = await Server.start()  # the harness's own factory: no archive
    try:
        ayse = await server.connect("Ayse", features=FEATURES)
        assert ayse.welcome["features"] == ["chat", "rematch"]
        refused = await ayse.request("history", of="recent")
        assert (refused["code"], refused["feature"]) == ("feature_not_negotiated", "history")
    finally:
        await server.stop()

    server, _ = await _serve(tmp_path / "never-opened", monkeypatch, opened=False)
    try:
        ayse = await server.connect("Ayse", features=FEATURES)
        assert "history" in ayse.welcome["features"]
        for request in ({"of": "recent"}, {"match": 1}):
            kind = "history" if "of" in request else "replay"
            refused = await ayse.request(kind, **request)
            assert refused["code"] == "history_unavailable", refused
        plain = await server.connect("Mehmet", features=["chat"])
        refused = await plain.request("replay", match=1)
        assert refused["code"] == "feature_not_negotiated"
    finally:
        await server.stop()


def test_matches_kept_before_privacy_was_are_shown_to_their_players_only(
        tmp_path: Path) -> None:
    """Version 3 of the schema marks whether a match was private; for the matches kept
    before it, that is unknown, so they count as private. Their seats were kept
    without the sessions that held them (version 7 adds that), so only an account
    seated in one sees it: a name alone shows nothing."""
    path = tmp_path / "v2.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    for version, step in enumerate(MIGRATIONS[:2], 1):  # a database of version 2
        step(conn)
        conn.execute(f"PRAGMA user_version = {version}")
    played = play_match(12, match_end="deals:1")
    conn.execute("INSERT INTO matches VALUES (5, 1, 'classic', '{}', ?, 1.0, 2.0, ?, ?)",
                 (json.dumps(played.players), json.dumps(played.totals),
                  json.dumps(played.winners)))
    conn.execute("INSERT INTO match_players VALUES (5, 0, 'Ayse', 'human', NULL)")
    conn.close()
    store = SqliteStore(path)
    try:
        store.note_match_accounts(5, [(0, 41)], False)  # Ayse was logged in
        ayse, guest_ayse, mehmet = Viewer(7, account=41), Viewer(1), Viewer(2)
        assert store.history_page("recent", None, mehmet, 0, 10) == ([], 0)
        assert store.history_page("player", "Ayse", mehmet, 0, 10)[1] == 0
        assert store.history_page("mine", None, guest_ayse, 0, 10) == ([], 0)
        (row,), total = store.history_page("mine", None, ayse, 0, 10)
        assert (row["id"], row["private"], row["deals"], total) == (5, True, 0, 1)
        assert store.visible_deal(5, 1, mehmet) is None
        assert store.visible_deal(5, 1, guest_ayse) is None
        seen = store.visible_deal(5, 1, ayse)
        assert seen is not None and seen["deal"] is None  # kept without its deals
    finally:
        store.close()


def _engine_steps(record: Msg) -> list[tuple[Any, ...]]:
    """Each position of a deal as the engine reaches it: every hand, the top, the stock,
    the seat to act, and the seat that moved."""
    rec = engine.DealRecord.from_wire(record)
    d = engine.deal_from_deck(rec.options, rec.dealer, list(rec.deck), rec.seed)

    def state(seat: int | None) -> tuple[Any, ...]:
        public = engine.view(d, None)
        return ([[engine.CARD_STR[c] for c in sorted(h)] for h in d.hands], public["top"],
                public["stock"], public["turn"], public["phase"], seat)

    out = [state(None)]
    for move in rec.moves:
        seat = d.turn
        engine.apply(d, move)
        out.append(state(seat))
    return out


@pytest_twisted.ensureDeferred
async def test_a_replay_with_steps_carries_every_position_face_up(
        served: tuple[Server, Archive], monkeypatch: pytest.MonkeyPatch) -> None:
    """For a client without the rules engine: each page's positions are the engine's,
    pages of at most REPLAY_STEP_MOVES moves join up, and the last is the result."""
    server, archive = served
    assert history.REPLAY_STEP_MOVES == REPLAY_STEP_MOVES  # type: ignore[attr-defined]
    monkeypatch.setattr(history, "REPLAY_STEP_MOVES", 10)  # a deal of several pages
    ayse, _ = await finish(server, archive, "Ayse", 7, deals=1)
    (row,) = (await ayse.ok("history", of="mine"))["matches"]
    (deal,) = await replay_all(ayse, row["id"])
    expected = _engine_steps(deal["record"])
    total = deal["move_count"]
    assert total > 12
    got: list[tuple[Any, ...]] = []
    start = 0
    while True:
        page = await ayse.ok("replay", match=row["id"], steps=True, **{"from": start})
        steps = page["steps"]
        assert len(page["record"]["moves"]) == min(10, total - start)
        assert len(steps) == len(page["record"]["moves"]) + 1
        assert [s["move"] for s in steps[1:]] == page["record"]["moves"]
        assert steps[0]["move"] is None and steps[0]["seat"] is None
        seen = [(s["hands"], s["top"], s["stock"], s["turn"], s["phase"], s["seat"])
                for s in steps]
        assert seen[0][:5] == expected[start][:5]  # where the page starts
        got += seen[1:] if got else seen
        start += len(steps) - 1
        if start >= total:
            break
    assert got == expected
    last = page["steps"][-1]
    assert last["phase"] == "over" and any(e["event"] == "deal_end" for e in last["events"])
    assert sorted(map(sorted, last["hands"])) == sorted(map(sorted, deal["result"]["hands"]))
    # From the middle: its first position is the one those moves lead to.
    middle = await ayse.ok("replay", match=row["id"], steps=True, **{"from": 5})
    first = middle["steps"][0]
    assert (first["hands"], first["top"], first["stock"]) == tuple(expected[5][:3])
    plain = await ayse.ok("replay", match=row["id"])
    assert "steps" not in plain and len(plain["record"]["moves"]) == total
