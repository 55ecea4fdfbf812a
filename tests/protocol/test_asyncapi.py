"""docs/asyncapi.json: the AsyncAPI description the schema generates, the same as the one
committed, valid for the official parser, and its payload schemas agreeing with the
server's validation on every example message and thousands of broken ones."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protocol_examples import EXAMPLES, MOVES, MUAMELE_VIEW, OVER_VIEW, SUMMARY, TO_CLIENT
from skip_kit import unavailable

from pisyedili.protocol import (
    MESSAGES,
    PROTOCOL_VERSION,
    Direction,
    ProtocolError,
    schema_data,
    validate,
)
from pisyedili.protocol.asyncapi import CONTENT_TYPE, document, ecma_pattern, message_id, render

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "asyncapi.json"
VALIDATE = ROOT / "tests" / "asyncapi" / "validate.mjs"
PARSER = Path(os.environ.get("ASYNCAPI_PARSER_DIR") or ROOT / "build" / "asyncapi")
RUN = "python -m pisyedili.protocol.asyncapi --write docs/asyncapi.json"
S, C = Direction.TO_SERVER, Direction.TO_CLIENT


# -- the committed document ----------------------------------------------------------------


def test_the_committed_document_is_what_the_schema_generates() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), (
        f"docs/asyncapi.json is stale: run `{RUN}`, and commit it with the schema's change")


def test_write_puts_the_document_in_a_file(tmp_path: Path) -> None:
    out = tmp_path / "asyncapi.json"
    done = subprocess.run([sys.executable, "-m", "pisyedili.protocol.asyncapi", "--write",
                           str(out)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8") == render()


def test_it_holds_every_message_of_both_directions_on_both_transports() -> None:
    doc = document()
    ids = {message_id(s) for s in MESSAGES.values()}
    assert set(doc["components"]["messages"]) == ids
    assert {"to_server.ping", "to_client.ping", "to_server.hello", "to_client.welcome"} <= ids
    for name, channel in doc["channels"].items():
        assert set(channel["messages"]) == ids, name
    assert doc["channels"]["websocket"]["address"] == "/ws"
    assert {s["protocol"] for s in doc["servers"].values()} == {"tcp", "ws"}
    sent = {op["action"]: {m["$ref"].rsplit("/", 1)[1] for m in op["messages"]}
            for name, op in doc["operations"].items() if name.startswith("tcp.")}
    assert sent == {"receive": {message_id(s) for s in MESSAGES.values() if s.direction is S},
                    "send": {message_id(s) for s in MESSAGES.values() if s.direction is C}}
    assert doc["info"]["version"] == str(PROTOCOL_VERSION)
    assert doc["defaultContentType"] == CONTENT_TYPE == "application/msgpack"


def test_each_payload_names_its_type_and_requires_what_the_schema_requires() -> None:
    schemas = document()["components"]["schemas"]
    for spec in MESSAGES.values():
        payload = schemas[message_id(spec)]
        assert payload["properties"]["type"]["const"] == spec.type
        assert payload["required"] == ["type", *(f.name for f in spec.fields if f.required)]
        assert list(payload["properties"]) == ["type", *(f.name for f in spec.fields)]


# -- patterns --------------------------------------------------------------------------------


def _patterns(data: Any) -> Iterator[str]:
    """Every string pattern in the schema's plain-data form."""
    if isinstance(data, dict):
        if data.get("kind") == "str" and "pattern" in data:
            yield data["pattern"]
        for value in data.values():
            yield from _patterns(value)
    elif isinstance(data, list):
        for value in data:
            yield from _patterns(value)


PATTERNS = sorted(set(_patterns(schema_data())))


def test_the_schema_has_the_patterns_these_tests_expect() -> None:
    assert len(PATTERNS) >= 2  # a card, and a match's end (`options.match_end`)
    assert any(p.startswith("(?i)") for p in PATTERNS)  # the card's


def _candidates(pattern: str) -> st.SearchStrategy[str]:
    matching = st.from_regex(pattern, fullmatch=True)
    return st.one_of(matching, matching.map(str.swapcase), matching.map(lambda s: s + "x"),
                     matching.map(lambda s: s[1:]), st.text(max_size=12))


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_pattern_matches_the_same_strings_written_for_json_schema(pattern: str) -> None:
    ecma = ecma_pattern(pattern)
    assert "(?i)" not in ecma and ecma.startswith("^") and ecma.endswith("$")

    @settings(max_examples=300, deadline=None)
    @given(_candidates(pattern))
    def agrees(text: str) -> None:
        assert bool(re.fullmatch(pattern, text)) == bool(re.fullmatch(ecma, text)), text

    agrees()


def test_a_caseless_pattern_takes_both_cases_of_letters_and_ranges() -> None:
    assert ecma_pattern(r"(?i)[a-c]x\d") == r"^(?:[a-cA-C][xX]\d)$"
    assert ecma_pattern(r"ab|c") == r"^(?:ab|c)$"


@pytest.mark.parametrize("pattern", [r"a(?i)b", r"(?P<n>a)", r"\bword", r"(?i)a(?s:.)"])
def test_a_pattern_it_cannot_write_is_refused_rather_than_changed(pattern: str) -> None:
    with pytest.raises(ValueError, match="JSON Schema pattern"):
        ecma_pattern(pattern)


# -- the official parser ---------------------------------------------------------------------


def _verdict(payload: dict[str, Any], direction: Direction) -> bool:
    try:
        validate(payload, direction)
    except ProtocolError:
        return False
    return True


def _wrong(value: object) -> object:
    return "a string" if isinstance(value, dict | list) else {"a": 1}


def _broken(msg: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """`msg` with one value anywhere in it of the wrong type, or one map key removed."""
    def walk(node: Any, path: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
        children = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in children:
            yield (*path, key)
            if isinstance(value, dict | list):
                yield from walk(value, (*path, key))

    for path in walk(msg, ()):
        if path == ("type",):
            continue
        *head, last = path
        for drop in (False, True):
            copied = copy.deepcopy(msg)
            parent = copied
            for key in head:
                parent = parent[key]
            if drop and isinstance(parent, dict):
                del parent[last]
            elif not drop:
                parent[last] = _wrong(parent[last])
            else:
                continue
            yield copied


EDGES: list[tuple[Direction, dict[str, Any]]] = [
    (S, {"type": "move", "move": {"kind": "play", "card": "10H"}}),
    (S, {"type": "move", "move": {"kind": "play", "card": "tS", "suit": "d"}}),
    (S, {"type": "move", "move": {"kind": "play", "card": "1s"}}),
    (S, {"type": "move", "move": {"kind": "play", "card": "Jc", "suit": "x"}}),
    (S, {"type": "move", "move": {"kind": "fly"}}),
    (S, {"type": "move", "move": {"kind": "pick", "position": 103}}),
    (S, {"type": "move", "move": {"kind": "pick", "position": 104}}),
    (S, {"type": "join_table", "table": 3, "code": "K7QX2M"}),
    (S, {"type": "join_table"}),
    (S, {"type": "join_table", "table": 3}),
    (S, {"type": "hello", "protocol": 2, "name": "x" * 24}),
    (S, {"type": "hello", "protocol": 2, "name": "x" * 25}),
    (S, {"type": "hello", "protocol": 2, "name": "Ayşe", "features": ["x"] * 33}),
    (S, {"type": "sit", "seat": 5}),
    (S, {"type": "sit", "seat": 6}),
    (S, {"type": "sit", "seat": -1}),
    (S, {"type": "sit", "seat": True}),
    *((S, {"type": "create_table", "rules": "classic", "seats": 3,
           "options": {"match_end": end, "future_option": 1}})
      for end in ("deals:1", "deals:100", "deals:101", "deals:0", "points:10000",
                  "points:10001", "Deals:4", "deals:04", "deals:4 ")),
    (S, {"type": "login", "name": "Ayşe", "password": "p", "token": "t"}),
    (C, {**TO_CLIENT["update"], "events": [{"event": "future_thing", "x": [1]}]}),
    (C, {**TO_CLIENT["update"], "events": [{"event": "x" * 65}]}),
    (C, {**TO_CLIENT["update"], "events": [{"event": "pisti"}]}),
    (C, {**TO_CLIENT["update"], "view": MUAMELE_VIEW}),
    (C, {**TO_CLIENT["update"], "view": OVER_VIEW, "moves": MOVES[:1]}),
    (C, {**TO_CLIENT["update"], "moves": []}),
    (C, {**TO_CLIENT["table"], "view": None, "match": None}),
    (C, {**TO_CLIENT["lobby"], "tables": [{**SUMMARY, "seats": 7}]}),
    (C, {**TO_CLIENT["welcome"], "limits": {"frame": "big"}}),
    (C, {**TO_CLIENT["error"], "retry_after": 3600.5}),
]


def samples() -> list[dict[str, Any]]:
    """Example messages, whole and broken, each with the server's verdict on it."""
    found = []
    cases = [(d, m) for d, table in EXAMPLES.items() for m in table.values()] + EDGES
    for direction, msg in cases:
        for payload in (msg, {**msg, "x_future": {"any": [1]}}, *_broken(msg)):
            found.append({"message": f"{direction}.{payload['type']}", "payload": payload,
                          "valid": _verdict(payload, direction)})
    return found


def parser(*args: str) -> subprocess.CompletedProcess[str]:
    node = shutil.which("node")
    if node is None:
        unavailable("the AsyncAPI parser", "node is not installed")
    if not (PARSER / "node_modules" / "@asyncapi" / "parser").is_dir():
        unavailable("the AsyncAPI parser", f"@asyncapi/parser is not installed in {PARSER} "
                    "(.ci/run installs it: `npm ci` of tests/asyncapi/package.json there)")
    env = {**os.environ, "ASYNCAPI_PARSER_DIR": str(PARSER)}
    return subprocess.run([str(node), str(VALIDATE), *args], capture_output=True, text=True,
                          timeout=300, env=env)


def test_the_official_parser_finds_no_error_and_its_schemas_agree_with_the_server(
        tmp_path: Path) -> None:
    found = samples()
    assert sum(not s["valid"] for s in found) > 1000 < sum(s["valid"] for s in found) * 10
    path = tmp_path / "samples.json"
    path.write_text(json.dumps(found), encoding="utf-8")
    done = parser(str(DOC), str(path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "valid AsyncAPI 3.0.0" in done.stdout
    assert "error:" not in done.stdout
    assert f"{len(found)} samples, 0 where the schema and the server disagree" in done.stdout


def small_document() -> dict[str, Any]:
    """A valid document of one message, `note`, whose payload needs a `text`: quick to
    parse, for the checks of the validation itself."""
    note = {"payload": {"type": "object", "properties": {"text": {"type": "string"}},
                        "required": ["text"]}}
    send = {"action": "send", "channel": {"$ref": "#/channels/notes"},
            "messages": [{"$ref": "#/channels/notes/messages/note"}]}
    return {"asyncapi": "3.0.0", "info": {"title": "notes", "version": "1"},
            "channels": {"notes": {"address": "/notes", "messages": {"note": note}}},
            "operations": {"notes.send": send}}


def test_the_validation_fails_and_says_why_on_a_broken_document(tmp_path: Path) -> None:
    doc = small_document()
    doc["operations"]["notes.send"]["messages"].append(
        {"$ref": "#/channels/notes/messages/nothing"})
    del doc["info"]["version"]
    path = tmp_path / "asyncapi.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    done = parser(str(path))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "error: operations.notes.send.messages.1.$ref" in done.stdout
    assert "nothing' does not exist" in done.stdout
    assert 'error: info: "info" property must have required property "version"' in done.stdout


def test_the_validation_fails_where_a_schema_and_a_verdict_disagree(tmp_path: Path) -> None:
    path = tmp_path / "asyncapi.json"
    path.write_text(json.dumps(small_document()), encoding="utf-8")
    found = tmp_path / "samples.json"
    found.write_text(json.dumps([
        {"message": "note", "payload": {"text": "hi"}, "valid": True},
        {"message": "note", "payload": {"text": 1}, "valid": False},
        {"message": "note", "payload": {}, "valid": True},
        {"message": "note", "payload": {"text": "hi"}, "valid": False},
        {"message": "memo", "payload": {}, "valid": True},
    ]), encoding="utf-8")
    done = parser(str(path), str(found))
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.count("disagrees: ") == 3
    assert "disagrees: note: {} refused: data must have required property 'text'" in done.stdout
    assert 'disagrees: note: {"text":"hi"} accepted' in done.stdout
    assert "disagrees: memo: no such message in the document" in done.stdout
    assert "5 samples, 3 where the schema and the server disagree" in done.stdout
