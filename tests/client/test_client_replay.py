"""Replays of finished matches: every position the viewer steps through, the export
file and its checks, `pisyedili replay FILE` as a real process, and `/history`,
`/replay`, `/export` in the client against a real server keeping its matches in SQLite.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput
from replay_kit import NAMES, play
from test_client_app import until
from twisted.internet.asyncioreactor import AsyncioSelectorReactor
from twisted.internet.endpoints import TCP4ClientEndpoint, serverFromString

from pisyedili.client import replay
from pisyedili.client.app import ClientApp
from pisyedili.client.cli import main
from pisyedili.client.offline import wire
from pisyedili.client.parse import Context, Invalid, Local, Request, parse_input
from pisyedili.client.render import Look, plain
from pisyedili.server import rules as engine
from pisyedili.server.service.assembly import make_factory
from pisyedili.server.store import Archive
from pisyedili.server.store.sqlite import SqliteStore
from pisyedili.server.table.effects import MatchOver

ROOT = Path(__file__).resolve().parents[2]
ASCII = Look(unicode=False, color=False)
TIMEOUT = 20.0


def hand_text(cards: list[int]) -> str:
    from pisyedili.client.cards import sort_hand

    return " ".join(sort_hand([engine.CARD_STR[c] for c in cards]))


# -- every position ------------------------------------------------------------------------


@settings(max_examples=25)
@given(seed=st.integers(0, 2**32 - 1),
       table=st.sampled_from([("classic", 2, {}), ("classic", 6, {"decks": 2}),
                              ("classic", 3, {"empty_stock": "reshuffle"}),
                              ("classic", 4, {"ten": "bounce"}),
                              ("cardiva", 2, {}), ("cardiva", 4, {}),
                              ("cardiva", 3, {"empty_stock": "reshuffle"})]))
def test_every_position_holds_the_whole_pack_and_the_replay_ends_as_stored(
        seed: int, table: tuple[str, int, dict[str, Any]]) -> None:
    rules, players, options = table
    doc = play(seed, rules, players, **options)
    match = replay.from_document(doc)
    decks = doc["deals"][0]["record"]["options"]["decks"]
    pack = Counter(engine.deck(decks))
    viewer = replay.Viewer(match)
    seen = 0
    while True:
        d = viewer.position.deal
        held = [c for h in d.hands for c in h] + d.pile + d.stock
        assert len(held) == 52 * decks and Counter(held) == pack, (viewer.deal, viewer.step)
        seen += 1
        if viewer.at_end:
            assert d.over and d.result is not None
            assert d.result.to_wire() == doc["deals"][viewer.deal]["result"]
        if not viewer.next_move():
            break
    moves = sum(len(deal["record"]["moves"]) for deal in doc["deals"])
    assert seen == moves + len(doc["deals"])  # each deal as dealt, then after each move
    assert viewer.at_end and viewer.deal == len(doc["deals"]) - 1
    # ... and back, to the match's very start, over the same positions.
    back = 1
    while viewer.previous_move():
        back += 1
    assert back == seen and (viewer.deal, viewer.step) == (0, 0)
    assert match.totals_before(len(match.deals)) == [p["total"] for p in
                                                     doc["match"]["players"]]


def test_the_screen_shows_every_hand_the_pile_the_turn_the_move_and_the_result() -> None:
    doc = play(3, "classic", 3)
    match = replay.from_document(doc)
    viewer = replay.Viewer(match)
    viewer.next_move()
    d = viewer.position.deal
    text = "\n".join(plain(line) for line in replay.screen(viewer, ASCII, 100))
    for seat in range(3):
        assert f"{NAMES[seat]}: {len(d.hands[seat])} card" in text
        assert hand_text(d.hands[seat]) in text, seat
    assert f"stock {len(d.stock)}" in text and "move 1 of" in text
    assert re.search(rf"^> {NAMES[d.turn]}:", text, re.M), "the seat to act is marked"
    assert "last move: " in text
    viewer.end_of_deal()
    over = "\n".join(plain(line) for line in replay.screen(viewer, ASCII, 100))
    assert "deal over" in over and "match over" not in over
    viewer.goto_deal(len(match.deals))
    viewer.end_of_deal()
    last = "\n".join(plain(line) for line in replay.screen(viewer, ASCII, 100))
    assert "match over" in last


def test_typed_replay_commands_step_and_refuse_clearly() -> None:
    match = replay.from_document(play(4, "classic", 2))
    viewer = replay.Viewer(match)
    assert replay.replay_command("b", viewer) == "This is the match's start."
    assert replay.replay_command("", viewer) is None and viewer.step == 1  # Enter steps
    assert replay.replay_command("n", viewer) is None and viewer.step == 2
    assert replay.replay_command("pd", viewer) is None and viewer.step == 0
    assert replay.replay_command("nd", viewer) is None and viewer.deal == 1
    assert replay.replay_command("nd", viewer) == "This is the last deal."
    assert replay.replay_command("d 1", viewer) is None and (viewer.deal, viewer.step) == (0, 0)
    assert replay.replay_command("d 9", viewer) == "The match has deals 1 to 2."
    assert replay.replay_command("end", viewer) is None and viewer.at_end
    assert replay.replay_command("n", viewer) is None and (viewer.deal, viewer.step) == (1, 0)
    assert replay.replay_command("q", viewer) == "quit"
    assert "n next" in (replay.replay_command("7h", viewer) or "")


@pytest.mark.parametrize(("typed", "parsed"), [
    ("/history", Request({"type": "history", "of": "mine"})),
    ("/history recent 3", Request({"type": "history", "of": "recent", "offset": 100})),
    ("/history 2", Request({"type": "history", "of": "mine", "offset": 50})),
    ("/history 'Ali Veli'", Request({"type": "history", "of": "player", "name": "Ali Veli"})),
    ("/matches Mehmet 2", Request({"type": "history", "of": "player", "name": "Mehmet",
                                   "offset": 50})),
    ("/replay #12", Local("replay", "12")),
    ("/export 12 'my match.json'", Local("export", "12\nmy match.json")),
    ("/export '12 b.json'", Local("export", "12 b.json")),
])
def test_history_replay_and_export_commands(typed: str, parsed: object) -> None:
    assert parse_input(typed, Context()) == parsed


@pytest.mark.parametrize("typed", ["/history a b c", "/history 0", "/replay", "/replay x",
                                   f"/replay {2**53}", "/export", "/export 1 2 3"])
def test_bad_history_commands_say_how_to_type_them(typed: str) -> None:
    parsed = parse_input(typed, Context())
    assert isinstance(parsed, Invalid) and parsed.message.startswith("Usage: /")


# -- the file ------------------------------------------------------------------------------


def test_export_and_import_round_trip(tmp_path: Path) -> None:
    doc = play(5, "cardiva", 3, empty_stock="reshuffle")
    match = replay.from_document(doc)
    path = tmp_path / "match.json"
    replay.save(match, path)
    assert json.loads(path.read_text(encoding="utf-8")) == doc
    again = replay.load(path)
    assert again == match and replay.to_document(again) == doc


def _broken(change: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    doc = copy.deepcopy(play(6, "classic", 2))
    change(doc)
    return doc


def _illegal_move(doc: dict[str, Any]) -> None:
    record = doc["deals"][0]["record"]
    players = record["options"]["players"]
    dealers = record["deck"].split()[players - 1]  # the dealer's first card (C1)
    record["moves"][0] = {"kind": "play", "card": dealers}  # the opener does not hold it


BROKEN = [
    (lambda d: d.update(format="something-else"), 'not a match export: "format" must be'),
    (lambda d: d.update(version=2), '"version" 2 of the export format is not known here'),
    (lambda d: d.pop("match"), "match: must be a map"),
    (lambda d: d["match"]["players"][0].pop("name"), "match.players[0].name is required"),
    (lambda d: d["match"].update(deals=3), "the match says 3 deals were played, the file "
                                           "holds 2"),
    (lambda d: d["deals"].reverse(), "deals[0].deal_no: must be 1"),
    (lambda d: d["deals"][1]["record"].update(deck="2c 3c"), "deals[1].record: record deck "
                                                             "is not a full pack"),
    (_illegal_move, "deals[0].record.moves[0]: "),
    (lambda d: d["deals"][0]["record"]["moves"].pop(), "deals[0].record.moves: the deal is "
                                                       "not over after its"),
    (lambda d: d["deals"][0]["result"]["points"].reverse(), "deals[0].result: the moves do "
                                                            "not lead to this result"),
    (lambda d: d["match"]["players"][1].update(total=-1), "match.players: the totals"),
]


@pytest.mark.parametrize(("change", "says"), BROKEN, ids=[s[:24] for _, s in BROKEN])
def test_a_broken_file_is_refused_saying_where_and_why(
        change: Callable[[dict[str, Any]], object], says: str) -> None:
    with pytest.raises(replay.ReplayError) as refused:
        replay.from_document(_broken(change))
    assert says in str(refused.value)
    if change is _illegal_move:
        assert "cannot be played there: " in str(refused.value)


def test_files_that_are_not_exports(tmp_path: Path) -> None:
    for content, says in ((b"garbage", "not JSON (line 1, column 1"),
                          (b"[1, 2]", "must hold one JSON object"),
                          (b"\xff\xfe{}", "not UTF-8 text")):
        path = tmp_path / "bad.json"
        path.write_bytes(content)
        with pytest.raises(replay.ReplayError, match=re.escape(says)):
            replay.load(path)


def test_the_documented_example_loads_and_every_field_is_documented() -> None:
    doc_text = (ROOT / "docs" / "replay.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```json\n(.*?)```", doc_text, re.S)
    example = json.loads(block)
    match = replay.from_document(example)  # valid, and it replays to its results
    assert match.summary["deals"] == 1
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", doc_text, re.M))
    deal = example["deals"][0]
    keys = {*example, *example["match"], *(k for p in example["match"]["players"] for k in p),
            *deal, *deal["result"], *deal["record"]}
    assert keys <= documented, keys - documented


# -- pisyedili replay FILE, a real process ---------------------------------------------------


def command() -> list[str]:
    script = Path(sys.executable).with_name("pisyedili")
    return [str(script)] if script.exists() else [sys.executable, "-m", "pisyedili.client.cli"]


def test_pisyedili_replay_steps_through_a_file_read_from_a_pipe(tmp_path: Path) -> None:
    doc = play(3, "classic", 3)
    path = tmp_path / "match.json"
    replay.save(replay.from_document(doc), path)
    done = subprocess.run([*command(), "replay", str(path), "--ascii"],
                          input="n\nn\nend\nd 2\nq\n", capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout.replace("\r", "")
    # Each step's screen, every hand face up: the engine's positions, as the file says.
    match = replay.from_document(doc)
    first = match.positions(0)
    for step in (0, 1, 2):
        d = first[step].deal
        for seat in range(3):
            assert hand_text(d.hands[seat]) in out, (step, seat)
    assert "move 2 of" in out and "deal 2 of 2 | dealt" in out
    assert "deal over" in out and "left the replay" in out
    result = doc["deals"][0]["result"]
    for seat in range(3):
        assert re.search(rf"^  {re.escape(NAMES[seat])} +\+{result['points'][seat]} ", out,
                         re.M), "the deal's result, every seat's points"


def test_the_help_lists_the_replay_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    assert re.search(r"^  replay +watch an exported match", capsys.readouterr().out, re.M)
    with pytest.raises(SystemExit) as exit_:
        main(["replay", "--help"])
    assert exit_.value.code == 0 and "usage: pisyedili replay" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        main(["replay"])  # no FILE
    assert exit_.value.code == 2 and "FILE" in capsys.readouterr().err


def test_pisyedili_replay_refuses_a_bad_file_with_a_message(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**play(3), "version": 7}), encoding="utf-8")
    for target, says in ((path, '"version" 7 of the export format is not known here'),
                         (tmp_path / "missing.json", "No such file or directory")):
        done = subprocess.run([*command(), "replay", str(target)], capture_output=True,
                              text=True, timeout=60, check=False, stdin=subprocess.DEVNULL)
        assert done.returncode == 1
        assert done.stderr.startswith(f"pisyedili replay: {target}: ") and says in done.stderr


# -- /history, /replay and /export against a real server ------------------------------------


def _stored(doc: dict[str, Any], private: bool = False) -> MatchOver:
    """A played match as the server hands it to its store."""
    summary = doc["match"]
    return MatchOver(
        table_id=1, rules=summary["rules"], options=summary["options"],
        players=[{"seat": p["seat"], "name": p["name"], "kind": p["kind"],
                  "level": p.get("level")} for p in summary["players"]],
        started_at=summary["started_at"], finished_at=summary["finished_at"],
        totals=[p["total"] for p in summary["players"]], winners=summary["winners"],
        deals=doc["deals"], private=private)


def test_history_replay_and_export_in_the_client(tmp_path: Path) -> None:
    path = tmp_path / "server.sqlite3"
    store = SqliteStore(path)
    docs = [play(seed, "classic", 2) for seed in (21, 22)]
    ids = [store.record_match(_stored(doc)) for doc in docs]
    hidden = store.record_match(_stored(play(23, "classic", 2), private=True))
    store.close()
    exported = tmp_path / "saved.json"
    app: ClientApp | None = None

    async def scenario(reactor: Any, pipe: PipeInput) -> None:
        nonlocal app
        archive = Archive(lambda: SqliteStore(path), reactor)
        await archive.open().asFuture(asyncio.get_running_loop())
        factory = make_factory(reactor, archive=archive)
        port = await serverFromString(reactor, "tcp:0:interface=127.0.0.1").listen(  # type: ignore[no-untyped-call]
            factory).asFuture(asyncio.get_running_loop())
        app = ClientApp(ASCII, "Zeynep", input=pipe, output=DummyOutput())
        app.subscribe_lobby = False
        endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", port.getHost().port)
        link = wire(app, reactor, endpoint, "Zeynep")  # type: ignore[arg-type]
        link.start()
        task = asyncio.get_running_loop().create_task(app.run())
        await until(app, lambda: link.connected, "the welcome")
        assert "history" in link.features

        pipe.send_text("/history recent\r")
        await until(app, lambda: any("Recent public matches" in ln for ln in app.log),
                    "the list")
        listed = app.log[-4:]
        assert any(f"#{ids[1]}" in ln for ln in listed) and any(f"#{ids[0]}" in ln
                                                                 for ln in listed)
        assert not any(f"#{hidden} " in ln for ln in app.log), "a private match stays hidden"

        pipe.send_text(f"/replay {hidden}\r")
        await until(app, lambda: any("No finished match" in ln or "no finished match" in ln
                                     for ln in app.log), "the refusal")
        assert app.replay is None

        pipe.send_text(f"/replay {ids[0]}\r")
        await until(app, lambda: app.replay is not None, "the replay")
        assert "replay of match" in app.status_text() and "dealt" in app.status_text()
        pipe.send_text("n\r")
        await until(app, lambda: "move 1 of" in app.status_text(), "a step")
        pipe.send_text("nd\r")
        await until(app, lambda: "deal 2 of 2" in app.status_text(), "the next deal")
        pipe.send_text(f"/export {exported}\r")
        await until(app, lambda: exported.exists(), "the export")
        pipe.send_text("q\r")
        await until(app, lambda: app.replay is None, "leaving the replay")

        pipe.send_text(f"/export {ids[1]} {tmp_path / 'other.json'}\r")
        await until(app, lambda: (tmp_path / "other.json").exists(), "the second export")
        pipe.send_text("/quit\r")
        await task
        await port.stopListening().asFuture(asyncio.get_running_loop())
        await archive.close().asFuture(asyncio.get_running_loop())

    loop = asyncio.new_event_loop()
    try:
        reactor = AsyncioSelectorReactor(loop)
        with create_pipe_input() as pipe:
            loop.run_until_complete(asyncio.wait_for(scenario(reactor, pipe), TIMEOUT))
        reactor.removeAll()  # type: ignore[no-untyped-call]
    finally:
        loop.close()
    assert replay.to_document(replay.load(exported)) == {
        **docs[0], "match": {**docs[0]["match"], "id": ids[0]}}
    assert replay.load(tmp_path / "other.json").id == ids[1]
