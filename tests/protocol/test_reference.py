"""`python -m pisyedili.protocol.reference`: the reference tables of docs/protocol.md,
generated from the schema, and the page holding exactly what it prints now."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pisyedili.protocol import ERRORS, MESSAGES, Direction, Limits, announced_limits
from pisyedili.protocol.messages import FIELD_LIMIT_DOCS
from pisyedili.protocol.reference import render, replace, sections
from pisyedili.protocol.shapes import EVENT, SHAPES
from pisyedili.protocol.types import MapT, TaggedT

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
COMMAND = [sys.executable, "-m", "pisyedili.protocol.reference"]
RUN = "python -m pisyedili.protocol.reference --write docs/protocol.md"


def reference(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*COMMAND, *args], capture_output=True, text=True, timeout=60)


def marked(name: str, body: str) -> str:
    return f"<!-- reference:{name} -->\n{body}\n<!-- /reference:{name} -->"


# -- the page -----------------------------------------------------------------------------


def test_the_docs_reference_tables_are_what_the_schema_generates() -> None:
    text = DOC.read_text(encoding="utf-8")
    tables = sections()
    stale = sorted(name for name, body in tables.items() if marked(name, body) not in text)
    assert not stale, f"docs/protocol.md's generated tables are out of date ({', '.join(stale)})"\
                      f": run `{RUN}`"
    assert replace(text, tables) == text, f"run `{RUN}`"


def test_write_leaves_a_current_copy_of_the_doc_as_it_is(tmp_path: Path) -> None:
    copy = tmp_path / "protocol.md"
    shutil.copyfile(DOC, copy)
    done = reference("--write", str(copy))
    assert done.returncode == 0, done.stderr
    assert copy.read_bytes() == DOC.read_bytes()


def test_write_brings_a_stale_copy_back_to_the_doc(tmp_path: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    name, body = "errors", sections()["errors"]
    stale = text.replace(marked(name, body), marked(name, "| code |\n|---|\n| `gone` |"))
    assert stale != text
    copy = tmp_path / "protocol.md"
    copy.write_text(stale, encoding="utf-8")
    done = reference("--write", str(copy))
    assert done.returncode == 0, done.stderr
    assert copy.read_text(encoding="utf-8") == text


def test_write_refuses_a_page_that_lacks_a_table_and_leaves_it_alone(tmp_path: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    lacking = text.replace(marked("features", sections()["features"]), "")
    copy = tmp_path / "protocol.md"
    copy.write_text(lacking, encoding="utf-8")
    done = reference("--write", str(copy))
    assert done.returncode == 1
    assert "not marked: features" in done.stderr
    assert copy.read_text(encoding="utf-8") == lacking


# -- the command's output ------------------------------------------------------------------


def test_the_command_prints_every_table_in_its_markers_the_same_each_time() -> None:
    first, second = reference(), reference()
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout == render(sections())
    for name in sections():
        assert f"<!-- reference:{name} -->" in first.stdout


def test_the_tables_come_sorted_by_name_and_cover_every_message_and_shape() -> None:
    tables = sections()
    assert list(tables) == sorted(tables)
    for spec in MESSAGES.values():
        assert f"fields:{spec.direction}:{spec.type}" in tables
    assert {f"shape:{name}" for name in SHAPES} <= set(tables)
    assert {"requests", "server-messages", "limits", "welcome-limits", "errors",
            "errors-closing", "features",
            "variants:event"} <= set(tables)


def test_summary_rows_are_sorted() -> None:
    def first_column(name: str) -> list[str]:
        return [line.split(" | ")[0].strip("| `")
                for line in sections()[name].splitlines()[2:]]
    assert first_column("errors") == sorted(c for c in ERRORS if not ERRORS[c].closes)
    assert first_column("errors-closing") == sorted(c for c in ERRORS if ERRORS[c].closes)
    assert first_column("requests") == sorted(
        t for d, t in MESSAGES if d is Direction.TO_SERVER)
    assert first_column("server-messages") == sorted(
        t for d, t in MESSAGES if d is Direction.TO_CLIENT)


# -- replacing between markers --------------------------------------------------------------


def test_replace_swaps_only_what_lies_between_markers() -> None:
    text = "before\n<!-- reference:a -->\nold\n<!-- /reference:a -->\nafter\n"
    assert replace(text, {"a": "new"}) == ("before\n<!-- reference:a -->\nnew\n"
                                           "<!-- /reference:a -->\nafter\n")


@pytest.mark.parametrize(("text", "problem"), [
    ("<!-- reference:a -->\nx\n<!-- /reference:a -->\n<!-- reference:b -->\n"
     "<!-- /reference:b -->\n", "not generated: b"),
    ("no markers at all\n", "not marked: a"),
    ("<!-- reference:a -->\n<!-- /reference:a -->\n" * 2, "marked twice: a"),
    ("<!-- reference:a -->\nnever closed\n", "opened but not closed: a"),
])
def test_replace_refuses_a_page_out_of_step_with_the_tables(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        replace(text, {"a": "new"})


# -- what the schema must say for the tables -------------------------------------------------


def test_every_table_cell_the_schema_fills_has_words() -> None:
    for spec in MESSAGES.values():
        assert spec.doc and all(f.doc for f in spec.fields), spec.type
    for name, shape in SHAPES.items():
        if isinstance(shape, MapT):
            assert all(f.doc for f in shape.fields), name
        else:
            assert isinstance(shape, TaggedT)
            assert shape.doc, name
            assert all(f.doc for fields in shape.variants.values() for f in fields), name
    assert isinstance(EVENT, TaggedT)
    assert set(EVENT.variant_docs) == set(EVENT.variants)
    decoder = {f.name for f in dataclasses.fields(Limits) if f.metadata.get("doc")}
    assert decoder == {f.name for f in dataclasses.fields(Limits)}
    for key in announced_limits():
        assert key in decoder or FIELD_LIMIT_DOCS.get(key), key


def test_the_fields_an_error_code_carries_are_fields_of_error() -> None:
    error = MESSAGES[(Direction.TO_CLIENT, "error")]
    extras = {f.name for f in error.fields if not f.required} - {"id"}
    for code, info in ERRORS.items():
        assert set(info.fields) <= extras, code
        assert len(set(info.fields)) == len(info.fields), code
