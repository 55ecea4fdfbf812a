"""docs/asyncapi.json: an AsyncAPI 3.0 description of the protocol, generated from the schema.

The same registries that validate every frame (schema.py, shapes.py, limits.py,
version.py) are written out as an AsyncAPI document, so that a client author in any
language can generate types and validators from it, and it cannot drift from the code:

    python -m pisyedili.protocol.asyncapi                                # print it
    python -m pisyedili.protocol.asyncapi --write docs/asyncapi.json    # refresh the doc

The document describes the server, as AsyncAPI describes an application: it receives
the client → server messages and sends the server → client ones, over two channels, one
per transport, which carry the same messages. Every message's payload is a JSON Schema
(draft 07, as AsyncAPI's schema format is) of the map its msgpack body decodes to;
the shared shapes (`move`, `view`, `event`...) are component schemas of their own. JSON
and msgpack hold the same values here: the protocol uses only nil, booleans, integers,
floats, strings, arrays and string-keyed maps.

Everything but `main` is pure, and the output is deterministic: messages follow the
schema's order, shapes are added as first met, and every key is written in a fixed order.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .limits import CLIENT_FRAME_LIMITS, SERVER_FRAME_LIMITS
from .schema import MESSAGES, Direction, MessageSpec
from .types import (
    BoolT,
    DictT,
    Field,
    FieldType,
    FloatT,
    IntT,
    ListT,
    MapT,
    NullableT,
    StrT,
    TaggedT,
)
from .version import FEATURES, PROTOCOL_VERSION

ASYNCAPI_VERSION = "3.0.0"
CONTENT_TYPE = "application/msgpack"
"""MessagePack has no media type of the standards tree; this one is the name in common
use without the `x-` prefix that RFC 6838 retired (some libraries say
`application/x-msgpack` or `application/vnd.msgpack`: the same bytes)."""
TAG_MAX = 64
"""The longest tag an open tagged shape accepts unchecked (types.TaggedT.check)."""
SIDE = {Direction.TO_SERVER: "client → server", Direction.TO_CLIENT: "server → client"}
ACTION = {Direction.TO_SERVER: "receive", Direction.TO_CLIENT: "send"}
"""What the server, the application this document describes, does with each direction."""

JSON = dict[str, Any]

_UNSUPPORTED = re.compile(r"\(\?[aiLmsux]|\(\?P|\\[AZbB]")


# -- patterns ---------------------------------------------------------------------------------


def _class_both_cases(body: str) -> str:
    """A character class's contents with the other case of each letter and letter range."""
    extra = []
    i = 0
    while i < len(body):
        if body[i] == "\\":
            i += 2
            continue
        if i + 2 < len(body) and body[i + 1] == "-":
            low, high = body[i], body[i + 2]
            if low.isalpha() and high.isalpha():
                extra.append(f"{low.swapcase()}-{high.swapcase()}")
            i += 3
            continue
        if body[i].isalpha():
            extra.append(body[i].swapcase())
        i += 1
    return body + "".join(extra)


def _both_cases(pattern: str) -> str:
    """`pattern` matching either case of every ASCII letter, without a flag: ECMA-262 regular
    expressions (JSON Schema's dialect) have no inline `(?i)`."""
    out = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            out.append(pattern[i:i + 2])
            i += 2
        elif char == "[":
            end = pattern.index("]", i + 2)  # a class holds at least one character
            out.append("[" + _class_both_cases(pattern[i + 1:end]) + "]")
            i = end + 1
        else:
            out.append(f"[{char.lower()}{char.upper()}]" if char.isalpha() else char)
            i += 1
    return "".join(out)


def ecma_pattern(pattern: str) -> str:
    """A schema pattern (Python, matched whole with `fullmatch`) as a JSON Schema pattern:
    anchored, since JSON Schema's match anywhere, and a leading `(?i)` spelled out.

    Raises ValueError for a construct this does not translate, rather than write a
    pattern that means something else.
    """
    caseless = pattern.startswith("(?i)")
    body = pattern[len("(?i)"):] if caseless else pattern
    if _UNSUPPORTED.search(body):
        raise ValueError(f"cannot write {pattern!r} as a JSON Schema pattern")
    return f"^(?:{_both_cases(body) if caseless else body})$"


# -- schemas ----------------------------------------------------------------------------------


def _ref(name: str) -> JSON:
    return {"$ref": f"#/components/schemas/{name}"}


class Schemas:
    """The component schemas: each named shape once, under its name, as first met."""

    def __init__(self) -> None:
        self.named: dict[str, JSON] = {}
        self._sources: dict[str, object] = {}

    def _add(self, name: str, source: object, build: Callable[[], JSON]) -> JSON:
        if name in self._sources:
            if self._sources[name] != source:
                raise ValueError(f"two different shapes are named {name!r}")
            return _ref(name)
        self._sources[name] = source
        self.named[name] = {}  # taken before building: a shape may hold itself
        self.named[name] = build()
        return _ref(name)

    def of(self, type_: FieldType) -> JSON:
        """The JSON Schema of a field type: a reference for a named map or tagged shape."""
        if isinstance(type_, IntT):
            return {"type": "integer", "minimum": type_.lo, "maximum": type_.hi}
        if isinstance(type_, FloatT):
            return {"type": "number", "minimum": _bound(type_.lo), "maximum": _bound(type_.hi)}
        if isinstance(type_, BoolT):
            return {"type": "boolean"}
        if isinstance(type_, StrT):
            return _string(type_)
        if isinstance(type_, ListT):
            return self._array(type_)
        if isinstance(type_, NullableT):
            return {"oneOf": [self.of(type_.inner), {"type": "null"}]}
        if isinstance(type_, DictT):
            return {"type": "object", "additionalProperties": self.of(type_.value),
                    "maxProperties": type_.max_len}
        if isinstance(type_, MapT):
            if type_.name:
                return self._add(type_.name, type_, lambda: self.map(type_))
            return self.map(type_)
        if not type_.name:
            raise ValueError(f"a tagged shape needs a name: tag {type_.tag!r}")
        return self._add(type_.name, type_, lambda: self._tagged(type_))

    def _array(self, type_: ListT) -> JSON:
        schema: JSON = {"type": "array", "items": self.of(type_.item)}
        if type_.min_len:
            schema["minItems"] = type_.min_len
        schema["maxItems"] = type_.max_len
        return schema

    def object(self, fields: Sequence[Field], one_of: Sequence[str] = (),
               first: Iterable[tuple[str, JSON]] = ()) -> JSON:
        """A map of known fields (`first` before them, all required); others are allowed:
        a receiver ignores fields it does not know."""
        lead = dict(first)
        properties = {**lead, **{f.name: self._property(f) for f in fields}}
        required = [*lead, *(f.name for f in fields if f.required)]
        schema: JSON = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        if one_of:  # exactly one of them: with both, two branches would hold
            schema["oneOf"] = [{"required": [name]} for name in one_of]
        return schema

    def map(self, type_: MapT) -> JSON:
        schema = self.object(type_.fields, type_.one_of)
        schema["maxProperties"] = type_.max_len
        return schema

    def _property(self, f: Field) -> JSON:
        schema = self.of(f.type)
        doc = f.doc
        if isinstance(f.type, StrT) and f.type.text:
            doc += (" (text: one line, not blank, nothing invisible or reordering; "
                    "docs/protocol.md, \"Text: what people write\")")
        return {**schema, "description": doc} if doc else schema

    def _tagged(self, type_: TaggedT) -> JSON:
        """One component per variant, `{name}_{variant}`, the tag a constant in each; an
        open shape also takes any other tag unchecked, as a newer peer may send one."""
        branches = []
        for kind, fields in type_.variants.items():
            tag = {"type": "string", "const": kind, "description": type_.doc}
            variant = self.object(fields, first=[(type_.tag, tag)])
            doc = type_.variant_docs.get(kind)
            if doc:
                variant["description"] = doc
            branches.append(self._add(f"{type_.name}_{kind}", (type_, kind),
                                      _constant(variant)))
        if type_.open:
            other = {"type": "string", "maxLength": TAG_MAX,
                     "not": {"enum": list(type_.variants)}, "description": type_.doc}
            unknown = {"type": "object", "properties": {type_.tag: other},
                       "required": [type_.tag],
                       "description": f"a `{type_.tag}` this version does not define "
                                      "(a newer peer's): a client ignores it"}
            branches.append(self._add(f"{type_.name}_unknown", (type_, None),
                                      _constant(unknown)))
        schema: JSON = {"oneOf": branches}
        if type_.doc:
            schema["description"] = f"`{type_.tag}`: {type_.doc}"
        return schema


def _constant(schema: JSON) -> Callable[[], JSON]:
    return lambda: schema


def _bound(value: float) -> int | float:
    """A number's bound as JSON writes it the same from either build: a whole bound is
    an integer (the compiled schema holds `0.0` where the interpreted one holds `0`)."""
    return int(value) if float(value).is_integer() else float(value)


def _string(type_: StrT) -> JSON:
    if type_.choices:  # checked against the list alone (types.StrT.check)
        return {"type": "string", "enum": list(type_.choices)}
    schema: JSON = {"type": "string", "maxLength": type_.max_len}
    if type_.pattern is not None:
        schema["pattern"] = ecma_pattern(type_.pattern)
    return schema


# -- messages ---------------------------------------------------------------------------------


def message_id(spec: MessageSpec) -> str:
    """A message's stable id, its direction and type: `to_server.hello`, `to_client.error`
    (ten types go both ways: `ping`, `chat`...)."""
    return f"{spec.direction}.{spec.type}"


def _message_description(spec: MessageSpec) -> str:
    lines = [spec.doc]  # which of `one_of` to give, the doc says, and the payload's oneOf
    if spec.direction is Direction.TO_SERVER:
        lines.append(f"Answer: {spec.answer}.")
        lines.append("Shows its player is present (takes the seat back from a stand-in bot)."
                     if spec.presence else "Does not show its player is present.")
    if spec.feature:
        lines.append(f"Only on connections that agreed on the feature `{spec.feature}`.")
    return " ".join(lines)


def _message(spec: MessageSpec) -> JSON:
    message: JSON = {
        "name": spec.type,
        "title": f"{spec.type} ({SIDE[spec.direction]})",
        "summary": spec.doc,
        "description": _message_description(spec),
        "payload": _ref(message_id(spec)),
    }
    if any(f.name == "id" for f in spec.fields):
        message["correlationId"] = {"$ref": "#/components/correlationIds/id"}
    if spec.feature:
        message["tags"] = [{"name": spec.feature, "description": FEATURES[spec.feature]}]
    return message


def _payload(schemas: Schemas, spec: MessageSpec) -> JSON:
    kind = {"type": "string", "const": spec.type, "description": "the message's type"}
    payload = schemas.object(spec.fields, spec.one_of, first=[("type", kind)])
    payload["description"] = spec.doc
    return payload


# -- transports -------------------------------------------------------------------------------

_BODY = ("One body is one msgpack map with string keys and a string `type`, in both "
         "directions: nil, booleans, integers, floats, strings (the str family, never bin), "
         "arrays and maps only; no extension types.")
TCP_FRAMING = (
    "Over TCP every message is a frame: a 4-byte unsigned big-endian length N (not "
    "counting itself), then exactly N bytes of body. " + _BODY + " A client frame's body "
    f"is at most {CLIENT_FRAME_LIMITS.frame} bytes, a server frame's at most "
    f"{SERVER_FRAME_LIMITS.frame}. TLS where the operator listens with an `ssl:` endpoint.")
WEBSOCKET_FRAMING = (
    "Over a WebSocket (RFC 6455) at the path `/ws`, one binary message carries one body, "
    "with no length prefix. " + _BODY + " A text message is not read (`error` "
    "`text_message`). No subprotocol and no extension is negotiated. A client message is "
    f"at most {CLIENT_FRAME_LIMITS.frame} bytes, a server message at most "
    f"{SERVER_FRAME_LIMITS.frame}. `wss` behind TLS.")


def _servers() -> JSON:
    def variables(port: str, where: str) -> JSON:
        return {"host": {"default": "localhost", "description": "the server's host name"},
                "port": {"default": port, "description": where}}

    return {
        "tcp": {"host": "{host}:{port}", "protocol": "tcp", "title": "TCP",
                "description": "The server's `--listen` endpoints. " + TCP_FRAMING,
                "variables": variables("7707", "the `--listen` port (default 7707)")},
        "websocket": {"host": "{host}:{port}", "protocol": "ws", "title": "WebSocket",
                      "description": "A server started with `--web` (for browsers). "
                                     + WEBSOCKET_FRAMING,
                      "variables": variables("8080", "the `--web` port (none by default)")},
    }


def _channels(ids: Sequence[str]) -> JSON:
    messages = {i: {"$ref": f"#/components/messages/{i}"} for i in ids}
    return {
        "tcp": {"address": None, "title": "TCP connection", "description": TCP_FRAMING,
                "servers": [{"$ref": "#/servers/tcp"}], "messages": messages},
        "websocket": {"address": "/ws", "title": "WebSocket connection",
                      "description": WEBSOCKET_FRAMING,
                      "servers": [{"$ref": "#/servers/websocket"}], "messages": messages,
                      "bindings": {"ws": {"method": "GET", "bindingVersion": "0.1.0"}}},
    }


def _operations(specs: Sequence[MessageSpec]) -> JSON:
    operations: JSON = {}
    for channel in ("tcp", "websocket"):
        for direction in Direction:
            ids = [message_id(s) for s in specs if s.direction is direction]
            operations[f"{channel}.{ACTION[direction]}"] = {
                "action": ACTION[direction],
                "channel": {"$ref": f"#/channels/{channel}"},
                "title": f"{SIDE[direction]} over {channel}",
                "summary": (f"The server {ACTION[direction]}s the {SIDE[direction]} "
                            "messages."),
                "messages": [{"$ref": f"#/channels/{channel}/messages/{i}"} for i in ids],
            }
    return operations


INTRODUCTION = (
    "The wire protocol between a Pis Yedili server and its clients, generated from the "
    "schema the server validates every frame with (`python -m pisyedili.protocol.asyncapi`)."
    " docs/protocol.md is the specification: what each message means, the order of "
    "exchanges, limits, rate limits and error codes.\n\n"
    "This document describes the server: it *receives* the client → server messages and "
    "*sends* the server → client ones. A client does the opposite. Message ids are "
    "`to_server.TYPE` and `to_client.TYPE`; the body's `type` field says which message a "
    "map is.\n\n"
    f"Content type: `{CONTENT_TYPE}` (MessagePack; some libraries call it "
    "`application/x-msgpack`). A receiver ignores map fields it does not know, at any "
    "depth, and a client ignores message types and event names it does not know: every "
    "object schema here allows more properties.")


def document() -> JSON:
    """The whole AsyncAPI document, as JSON-serialisable data."""
    specs = list(MESSAGES.values())
    schemas = Schemas()
    payloads = {message_id(s): _payload(schemas, s) for s in specs}
    ids = list(payloads)
    return {
        "asyncapi": ASYNCAPI_VERSION,
        "id": "urn:pisyedili:protocol",
        "info": {
            "title": "Pis Yedili protocol",
            "version": str(PROTOCOL_VERSION),
            "description": INTRODUCTION,
            "license": {"name": "MIT"},
            "tags": [{"name": name, "description": FEATURES[name]} for name in sorted(FEATURES)],
        },
        "defaultContentType": CONTENT_TYPE,
        "servers": _servers(),
        "channels": _channels(ids),
        "operations": _operations(specs),
        "components": {
            "schemas": {**payloads, **schemas.named},
            "messages": {message_id(s): _message(s) for s in specs},
            "correlationIds": {"id": {
                "description": "A request's `id`, echoed in the replies to it.",
                "location": "$message.payload#/id"}},
        },
    }


def render() -> str:
    """The document as docs/asyncapi.json holds it."""
    return json.dumps(document(), indent=2, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pisyedili.protocol.asyncapi",
        description="Print the protocol's AsyncAPI 3.0 document, generated from the schema.")
    parser.add_argument("--write", metavar="PATH", help="write it to this file instead")
    args = parser.parse_args(argv)
    text = render()
    if args.write is None:
        sys.stdout.write(text)
    else:
        with open(args.write, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
