"""docs/protocol.md agrees with the code: messages, fields, shapes, errors, features,
limits, examples and the worked hex example. Edit both together, or this fails."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pisyedili.protocol import (
    CLIENT_LIMITS,
    ERRORS,
    FEATURES,
    MESSAGES,
    SERVER_LIMITS,
    Direction,
    ProtocolError,
    frame,
    make_hello,
    validate,
)
from pisyedili.protocol.shapes import EVENT, SHAPES
from pisyedili.protocol.types import Field, MapT, TaggedT

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
ARROW = {"client → server": Direction.TO_SERVER, "server → client": Direction.TO_CLIENT}
HEADING = re.compile(r"^### `([a-z_]+)`(?: \((client → server|server → client)\))?\s*$")


def field_rows(fields: tuple[Field, ...]) -> list[tuple[str, str, str]]:
    """How a field table must read: name, type, required."""
    return [(f"`{f.name}`", f.type.describe(), "yes" if f.required else "no") for f in fields]


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


@pytest.fixture(scope="module")
def doc() -> str:
    return DOC.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def doc_sections(doc: str) -> dict[tuple[Direction | None, str], str]:
    return sections(doc)


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
    rows = [tuple(r[:3]) for r in table_rows(body, "field")]
    assert rows == field_rows(MESSAGES[key].fields)


@pytest.mark.parametrize("key", sorted(MESSAGES), ids=lambda k: f"{k[0]}-{k[1]}")
def test_message_examples_are_valid(
    key: tuple[Direction, str], doc_sections: dict[tuple[Direction | None, str], str]
) -> None:
    examples = json_examples(doc_sections[key])
    assert examples, f"{key[1]} has no example"
    for ex in examples:
        assert ex["type"] == key[1]
        validate(ex, key[0])


def test_shared_shapes_match_the_schema(
    doc_sections: dict[tuple[Direction | None, str], str],
) -> None:
    for name, shape in SHAPES.items():
        body = doc_sections[(None, name)]
        rows = [tuple(r[:3]) for r in table_rows(body, "field")]
        if isinstance(shape, MapT):
            assert rows == field_rows(shape.fields), name
        elif shape.open:
            # Open tagged shapes (events) list their variants in their own table.
            assert rows == [(f"`{shape.tag}`", "str", "yes")], name
        else:
            expected = [("`kind`", '"' + k + '"', "yes") for k in shape.variants]
            expected += [row for fields in shape.variants.values() for row in field_rows(fields)]
            assert sorted(set(rows)) == sorted(set(expected)), name


def test_event_table_matches_the_event_variants(doc: str) -> None:
    assert isinstance(EVENT, TaggedT)
    documented = {}
    for name, fields, _meaning in table_rows(doc, "event"):
        parsed = re.findall(r"`([a-z_]+)`(\??)", fields)
        documented[name.strip("`")] = [(f, opt == "") for f, opt in parsed]
    expected = {tag: [(f.name, f.required) for f in fields]
                for tag, fields in EVENT.variants.items()}
    assert documented == expected


def test_error_table_matches_the_registry(doc: str) -> None:
    rows = table_rows(doc, "code")
    documented = {r[0].strip("`"): r for r in rows}
    assert set(documented) == set(ERRORS)
    for code, row in documented.items():
        assert row[1] == ("yes" if ERRORS[code].closes else "no"), code
        assert row[2] == ERRORS[code].meaning, code


def test_feature_table_matches(doc: str) -> None:
    rows = table_rows(doc, "feature")
    assert {r[0].strip("`"): r[1] for r in rows} == FEATURES


def test_limit_table_matches(doc: str) -> None:
    rows = table_rows(doc, "limit")
    table = {r[0].strip("`"): (r[1], r[2]) for r in rows}
    for name in ("frame", "depth", "str_len", "bin_len", "array_len", "map_len"):
        assert table[name] == (str(getattr(CLIENT_LIMITS, name)),
                               str(getattr(SERVER_LIMITS, name))), name


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
