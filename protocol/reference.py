"""The reference tables of docs/protocol.md, generated from the schema.

The page's prose is written by hand; its tables of messages, fields, shapes, events,
limits (the decoders' and those `welcome` announces), error codes and features are
printed here from the registries that validate every frame (schema.py, shapes.py,
errors.py, limits.py, messages.py, version.py), so they cannot drift from the code. Each
table sits in the page between two marker comments, `<!-- reference:NAME -->` and
`<!-- /reference:NAME -->`;

    python -m pisyedili.protocol.reference                          # print every table
    python -m pisyedili.protocol.reference --write docs/protocol.md # refresh them in place

A description a table needs belongs in the schema (a `doc` on its spec), never here.
Everything but `main` is pure, and the output is deterministic: rows follow the
registries' tuples (fields, events) or are sorted (messages, codes, features).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from collections.abc import Iterable, Mapping, Sequence

from .codec import limits_for
from .errors import ERRORS
from .limits import Limits
from .messages import FIELD_LIMIT_DOCS, announced_limits
from .schema import MESSAGES, Direction, MessageSpec
from .shapes import SHAPES
from .types import Field, MapT, TaggedT
from .version import FEATURES

ARROW = {Direction.TO_SERVER: "client → server", Direction.TO_CLIENT: "server → client"}

_MARKED = re.compile(
    r"<!-- reference:(?P<name>[a-z0-9_:-]+) -->\n.*?<!-- /reference:(?P=name) -->", re.S)
_OPENING = re.compile(r"<!-- reference:([a-z0-9_:-]+) -->")


def _cell(text: str) -> str:
    """Prose in a table cell: a `|` would end the cell."""
    return text.replace("|", "\\|")


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _yes_no(flag: bool) -> str:
    return "yes" if flag else "no"


def field_name(f: Field) -> str:
    """A field as its table names it: `?` after an optional one, as the event table has."""
    return f"`{f.name}`" + ("" if f.required else "?")


def _field_row(f: Field) -> list[str]:
    return [field_name(f), f.type.describe(), _cell(f.doc)]


def field_table(fields: Sequence[Field]) -> str:
    """A message's or a map shape's fields: name (`?`: optional), type with its limits,
    meaning."""
    return _table(("field", "type", "meaning"), (_field_row(f) for f in fields))


def message_table(fields: Sequence[Field]) -> str:
    """A message's fields but `id`, which every request may carry and every reply echoes:
    the page says so once (Conventions) rather than in a row of every table."""
    own = [f for f in fields if f.name != "id"]
    return field_table(own) if own else "No fields but `id`."


def tagged_table(shape: TaggedT) -> str:
    """A tagged shape: its tag, then (closed shapes) each variant's fields and variant."""
    if shape.open:  # the variants (events) have a table of their own: event_table
        return _table(("field", "type", "meaning"),
                      [[f"`{shape.tag}`", "str", _cell(shape.doc)]])
    tag = " \\| ".join(f'"{kind}"' for kind in shape.variants)
    rows = [[f"`{shape.tag}`", tag, f"every {shape.name}", _cell(shape.doc)]]
    for kind, fields in shape.variants.items():
        for f in fields:
            name, type_, meaning = _field_row(f)
            rows.append([name, type_, f"`{kind}`", meaning])
    return _table(("field", "type", "in", "meaning"), rows)


def shape_table(shape: MapT | TaggedT) -> str:
    return field_table(shape.fields) if isinstance(shape, MapT) else tagged_table(shape)


def event_table(shape: TaggedT) -> str:
    """Every variant of an open tagged shape, its fields (`?`: optional) and meaning."""
    rows = []
    for kind, fields in shape.variants.items():
        names = ", ".join(f"`{f.name}`" + ("" if f.required else "?") for f in fields)
        rows.append([f"`{kind}`", names, _cell(shape.variant_docs.get(kind, ""))])
    return _table((shape.tag, "fields", "meaning"), rows)


def _specs(direction: Direction) -> list[MessageSpec]:
    return sorted((s for s in MESSAGES.values() if s.direction is direction),
                  key=lambda s: s.type)


def _feature(spec: MessageSpec) -> str:
    return f"`{spec.feature}`" if spec.feature else "—"


def request_table() -> str:
    """Every client request: its answer, whether it shows presence, its feature. What it
    does is said once, in its own section (the spec's `doc`)."""
    return _table(
        ("request", "answer", "presence", "feature"),
        ([f"`{s.type}`", _cell(s.answer), _yes_no(s.presence), _feature(s)]
         for s in _specs(Direction.TO_SERVER)))


def server_message_table() -> str:
    """Every message the server sends, and its feature; what it is, in its section."""
    return _table(("message", "feature"),
                  ([f"`{s.type}`", _feature(s)] for s in _specs(Direction.TO_CLIENT)))


def limit_table() -> str:
    """The decoders' limits of both directions, from `Limits` and `limits_for`."""
    client, server = limits_for(Direction.TO_SERVER), limits_for(Direction.TO_CLIENT)
    rows = [[f"`{f.name}`", str(getattr(client, f.name)), str(getattr(server, f.name)),
             _cell(str(f.metadata.get("doc", "")))] for f in dataclasses.fields(Limits)]
    return _table(("limit", ARROW[Direction.TO_SERVER], ARROW[Direction.TO_CLIENT],
                   "what it bounds"), rows)


def announced_table() -> str:
    """The limits `welcome.limits` announces besides the decoder's (whose client values
    the limit table has already): the fields', with what each bounds."""
    decoder = {f.name for f in dataclasses.fields(Limits)}
    rows = [[f"`{key}`", str(value), _cell(FIELD_LIMIT_DOCS.get(key, ""))]
            for key, value in announced_limits().items() if key not in decoder]
    return _table(("key", "value", "what it bounds"), rows)


def _error_fields(code: str) -> str:
    return ", ".join(f"`{name}`" for name in ERRORS[code].fields) or "—"


def closing_error_table() -> str:
    """The codes after which the server closes: whether reconnecting helps, meaning,
    fields. Apart from the others, since a client's reconnect policy turns on them."""
    rows = []
    for code in sorted(c for c, info in ERRORS.items() if info.closes):
        info = ERRORS[code]
        reconnect = info.reconnect_note or _yes_no(info.reconnect)
        rows.append([f"`{code}`", reconnect, _cell(info.meaning), _error_fields(code)])
    return _table(("code", "reconnect", "meaning", "fields"), rows)


def error_table() -> str:
    """The codes that leave the connection open: meaning, fields."""
    return _table(("code", "meaning", "fields"),
                  ([f"`{code}`", _cell(ERRORS[code].meaning), _error_fields(code)]
                   for code in sorted(c for c, info in ERRORS.items() if not info.closes)))


def feature_table() -> str:
    """Every optional feature and what it adds; which messages belong to it, the request
    and server message tables say."""
    return _table(("feature", "what it adds"),
                  ([f"`{name}`", _cell(FEATURES[name])] for name in sorted(FEATURES)))


def message_key(spec: MessageSpec) -> str:
    """The marker name of a message's field table: `fields:to_server:hello`."""
    return f"fields:{spec.direction}:{spec.type}"


def sections() -> dict[str, str]:
    """Every generated table by marker name, sorted by name."""
    found = {"requests": request_table(), "server-messages": server_message_table(),
             "limits": limit_table(), "welcome-limits": announced_table(),
             "errors": error_table(), "errors-closing": closing_error_table(),
             "features": feature_table()}
    for spec in MESSAGES.values():
        found[message_key(spec)] = message_table(spec.fields)
    for name, shape in SHAPES.items():
        found[f"shape:{name}"] = shape_table(shape)
        if isinstance(shape, TaggedT) and shape.open:
            found[f"variants:{name}"] = event_table(shape)
    return dict(sorted(found.items()))


def _marked(name: str, body: str) -> str:
    return f"<!-- reference:{name} -->\n{body}\n<!-- /reference:{name} -->"


def render(tables: Mapping[str, str]) -> str:
    """Every table in its markers, as `--write` would put it in the page."""
    return "\n\n".join(_marked(name, body) for name, body in tables.items()) + "\n"


def replace(text: str, tables: Mapping[str, str]) -> str:
    """`text` with every marked table replaced by its generated version.

    Raises ValueError if the text marks a table that is not generated, marks one twice,
    opens a marker it never closes, or lacks one: each would leave the page out of step.
    """
    opened = _OPENING.findall(text)
    unknown = sorted(set(opened) - set(tables))
    twice = sorted({name for name in opened if opened.count(name) > 1})
    missing = sorted(set(tables) - set(opened))
    problems = [f"{what}: {', '.join(names)}" for what, names in (
        ("not generated", unknown), ("marked twice", twice), ("not marked", missing))
        if names]
    if problems:
        raise ValueError("; ".join(problems))
    replaced = _MARKED.sub(lambda m: _marked(m["name"], tables[m["name"]]), text)
    unclosed = sorted(set(opened) - set(_MARKED.findall(text)))
    if unclosed:
        raise ValueError(f"opened but not closed: {', '.join(unclosed)}")
    return replaced


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pisyedili.protocol.reference",
        description="Print docs/protocol.md's reference tables, generated from the schema.")
    parser.add_argument("--write", metavar="PATH",
                        help="replace the marked tables of this Markdown file in place")
    args = parser.parse_args(argv)
    tables = sections()
    if args.write is None:
        sys.stdout.write(render(tables))
        return 0
    with open(args.write, encoding="utf-8", newline="") as f:
        text = f.read()
    try:
        new = replace(text, tables)
    except ValueError as exc:
        parser.exit(1, f"{args.write}: {exc}\n")
    if new != text:
        with open(args.write, "w", encoding="utf-8", newline="") as f:
            f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
