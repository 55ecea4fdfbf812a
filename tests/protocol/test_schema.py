"""Schema validation: every message in both directions, good and bad examples."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from protocol_examples import (
    EXAMPLES,
    MUAMELE_VIEW,
    OVER_VIEW,
    TO_CLIENT,
    TO_SERVER,
    VIEW,
)

from pisyedili.protocol import (
    MESSAGES,
    Direction,
    ProtocolError,
    request_id,
    schema_data,
    spec,
    validate,
)

S, C = Direction.TO_SERVER, Direction.TO_CLIENT
ALL = [(d, t) for d, table in EXAMPLES.items() for t in table]


def code_of(msg: dict[str, Any], direction: Direction) -> tuple[str, str | None]:
    with pytest.raises(ProtocolError) as info:
        validate(msg, direction)
    return info.value.code, info.value.extra.get("field")


def test_every_message_type_has_an_example() -> None:
    assert set(MESSAGES) == {(d, t) for d, t in ALL}


@pytest.mark.parametrize(("direction", "type_"), ALL)
def test_good_examples_validate(direction: Direction, type_: str) -> None:
    msg = EXAMPLES[direction][type_]
    assert validate(msg, direction) == msg


@pytest.mark.parametrize(("direction", "type_"), ALL)
def test_unknown_fields_are_ignored(direction: Direction, type_: str) -> None:
    msg = {**EXAMPLES[direction][type_], "x_future": {"any": [1, 2]}}
    assert validate(msg, direction) == msg


@pytest.mark.parametrize(("direction", "type_"), ALL)
def test_every_required_field_is_required(direction: Direction, type_: str) -> None:
    for f in spec(type_, direction).fields:
        if f.required:
            msg = {k: v for k, v in EXAMPLES[direction][type_].items() if k != f.name}
            assert code_of(msg, direction) == ("missing_field", f.name)


@pytest.mark.parametrize(("direction", "type_"), ALL)
def test_every_field_refuses_a_wrong_type(direction: Direction, type_: str) -> None:
    for f in spec(type_, direction).fields:
        data = f.type.to_data()
        kind = data["inner"]["kind"] if data["kind"] == "nullable" else data["kind"]
        wrong: object = "a string" if kind in ("map", "dict", "tagged") else {"a": 1}
        msg = {**EXAMPLES[direction][type_], f.name: wrong}
        assert code_of(msg, direction) == ("bad_field", f.name)


def test_unknown_type_is_refused_in_either_direction() -> None:
    assert code_of({"type": "teleport"}, S)[0] == "unknown_type"
    assert code_of({"type": "welcome"}, S)[0] == "unknown_type"  # server-only type
    assert code_of({"type": "hello", "protocol": 1, "name": "a"}, C)[0] == "unknown_type"
    assert code_of({"id": 1}, S)[0] == "missing_type"


@pytest.mark.parametrize(
    ("msg", "field"),
    [
        ({"type": "hello", "protocol": "1", "name": "a"}, "protocol"),
        ({"type": "hello", "protocol": 1, "name": ""}, "name"),
        ({"type": "hello", "protocol": 1, "name": "   "}, "name"),
        ({"type": "hello", "protocol": 1, "name": "x" * 25}, "name"),
        ({"type": "hello", "protocol": 1, "name": "a\nb"}, "name"),
        ({"type": "hello", "protocol": 1, "name": "evil\u202egnp.exe"}, "name"),  # bidi
        ({"type": "hello", "protocol": 1, "name": "a", "features": ["chat", 3]}, "features[1]"),
        ({"type": "hello", "protocol": 1, "name": "a", "features": ["f"] * 33}, "features"),
        ({"type": "hello", "protocol": True, "name": "a"}, "protocol"),  # bool is no int
        ({"type": "ping", "id": -1}, "id"),
        ({"type": "ping", "id": 2**53}, "id"),
        ({"type": "ping", "id": 1.0}, "id"),
        ({"type": "sit", "seat": 6}, "seat"),
        ({"type": "sit", "seat": -1}, "seat"),
        ({"type": "create_table", "rules": "poker", "seats": 4}, "rules"),
        ({"type": "create_table", "rules": "classic", "seats": 7}, "seats"),
        ({"type": "create_table", "rules": "classic", "seats": 1}, "seats"),
        ({"type": "create_table", "rules": "classic", "seats": 2,
          "options": {"ten": "sideways"}}, "options.ten"),
        ({"type": "create_table", "rules": "classic", "seats": 2,
          "options": {"match_end": "deals:0"}}, "options.match_end"),
        ({"type": "create_table", "rules": "classic", "seats": 2,
          "options": {"match_end": "forever"}}, "options.match_end"),
        ({"type": "create_table", "rules": "classic", "seats": 2,
          "options": {"decks": 3}}, "options.decks"),
        ({"type": "add_bot", "seat": 1, "level": "godlike"}, "level"),
        ({"type": "ready", "ready": 1}, "ready"),
        ({"type": "move", "move": {"kind": "play"}}, "move.card"),
        ({"type": "move", "move": {"kind": "play", "card": "1h"}}, "move.card"),
        ({"type": "move", "move": {"kind": "play", "card": "7x"}}, "move.card"),
        ({"type": "move", "move": {"kind": "play", "card": "10"}}, "move.card"),
        ({"type": "move", "move": {"kind": "play", "card": "Jh", "suit": "x"}}, "move.suit"),
        ({"type": "move", "move": {"kind": "play", "card": "Jh", "suit": "hs"}}, "move.suit"),
        ({"type": "move", "move": {"kind": "pick"}}, "move.position"),
        ({"type": "move", "move": {"kind": "pick", "position": 104}}, "move.position"),
        ({"type": "move", "move": {"kind": "fly"}}, "move.kind"),
        ({"type": "move", "move": {}}, "move.kind"),
        ({"type": "move", "move": ["play", "7h"]}, "move"),
        ({"type": "chat", "text": "x" * 301}, "text"),
        ({"type": "chat", "text": "hi\x1b[2J"}, "text"),  # terminal escape
        ({"type": "chat", "text": "hi", "scope": "world"}, "scope"),
        ({"type": "rematch", "agree": "yes"}, "agree"),
    ],
)
def test_bad_client_messages_name_the_field(msg: dict[str, Any], field: str) -> None:
    code, named = code_of(msg, S)
    assert named == field
    assert code in {"bad_field", "missing_field"}


@pytest.mark.parametrize(
    "move",
    [
        {"kind": "play", "card": "7h"},
        {"kind": "play", "card": "10d"},
        {"kind": "play", "card": "Td"},
        {"kind": "play", "card": "qs"},
        {"kind": "play", "card": "Jh", "suit": "s"},
        {"kind": "draw"},
        {"kind": "pass"},
        {"kind": "pick", "position": 0},
    ],
)
def test_wire_moves_validate(move: dict[str, Any]) -> None:
    validate({"type": "move", "move": move}, S)


def test_join_table_takes_exactly_one_of_table_or_code() -> None:
    validate({"type": "join_table", "table": 3}, S)
    validate({"type": "join_table", "code": "ABC"}, S)
    assert code_of({"type": "join_table"}, S) == ("missing_field", "table")
    assert code_of({"type": "join_table", "table": 3, "code": "ABC"}, S) == (
        "bad_field", "code")


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (("table", "seats", 0, "kind"), "robot", "table.seats[0].kind"),
        (("table", "seats", 1, "ready"), None, "table.seats[1].ready"),
        (("table", "host"), "Ayşe", "table.host"),
        (("table", "phase"), "lunch", "table.phase"),
        (("you", "seat"), 9, "you.seat"),
        (("view",), [], "view"),
    ],
)
def test_nested_server_shapes_are_checked(path: tuple[Any, ...], value: object,
                                          field: str) -> None:
    msg = copy.deepcopy(TO_CLIENT["table"])
    node: Any = msg
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    assert code_of(msg, C) == ("bad_field", field)


def test_table_needs_two_seats_at_least() -> None:
    msg = copy.deepcopy(TO_CLIENT["table_update"])
    msg["table"]["seats"] = msg["table"]["seats"][:1]
    assert code_of(msg, C) == ("bad_field", "table.seats")


@pytest.mark.parametrize("kind", ["update", "table"])
def test_offered_moves_are_never_empty_and_always_valid(kind: str) -> None:
    base = {**TO_CLIENT[kind], "view": VIEW, "match": {"deal_no": 1, "totals": [0, 0, 0]}}
    validate({**base, "moves": [{"kind": "draw"}], "deadline": 12.5}, C)
    assert code_of({**base, "moves": []}, C) == ("bad_field", "moves")
    assert code_of({**base, "moves": [{"kind": "play", "card": "Zz"}]}, C) == (
        "bad_field", "moves[0].card")
    assert code_of({**base, "moves": [{"kind": "draw"}], "deadline": float("nan")}, C) == (
        "bad_field", "deadline")


def test_an_update_may_hold_no_events_but_always_a_view() -> None:
    validate({**TO_CLIENT["update"], "events": []}, C)
    update = {k: v for k, v in TO_CLIENT["update"].items() if k != "view"}
    assert code_of(update, C) == ("missing_field", "view")


def test_event_needs_its_name() -> None:
    msg = {**TO_CLIENT["update"], "events": [{"seat": 1}]}
    assert code_of(msg, C) == ("missing_field", "events[0].event")


def test_welcome_limits_are_integers() -> None:
    msg = {**TO_CLIENT["welcome"], "limits": {"frame": "big"}}
    assert code_of(msg, C) == ("bad_field", "limits.frame")


def test_request_id_survives_a_failed_validation() -> None:
    msg = {"type": "move", "id": 12, "move": "nonsense"}
    assert code_of(msg, S)[0] == "bad_field"
    assert request_id(msg) == 12
    assert request_id({"type": "move", "id": "12"}) is None
    assert request_id({"type": "move", "id": True}) is None


def test_validate_returns_a_copy() -> None:
    msg = dict(TO_SERVER["sit"])
    out = validate(msg, S)
    out["seat"] = 5
    assert msg["seat"] == 2


def test_schema_data_is_json_and_covers_every_message() -> None:
    data = json.loads(json.dumps(schema_data()))
    assert {(m["direction"], m["type"]) for m in data["messages"]} == {
        (str(d), t) for d, t in MESSAGES}
    move = data["shapes"]["move"]
    assert set(move["variants"]) == {"play", "draw", "pass", "pick"}


def test_feature_gated_messages_name_real_features() -> None:
    from pisyedili.protocol import FEATURES

    gated = {m.feature for m in MESSAGES.values() if m.feature}
    assert gated <= set(FEATURES)
    assert spec("chat", S).feature == spec("chat", C).feature == "chat"
    assert spec("rematch", S).feature == spec("rematch", C).feature == "rematch"
    for kind in ("history", "replay"):
        assert spec(kind, S).feature == spec(kind, C).feature == "history"
    assert gated == set(FEATURES)  # every feature gates some message


def test_presence_is_said_of_requests_only() -> None:
    data = schema_data()
    for m in data["messages"]:
        assert (m["presence"] is None) == (m["direction"] == "to_client"), m["type"]
    quiet = {m.type for m in MESSAGES.values()
             if m.direction is S and not m.presence}
    assert quiet == {"ping", "pong", "resync", "lobby_subscribe", "lobby_unsubscribe",
                     "history", "replay",
                     # Account business, reads and operator actions are not play.
                     "register", "login", "logout", "passwd", "leaderboard", "profile",
                     "kick", "mute", "unmute", "ban", "unban", "close_table", "announce"}


def test_the_schema_can_be_printed_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    from pisyedili.protocol.__main__ import main

    main()
    data = json.loads(capsys.readouterr().out)
    hello = next(m for m in data["messages"] if m["type"] == "hello")
    name = next(f for f in hello["fields"] if f["name"] == "name")
    assert name["required"] is True
    assert name["type"]["max_len"] == 24


@pytest.mark.parametrize("view", [VIEW, MUAMELE_VIEW, OVER_VIEW,
                                  {**VIEW, "seat": None, "hand": None}])
def test_views_of_every_phase_validate(view: dict[str, Any]) -> None:
    validate({**TO_CLIENT["update"], "view": view}, C)


@pytest.mark.parametrize(
    ("key", "value", "field"),
    [
        ("hand", ["7h", "Zz"], "view.hand[1]"),
        ("phase", "opening", "view.phase"),
        ("direction", 2, "view.direction"),
        ("named_suit", "x", "view.named_suit"),
        ("must_follow", "seven", "view.must_follow"),
        ("result", {"reason": "out"}, "view.result.winner"),
        ("muamele", {"seat": 1}, "view.muamele.picks"),
    ],
)
def test_view_keys_are_checked(key: str, value: object, field: str) -> None:
    msg = {**TO_CLIENT["update"], "view": {**VIEW, key: value}}
    assert code_of(msg, C)[1] == field


@pytest.mark.parametrize(
    "event",
    [
        {"event": "deal_start", "deal_no": 2, "dealer": 0},
        {"event": "play", "seat": 1, "card": "Jd", "suit": "s"},
        {"event": "penalty", "seat": 2, "count": 6},
        {"event": "skip", "seat": 0},
        {"event": "reverse", "direction": -1},
        {"event": "bounce", "seat": 1},
        {"event": "pisti", "seat": 1},
        {"event": "draw", "seat": 2, "count": 3, "reason": "penalty", "cards": ["4h", "Kd", "7c"]},
        {"event": "draw", "seat": 2, "count": 3, "reason": "penalty"},  # as others see it
        {"event": "reshuffle", "count": 30},
        {"event": "stock_out", "seat": 0},
        {"event": "pass", "seat": 0},
        {"event": "muamele", "seat": 2, "picks": 3, "spread": 40},
        {"event": "pick", "seat": 2, "position": 17, "card": "5c", "picks": 2},
        {"event": "deal_end", "result": {"reason": "stock_out", "winner": None, "multiplier": 1,
                                         "points": [12, 30], "hands": [["2c", "Qd"], ["Jh"]]}},
        {"event": "match_end", "totals": [61, 40, 40], "winners": [1, 2]},
        {"event": "timeout", "seat": 1, "count": 2, "bot": True},
        {"event": "fireworks", "anything": [1, 2]},  # unknown events pass: forward compatible
    ],
)
def test_events_validate(event: dict[str, Any]) -> None:
    validate({**TO_CLIENT["update"], "events": [event]}, C)


@pytest.mark.parametrize(
    ("event", "field"),
    [
        ({"event": "play", "seat": 1}, "events[0].card"),
        ({"event": "play", "seat": 9, "card": "7h"}, "events[0].seat"),
        ({"event": "draw", "seat": 1, "count": 1, "reason": "draw", "cards": ["XX"]},
         "events[0].cards[0]"),
        ({"event": "reverse", "direction": 5}, "events[0].direction"),
        ({"event": "deal_end", "result": {}}, "events[0].result.reason"),
        ({"event": "timeout", "seat": 1, "count": 1}, "events[0].bot"),
        ({"event": 7}, "events[0].event"),
        ({"seat": 1}, "events[0].event"),
    ],
)
def test_known_events_are_checked(event: dict[str, Any], field: str) -> None:
    assert code_of({**TO_CLIENT["update"], "events": [event]}, C)[1] == field
