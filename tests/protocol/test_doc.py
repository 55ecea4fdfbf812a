"""docs/protocol.md agrees with the code: messages, fields, shapes, replies, presence,
errors, features, limits, worst-case frame sizes, examples and the worked hex example.
Edit both together, or this fails."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pisyedili.protocol import (
    CLIENT_FRAME_LIMITS,
    ERRORS,
    FEATURES,
    MAX_CLIENT_FRAME,
    MAX_SERVER_FRAME,
    MESSAGES,
    PROTOCOL_VERSION,
    SERVER_FRAME_LIMITS,
    Direction,
    ProtocolError,
    announced_limits,
    encode,
    frame,
    make_hello,
    schema_data,
    validate,
)
from pisyedili.protocol import limits as L
from pisyedili.protocol.shapes import (
    EVENT,
    HISTORY_PAGE,
    LOBBY_PAGE,
    LOBBY_ROWS,
    MAX_CARDS,
    MAX_SEATS,
    MOVE,
    REPLAY_MOVES,
    REPLAY_STEP_MOVES,
    SHAPES,
    SHEET_ROWS,
)
from pisyedili.protocol.types import Field, MapT, TaggedT

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
ARROW = {"client → server": Direction.TO_SERVER, "server → client": Direction.TO_CLIENT}
HEADING = re.compile(r"^### `([a-z_]+)`(?: \((client → server|server → client)\))?\s*$")
S, C = Direction.TO_SERVER, Direction.TO_CLIENT


def field_rows(fields: tuple[Field, ...]) -> list[tuple[str, str]]:
    """How a field table must read: name (`?` after an optional one), type."""
    return [(f"`{f.name}`" + ("" if f.required else "?"), f.type.describe()) for f in fields]


def message_rows(fields: tuple[Field, ...]) -> list[tuple[str, str]]:
    """A message's table: its fields but `id`, which Conventions describes once."""
    return field_rows(tuple(f for f in fields if f.name != "id"))


def sections(text: str) -> dict[tuple[Direction | None, str], str]:
    """Every `### \\`name\\`` section's body, keyed by (direction or None, name)."""
    found: dict[tuple[Direction | None, str], str] = {}
    current: tuple[Direction | None, str] | None = None
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("#"):
            if current is not None:
                found[current] = "\n".join(lines)
            m = HEADING.match(line)
            current = (ARROW[m[2]] if m[2] else None, m[1]) if m else None
            lines = []
        elif current is not None:
            lines.append(line)
    if current is not None:
        found[current] = "\n".join(lines)
    return found


def chapter(text: str, title: str) -> str:
    """The body of the `## title` chapter, up to the next `## ` heading."""
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert m is not None, f"no chapter {title!r}"
    return m[1]


def table_rows(body: str, header: str) -> list[list[str]]:
    """The rows of the first markdown table in `body` whose header starts with `header`."""
    rows: list[list[str]] = []
    inside = False
    for line in body.splitlines():
        if line.startswith("| " + header):
            inside = True
            continue
        if inside:
            if not line.startswith("|"):
                break
            if set(line) <= set("|-: "):
                continue
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            rows.append(cells)
    return rows


def json_examples(body: str) -> list[dict[str, Any]]:
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", body, re.S)]


def yes_no(flag: bool) -> str:
    return "yes" if flag else "no"


@pytest.fixture(scope="module")
def doc() -> str:
    return DOC.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def doc_sections(doc: str) -> dict[tuple[Direction | None, str], str]:
    return sections(doc)


# -- messages and shapes ------------------------------------------------------------------


def test_every_message_is_documented_and_every_documented_message_is_real(
    doc_sections: dict[tuple[Direction | None, str], str],
) -> None:
    documented = {key for key in doc_sections if key[0] is not None}
    assert documented == set(MESSAGES)


@pytest.mark.parametrize("key", sorted(MESSAGES), ids=lambda k: f"{k[0]}-{k[1]}")
def test_message_field_tables_match_the_schema(
    key: tuple[Direction, str], doc_sections: dict[tuple[Direction | None, str], str]
) -> None:
    body = doc_sections[key]
    rows = [tuple(r[:2]) for r in table_rows(body, "field")]
    assert rows == message_rows(MESSAGES[key].fields)


def test_the_id_the_tables_leave_out_is_the_one_conventions_describes(doc: str) -> None:
    for spec in MESSAGES.values():
        for f in spec.fields:
            if f.name == "id":
                assert not f.required and f.type.describe() == "id", spec.type
    assert "**`id`.**" in chapter(doc, "Conventions")


@pytest.mark.parametrize("key", sorted(MESSAGES), ids=lambda k: f"{k[0]}-{k[1]}")
def test_message_examples_are_valid(
    key: tuple[Direction, str], doc_sections: dict[tuple[Direction | None, str], str]
) -> None:
    examples = json_examples(doc_sections[key])
    assert examples, f"{key[1]} has no example"
    for ex in examples:
        assert ex["type"] == key[1]
        validate(ex, key[0])


def feature_cell(feature: str | None) -> str:
    return f"`{feature}`" if feature else "—"


def test_the_request_table_lists_every_reply_presence_and_feature(doc: str) -> None:
    rows = {r[0].strip("`"): r for r in table_rows(doc, "request")}
    requests = {t: m for (d, t), m in MESSAGES.items() if d is S}
    assert set(rows) == set(requests)
    for type_, spec in requests.items():
        assert rows[type_][1:4] == [spec.answer, yes_no(spec.presence),
                                    feature_cell(spec.feature)], type_


def test_the_server_message_table_lists_every_feature(doc: str) -> None:
    rows = {r[0].strip("`"): r for r in table_rows(doc, "message | feature")}
    sent = {t: m for (d, t), m in MESSAGES.items() if d is C}
    assert set(rows) == set(sent)
    for type_, spec in sent.items():
        assert rows[type_][1] == feature_cell(spec.feature), type_


def test_shared_shapes_match_the_schema(
    doc_sections: dict[tuple[Direction | None, str], str],
) -> None:
    for name, shape in SHAPES.items():
        body = doc_sections[(None, name)]
        rows = table_rows(body, "field")
        if isinstance(shape, MapT):
            assert [tuple(r[:2]) for r in rows] == field_rows(shape.fields), name
        elif shape.open:
            # Open tagged shapes (events) list their variants in their own table.
            assert [tuple(r[:2]) for r in rows] == [(f"`{shape.tag}`", "str")], name
        else:
            # Closed tagged shapes (moves): the tag once, then each variant's fields with
            # the variant they belong to.
            tag = (f"`{shape.tag}`", " \\| ".join(f'"{k}"' for k in shape.variants))
            expected = [tag] + [(*row, f"`{kind}`") for kind, fields in shape.variants.items()
                                for row in field_rows(fields)]
            assert [tuple(r[:2]) for r in rows[:1]] == [tag], name
            assert [tuple(r[:3]) for r in rows[1:]] == expected[1:], name


def test_the_move_shape_lists_kind_once(
    doc_sections: dict[tuple[Direction | None, str], str],
) -> None:
    assert isinstance(MOVE, TaggedT)
    rows = table_rows(doc_sections[(None, "move")], "field")
    assert [r[0] for r in rows].count("`kind`") == 1


def test_event_table_matches_the_event_variants(doc: str) -> None:
    assert isinstance(EVENT, TaggedT)
    documented = {}
    for name, fields, _meaning in table_rows(doc, "event"):
        parsed = re.findall(r"`([a-z_]+)`(\??)", fields)
        documented[name.strip("`")] = [(f, opt == "") for f, opt in parsed]
    expected = {tag: [(f.name, f.required) for f in fields]
                for tag, fields in EVENT.variants.items()}
    assert documented == expected


def test_reshuffle_cites_the_empty_stock_rules(doc: str) -> None:
    row = next(r for r in table_rows(doc, "event") if r[0] == "`reshuffle`")
    assert "C15" in row[2] and "K6" in row[2] and "K14" not in row[2]


# -- errors, features, limits -------------------------------------------------------------

def test_error_tables_match_the_registry(doc: str) -> None:
    body = chapter(doc, "Errors")
    closing = {r[0].strip("`"): r for r in table_rows(body, "code | reconnect")}
    others = {r[0].strip("`"): r for r in table_rows(body, "code | meaning")}
    assert set(closing) == {code for code, info in ERRORS.items() if info.closes}
    assert set(others) == {code for code, info in ERRORS.items() if not info.closes}
    for code, row in closing.items():
        info = ERRORS[code]
        expected = info.reconnect_note or yes_no(info.reconnect)
        assert (row[1], row[2]) == (expected, info.meaning), code
    assert closing["bad_token"][1] == "yes, without `token`"
    for code, row in others.items():
        assert row[1] == ERRORS[code].meaning, code
    # A code that does not close by itself, but after which a close may come and
    # reconnecting helps (a flood, a failure, a cluster out of reach): the prose says so.
    prose = re.sub(r"^\|.*$", "", body, flags=re.M)
    for code, info in ERRORS.items():
        if not info.closes and info.reconnect and not info.reconnect_note:
            assert f"`{code}`" in prose, code


def test_feature_table_matches(doc: str) -> None:
    rows = table_rows(doc, "feature")
    assert {r[0].strip("`"): r[1] for r in rows} == FEATURES


def test_limit_table_matches(doc: str) -> None:
    rows = table_rows(doc, "limit")
    table = {r[0].strip("`"): (r[1], r[2]) for r in rows}
    for name in ("frame", "depth", "str_len", "bin_len", "array_len", "map_len"):
        assert table[name] == (str(getattr(CLIENT_FRAME_LIMITS, name)),
                               str(getattr(SERVER_FRAME_LIMITS, name))), name


# -- worst-case frame sizes ---------------------------------------------------------------
#
# Each worst case is a superset of anything the server can send (or a valid client can
# send): every name, table name and chat line at its length limit in 4-byte characters,
# every id and count at its largest, every points value at its widest encoding, the most
# seats (6, classic with two decks: 104 cards), and card lists that no deal can hold at
# once. They are validated against the schema, so they are real messages.

BIG = "\U0001d538"  # 𝔸: four bytes in UTF-8, the most one character takes
POINTS = -(2**31)  # the widest points value (int 32)
RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
TWO_DECKS = [rank + suit for suit in "cdhs" for rank in RANKS] * 2
LONGEST_FIRST = sorted(TWO_DECKS, key=len, reverse=True)
SPECTATOR_NAMES = 50  # the reference server lists the first 50 spectators by name
PENALTY_CARDS = 24  # 8 sevens of two decks, 3 cards each (C11, K7)


def text(n: int) -> str:
    return BIG * n


def _hands() -> list[list[str]]:
    per = -(-MAX_CARDS // MAX_SEATS)
    return [TWO_DECKS[i * per:(i + 1) * per] for i in range(MAX_SEATS)]


DEAL_OPTIONS = {"rules": "classic", "players": MAX_SEATS, "ten": "reverse",
                "empty_stock": "reshuffle", "match_end": "points:10000", "decks": 2}
TABLE_OPTIONS = {**DEAL_OPTIONS, "turn_seconds": 3600}
LAST = MAX_SEATS - 1
WORST_RESULT = {"reason": "stock_out", "winner": LAST, "multiplier": 100,
                "points": [POINTS] * MAX_SEATS, "hands": _hands()}
WORST_VIEW = {
    "rules": "classic", "options": DEAL_OPTIONS, "players": MAX_SEATS, "seat": LAST,
    "dealer": LAST, "phase": "muamele", "turn": LAST, "direction": -1,
    "hand": TWO_DECKS, "hand_counts": [MAX_CARDS] * MAX_SEATS, "top": "10s",
    "named_suit": "s", "pile": TWO_DECKS, "stock": MAX_CARDS, "penalty": 1000,
    "first_round": MAX_SEATS, "must_follow": "pisti", "drew": True,
    "scores": [POINTS] * MAX_SEATS, "deal_no": 100000,
    "muamele": {"seat": LAST, "picks": MAX_CARDS, "spread": MAX_CARDS,
                "queue": [[LAST, 1000]] * MAX_SEATS, "winner": LAST, "multiplier": 100},
    "result": WORST_RESULT,
}
# The longest list of legal moves: a muamele pick of every position (K14); a hand's
# plays are fewer and shorter (at most 19 distinct cards match, a jack 4 times).
WORST_MOVES = [{"kind": "pick", "position": p} for p in range(MAX_CARDS)]
# The most one step can tell: a timeout, a penalty drawn across a reshuffle until the
# stock runs out, the deal's end and the match's.
WORST_EVENTS = [
    {"event": "timeout", "seat": LAST, "count": 10000, "bot": True},
    {"event": "draw", "seat": LAST, "count": PENALTY_CARDS, "reason": "penalty",
     "cards": LONGEST_FIRST[:PENALTY_CARDS]},
    {"event": "reshuffle", "count": MAX_CARDS},
    {"event": "draw", "seat": LAST, "count": PENALTY_CARDS, "reason": "penalty",
     "cards": LONGEST_FIRST[:PENALTY_CARDS]},
    {"event": "stock_out", "seat": LAST},
    {"event": "deal_end", "result": WORST_RESULT},
    {"event": "match_end", "totals": [POINTS] * MAX_SEATS, "winners": list(range(MAX_SEATS))},
]
# A full score sheet: every row at its widest.
WORST_SHEET = [{"deal_no": 100000, "reason": "stock_out", "winner": LAST, "multiplier": 100,
                "points": [POINTS] * MAX_SEATS, "totals": [POINTS] * MAX_SEATS}] * SHEET_ROWS
WORST_SEAT = {"kind": "human", "name": text(L.MAX_NAME), "player": L.MAX_ID, "ready": True,
              "connected": False, "held_by_bot": "disconnected", "rematch": False}
WORST_TABLE_INFO = {
    "id": L.MAX_ID, "name": text(L.MAX_TABLE_NAME), "rules": "classic",
    "options": TABLE_OPTIONS, "host": L.MAX_ID, "host_name": text(L.MAX_NAME),
    "phase": "playing", "private": True, "code": text(L.MAX_CODE),
    "seats": [{"seat": i, **WORST_SEAT} for i in range(MAX_SEATS)],
    "spectators": [text(L.MAX_NAME)] * SPECTATOR_NAMES, "spectator_count": L.MAX_ID,
    "rated": True,
}
WORST_ROW = {"id": L.MAX_ID, "name": text(L.MAX_TABLE_NAME), "rules": "classic",
             "options": TABLE_OPTIONS, "seats": MAX_SEATS, "taken": MAX_SEATS,
             "free": MAX_SEATS, "bots": MAX_SEATS, "spectators": L.MAX_ID,
             "phase": "playing", "private": False, "host": text(L.MAX_NAME),
             "rated": True}
POLICY_LIMITS = ("rate", "burst", "ping_seconds", "idle_seconds", "tables_per_player")
WORST_MATCH = {
    "id": L.MAX_ID, "rules": "classic", "options": TABLE_OPTIONS,
    "players": [{"seat": i, "name": text(L.MAX_NAME), "kind": "human", "level": "medium",
                 "total": POINTS, "left_at": 1e12, "forfeit": True}
                for i in range(MAX_SEATS)],
    "winners": list(range(MAX_SEATS)), "deals": L.MAX_ID, "started_at": 1e12,
    "finished_at": 1e12, "private": False}
# A deal's record: every card of two decks at its longest, the largest seed, and a full
# page of the longest move (a jack naming a suit, as the schema allows any card to).
WORST_RECORD = {"options": TABLE_OPTIONS, "dealer": LAST, "deck": " ".join(["10c"] * MAX_CARDS),
                "seed": 2**64 - 1,
                "moves": [{"kind": "play", "card": "10c", "suit": "c"}] * REPLAY_MOVES}

# A step of a replay with `steps`: every card in the hands, the longest move, and the
# most one move can tell.
WORST_STEP = {"move": {"kind": "play", "card": "10c", "suit": "c"}, "seat": LAST,
              "events": WORST_EVENTS, "hands": _hands(), "phase": "muamele", "turn": LAST,
              "direction": -1, "top": "10s", "named_suit": "s", "stock": MAX_CARDS,
              "penalty": 1000, "muamele": WORST_VIEW["muamele"]}


def worst_lobby(rows: int) -> dict[str, Any]:
    return {"type": "lobby", "tables": [WORST_ROW] * rows, "total": L.MAX_ID,
            "offset": L.MAX_ID, "id": L.MAX_ID}


def most_lobby_rows() -> int:
    """The most worst-case rows a `lobby` frame holds within the server frame limit."""
    low, high = 0, LOBBY_ROWS
    while low < high:
        mid = (low + high + 1) // 2
        if len(encode(worst_lobby(mid))) <= MAX_SERVER_FRAME:
            low = mid
        else:
            high = mid - 1
    return low


WORST: dict[str, tuple[Direction, dict[str, Any]]] = {
    "`table`": (C, {
        "type": "table", "id": L.MAX_ID, "table": WORST_TABLE_INFO,
        "you": {"seat": LAST, "spectator": False, "host": True}, "view": WORST_VIEW,
        "match": {"deal_no": 100000, "totals": [POINTS] * MAX_SEATS, "sheet": WORST_SHEET},
        "moves": WORST_MOVES, "deadline": 86400.0}),
    "`table_update`": (C, {"type": "table_update", "table": WORST_TABLE_INFO}),
    "`update`": (C, {"type": "update", "table": L.MAX_ID, "events": WORST_EVENTS,
                     "view": WORST_VIEW, "moves": WORST_MOVES, "deadline": 86400.0}),
    "`lobby_update`": (C, {"type": "lobby_update", "op": "update", "table": L.MAX_ID,
                           "summary": WORST_ROW}),
    "`lobby`, one page": (C, worst_lobby(LOBBY_PAGE)),
    "`history`, one page": (C, {
        "type": "history", "of": "player", "name": text(L.MAX_NAME),
        "matches": [WORST_MATCH] * HISTORY_PAGE, "total": L.MAX_ID, "offset": L.MAX_ID,
        "id": L.MAX_ID}),
    "`replay`": (C, {
        "type": "replay", "match": WORST_MATCH, "deal_no": L.MAX_ID, "result": WORST_RESULT,
        "record": WORST_RECORD, "from": L.MAX_ID, "move_count": L.MAX_ID,
        "sheet": WORST_SHEET, "id": L.MAX_ID}),
    "`replay`, with steps": (C, {
        "type": "replay", "match": WORST_MATCH, "deal_no": L.MAX_ID, "result": WORST_RESULT,
        "record": {**WORST_RECORD, "moves": WORST_RECORD["moves"][:REPLAY_STEP_MOVES]},  # type: ignore[index]
        "from": L.MAX_ID, "move_count": L.MAX_ID,
        "steps": [WORST_STEP] * (REPLAY_STEP_MOVES + 1), "sheet": WORST_SHEET,
        "id": L.MAX_ID}),
    "`lobby`, 4096 rows": (C, worst_lobby(LOBBY_ROWS)),
    "`error`": (C, {
        "type": "error", "code": "x" * 64, "message": text(1000), "rule": "x" * 8,
        "field": text(200), "versions": [2**31 - 1] * 64, "retry_after": 3600.0,
        "limit": L.MAX_ID, "seat": LAST, "waiting_for": list(range(MAX_SEATS)),
        "feature": text(L.MAX_LABEL), "id": L.MAX_ID}),
    "`chat` (server → client)": (C, {
        "type": "chat", "scope": "table", "name": text(L.MAX_NAME), "text": text(L.MAX_CHAT),
        "table": L.MAX_ID, "seat": LAST, "spectator": False}),
    "`welcome`": (C, {
        "type": "welcome", "protocol": PROTOCOL_VERSION, "server": text(L.MAX_LABEL),
        "version": text(L.MAX_LABEL), "player": L.MAX_ID, "name": text(L.MAX_NAME),
        "token": text(L.MAX_TOKEN),
        "limits": {**{k: L.MAX_ID for k in announced_limits()},
                   **{k: L.MAX_ID for k in POLICY_LIMITS}},
        "features": sorted(FEATURES), "resumed": False, "id": L.MAX_ID}),
    "`hello`": (S, {
        "type": "hello", "protocol": 2**31 - 1, "name": text(L.MAX_NAME),
        "token": text(L.MAX_TOKEN), "client": text(L.MAX_LABEL),
        "version": text(L.MAX_LABEL), "features": [text(L.MAX_LABEL)] * L.MAX_FEATURES,
        "id": L.MAX_ID}),
    "`chat` (client → server)": (S, {
        "type": "chat", "text": text(L.MAX_CHAT), "scope": "lobby", "id": L.MAX_ID}),
    "`create_table`": (S, {
        "type": "create_table", "rules": "classic", "seats": MAX_SEATS,
        "options": {k: v for k, v in TABLE_OPTIONS.items() if k not in ("rules", "players")},
        "name": text(L.MAX_TABLE_NAME), "private": False, "id": L.MAX_ID}),
    "`move`": (S, {"type": "move", "move": {"kind": "play", "card": "10c", "suit": "c"},
                   "id": L.MAX_ID}),
}
WORST_LOBBY_ROW = "`lobby`, per row"
MOST_ROWS = "`lobby`, most rows in one frame"


def measured() -> dict[str, int]:
    """Every figure of the doc's frame-size table, computed."""
    sizes = {}
    for name, (direction, msg) in WORST.items():
        validate(msg, direction)
        sizes[name] = len(encode(msg))
    sizes[WORST_LOBBY_ROW] = len(encode(worst_lobby(2))) - len(encode(worst_lobby(1)))
    sizes[MOST_ROWS] = most_lobby_rows()
    return sizes


def number(cell: str) -> int:
    """`10,416` or `2,193 rows`: the figure in a cell."""
    return int(re.sub(r"\D", "", cell))


def test_the_doc_states_the_worst_case_frame_sizes(doc: str) -> None:
    rows = {r[0]: r for r in table_rows(doc, "worst case")}
    sizes = measured()
    assert set(rows) == set(sizes)
    for name, size in sizes.items():
        assert number(rows[name][2]) == size, f"{name}: the doc says {rows[name][2]}, " \
                                              f"it is {size:,}"
    limit = {"client → server": MAX_CLIENT_FRAME, "server → client": MAX_SERVER_FRAME}
    for name, (direction, _msg) in WORST.items():
        assert rows[name][1] == {S: "client → server", C: "server → client"}[direction]
        if name != "`lobby`, 4096 rows":
            assert sizes[name] <= limit[rows[name][1]], name
    # The one frame that would grow with the server's load: a lobby of worst-case rows
    # fits the frame limit only up to MOST_ROWS of them, fewer than the schema's 4096;
    # the reference server's page is far fewer, so its `lobby` always fits.
    assert sizes["`lobby`, 4096 rows"] > MAX_SERVER_FRAME
    assert sizes[MOST_ROWS] < LOBBY_ROWS
    assert len(encode(worst_lobby(sizes[MOST_ROWS] + 1))) > MAX_SERVER_FRAME
    assert LOBBY_PAGE * 4 <= sizes[MOST_ROWS]
    assert sizes["`lobby`, one page"] <= MAX_SERVER_FRAME // 10
    # A page of finished matches and a page of a deal's moves stay far within it too.
    assert sizes["`history`, one page"] <= MAX_SERVER_FRAME // 10
    assert sizes["`replay`"] <= MAX_SERVER_FRAME // 10


def test_the_worst_cases_are_the_largest_of_their_direction() -> None:
    sizes = measured()
    # Lists and replays are paged: their figures are checked against the limit above.
    server = [n for n, (d, _m) in WORST.items()
              if d is C and not n.startswith(("`lobby`", "`history`", "`replay`"))]
    client = [n for n, (d, _m) in WORST.items() if d is S]
    assert max(server, key=sizes.__getitem__) == "`table`"
    assert max(client, key=sizes.__getitem__) == "`hello`"


# -- the rest -----------------------------------------------------------------------------


def test_worked_hex_example_is_what_the_codec_produces(doc: str) -> None:
    data = frame(make_hello("Ayşe"))
    shown = re.search(r"```hex\n(.*?)```", doc, re.S)
    assert shown is not None
    assert bytes.fromhex(shown[1]) == data
    assert json.dumps(make_hello("Ayşe"), ensure_ascii=False) in doc


def test_every_json_block_in_the_doc_is_a_valid_message(doc: str) -> None:
    # Examples in the sequence diagrams and elsewhere must be real messages too.
    for block in re.findall(r"```json\n(.*?)```", doc, re.S):
        msg = json.loads(block)
        errors: list[ProtocolError] = []
        for direction in Direction:
            try:
                validate(msg, direction)
                break
            except ProtocolError as exc:
                errors.append(exc)
        else:
            pytest.fail(f"invalid example {block!r}: {errors}")


def test_the_doc_is_for_this_version(doc: str) -> None:
    assert doc.startswith(f"# The Pis Yedili protocol, version {PROTOCOL_VERSION}\n")
    changes = chapter(doc, f"Appendix: changes from version {PROTOCOL_VERSION - 1}")
    for gone in ("event", "turn", "clock", "deal_end", "match_end", "timeout",
                 "turn_timer", "resume"):
        assert f"`{gone}`" in changes, gone
    for new in ("update", "resync", "private_table", "moves", "deadline"):
        assert f"`{new}`" in changes, new


def test_the_doc_stays_under_twenty_thousand_words(doc: str) -> None:
    # A client author reads this page whole: counted as `wc -w` counts it, generated tables
    # included. A new rule is said once, where it belongs, and linked to from elsewhere.
    assert len(doc.split()) < 20_000


def test_cluster_only_behaviour_has_a_chapter_a_single_server_client_may_skip(
    doc: str,
) -> None:
    body = chapter(doc, "Running in a cluster")
    assert "may skip it" in body.split("\n\n")[0]  # said at its top
    for matter in ("`table_lost`", "`cluster_unavailable`", "A resume answered late",
                   "Answers late while a table is taken over"):
        assert matter in body, matter


def test_the_doc_is_written_for_strangers(doc: str) -> None:
    # No issue numbers, no internal design notes: the reader has this page and rules.md.
    assert re.search(r"(?i)\bissues?\s*#?\d|(?<![\w`])#\d", doc) is None
    assert re.search(r"(?i)design\.md|architecture\.md|v2plan|working notes", doc) is None


def test_the_schema_command_prints_the_whole_schema(doc: str) -> None:
    assert "python -m pisyedili.protocol" in doc
    out = subprocess.run([sys.executable, "-m", "pisyedili.protocol"], check=True,
                         capture_output=True, text=True, timeout=60).stdout
    assert json.loads(out) == json.loads(json.dumps(schema_data()))


def anchor(heading: str) -> str:
    """The id GitHub gives a heading: lower case, punctuation and symbols dropped, spaces
    to hyphens (`` `hello` (client → server)`` is `hello-client--server`)."""
    text = heading.lower().strip()
    return "".join(c for c in text if c.isalnum() or c in " -_").replace(" ", "-")


def test_every_link_inside_the_page_finds_its_heading(doc: str) -> None:
    outside = re.sub(r"```.*?```", "", doc, flags=re.S)
    anchors = [anchor(h) for h in re.findall(r"^#+ (.*)$", outside, re.M)]
    assert len(anchors) == len(set(anchors)), "two headings share an anchor"
    links = set(re.findall(r"\]\(#([^)]+)\)", outside))
    assert links, "the page links to its own sections"
    assert sorted(links - set(anchors)) == []
