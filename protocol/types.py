"""The field types the schema is written in, each able to check a value and describe itself.

Small and closed on purpose: every type maps onto msgpack and onto a line of
`docs/protocol.md`, so a client author in any language knows exactly what to send.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import text as text_rule
from .errors import ProtocolError


def _bad(path: str, why: str) -> ProtocolError:
    return ProtocolError("bad_field", f"{path}: {why}", field=path)


@dataclass(frozen=True)
class IntT:
    lo: int
    hi: int
    name: str = ""

    def check(self, value: object, path: str) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _bad(path, "must be an integer")
        if not self.lo <= value <= self.hi:
            raise _bad(path, f"must be in {self.lo}..{self.hi}")

    def describe(self) -> str:
        return self.name or f"int {self.lo}..{self.hi}"

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": "int", "min": self.lo, "max": self.hi}
        if self.name:
            data["name"] = self.name
        return data


@dataclass(frozen=True)
class FloatT:
    """A number: msgpack float or int (senders may write whole seconds as ints)."""

    lo: float
    hi: float

    def check(self, value: object, path: str) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _bad(path, "must be a number")
        if not math.isfinite(value) or not self.lo <= value <= self.hi:
            raise _bad(path, f"must be in {self.lo:g}..{self.hi:g}")

    def describe(self) -> str:
        return f"number {self.lo:g}..{self.hi:g}"

    def to_data(self) -> dict[str, Any]:
        return {"kind": "number", "min": self.lo, "max": self.hi}


@dataclass(frozen=True)
class BoolT:
    def check(self, value: object, path: str) -> None:
        if not isinstance(value, bool):
            raise _bad(path, "must be true or false")

    def describe(self) -> str:
        return "bool"

    def to_data(self) -> dict[str, Any]:
        return {"kind": "bool"}


@dataclass(frozen=True)
class StrT:
    """A string, its length counted in characters (code points).

    `text`: human text shown to others: the one rule for what people write
    (`text.refusal`: one line, not blank, nothing invisible, nothing that reorders what
    is shown). `name` labels a shared shape (`card`, `suit`) in docs.
    """

    max_len: int
    choices: tuple[str, ...] = ()
    pattern: str | None = None
    text: bool = False
    name: str = ""
    _regex: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    """`pattern` compiled once: a card is checked in every move a client sends."""

    def __post_init__(self) -> None:
        regex = re.compile(self.pattern) if self.pattern is not None else None
        object.__setattr__(self, "_regex", regex)

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, str):
            raise _bad(path, "must be a string")
        if self.choices:
            if value not in self.choices:
                raise _bad(path, f"must be one of {', '.join(self.choices)}")
            return
        if len(value) > self.max_len:
            raise _bad(path, f"must be at most {self.max_len} characters")
        if self._regex is not None and self._regex.fullmatch(value) is None:
            raise _bad(path, f"is not a valid {self.name or 'value'}")
        if self.text:
            why = text_rule.refusal(value)
            if why is not None:
                raise _bad(path, why)

    def describe(self) -> str:
        if self.name:
            return self.name
        if self.choices:
            return " \\| ".join(f'"{c}"' for c in self.choices)
        return f"str ≤{self.max_len}" + (" text" if self.text else "")

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": "str", "max_len": self.max_len}
        if self.choices:
            data["choices"] = list(self.choices)
        if self.pattern is not None:
            data["pattern"] = self.pattern
        if self.text:
            data["text"] = True
        if self.name:
            data["name"] = self.name
        return data


@dataclass(frozen=True)
class ListT:
    item: FieldType
    max_len: int
    min_len: int = 0

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, list):
            raise _bad(path, "must be an array")
        if not self.min_len <= len(value) <= self.max_len:
            raise _bad(path, f"must hold {self.min_len}..{self.max_len} items")
        for i, item in enumerate(value):
            self.item.check(item, f"{path}[{i}]")

    def describe(self) -> str:
        return f"[{self.item.describe()}] ≤{self.max_len}"

    def to_data(self) -> dict[str, Any]:
        return {"kind": "list", "item": self.item.to_data(), "min_len": self.min_len,
                "max_len": self.max_len}


@dataclass(frozen=True)
class NullableT:
    inner: FieldType

    def check(self, value: object, path: str) -> None:
        if value is not None:
            self.inner.check(value, path)

    def describe(self) -> str:
        return f"{self.inner.describe()} or nil"

    def to_data(self) -> dict[str, Any]:
        return {"kind": "nullable", "inner": self.inner.to_data()}


@dataclass(frozen=True)
class Field:
    name: str
    type: FieldType
    required: bool = True
    doc: str = ""

    def to_data(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type.to_data(), "required": self.required,
                "doc": self.doc}


def check_fields(
    value: Mapping[str, Any], fields: tuple[Field, ...], one_of: tuple[str, ...], prefix: str
) -> None:
    """Checks the known fields of a map; unknown keys are ignored (forward compatibility)."""
    for f in fields:
        path = prefix + f.name if prefix else f.name
        if f.name not in value:
            if f.required:
                raise ProtocolError("missing_field", f"{path} is required", field=path)
            continue
        f.type.check(value[f.name], path)
    if one_of:
        present = [name for name in one_of if name in value]
        names = " or ".join(f"{prefix}{n}" for n in one_of)
        if not present:
            raise ProtocolError("missing_field", f"one of {names} is required",
                                field=f"{prefix}{one_of[0]}")
        if len(present) > 1:
            raise _bad(f"{prefix}{present[1]}", f"give only one of {names}")


@dataclass(frozen=True)
class MapT:
    """A map with known fields; other keys are allowed and ignored. No fields: any map."""

    fields: tuple[Field, ...] = ()
    name: str = ""
    one_of: tuple[str, ...] = ()
    max_len: int = 1024

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, dict):
            raise _bad(path, "must be a map")
        if len(value) > self.max_len:
            raise _bad(path, f"must hold at most {self.max_len} entries")
        check_fields(value, self.fields, self.one_of, f"{path}.")

    def describe(self) -> str:
        return self.name or "map"

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": "map", "fields": [f.to_data() for f in self.fields]}
        if self.name:
            data["name"] = self.name
        if self.one_of:
            data["one_of"] = list(self.one_of)
        return data


@dataclass(frozen=True)
class DictT:
    """A map from string keys to values of one type (e.g. `welcome.limits`)."""

    value: FieldType
    max_len: int
    name: str = ""

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, dict):
            raise _bad(path, "must be a map")
        if len(value) > self.max_len:
            raise _bad(path, f"must hold at most {self.max_len} entries")
        for key, item in value.items():
            self.value.check(item, f"{path}.{key}")

    def describe(self) -> str:
        return self.name or f"map of {self.value.describe()}"

    def to_data(self) -> dict[str, Any]:
        return {"kind": "dict", "value": self.value.to_data(), "max_len": self.max_len}


@dataclass(frozen=True)
class TaggedT:
    """A map whose `tag` field picks which of `variants` it is (moves: `kind`).

    `open`: a tag not in `variants` is accepted unchecked (events: a newer server may
    send new ones, and clients must not choke on them). `doc` says what the tag field
    means and `variant_docs` what each variant does, for the reference tables of
    docs/protocol.md (protocol/reference.py prints them).
    """

    tag: str
    variants: Mapping[str, tuple[Field, ...]] = field(default_factory=dict)
    name: str = ""
    open: bool = False
    doc: str = ""
    variant_docs: Mapping[str, str] = field(default_factory=dict)

    def check(self, value: object, path: str) -> None:
        if not isinstance(value, dict):
            raise _bad(path, "must be a map")
        tag = value.get(self.tag)
        fields = self.variants.get(tag) if isinstance(tag, str) else None
        if fields is not None:  # a known variant: its tag is one of ours
            check_fields(value, fields, (), f"{path}.")
            return
        tag_path = f"{path}.{self.tag}"
        if self.tag not in value:
            raise ProtocolError("missing_field", f"{tag_path} is required", field=tag_path)
        if not isinstance(tag, str) or len(tag) > 64:
            raise _bad(tag_path, "must be a short string")
        if not self.open:
            raise _bad(tag_path, f"must be one of {', '.join(self.variants)}")

    def describe(self) -> str:
        return self.name or "map"

    def to_data(self) -> dict[str, Any]:
        return {"kind": "tagged", "tag": self.tag, "name": self.name, "open": self.open,
                "doc": self.doc,
                "variants": {k: [f.to_data() for f in v] for k, v in self.variants.items()},
                "variant_docs": dict(self.variant_docs)}


FieldType = IntT | FloatT | BoolT | StrT | ListT | NullableT | MapT | DictT | TaggedT


def req(name: str, type_: FieldType, doc: str) -> Field:
    return Field(name, type_, True, doc)


def opt(name: str, type_: FieldType, doc: str) -> Field:
    return Field(name, type_, False, doc)
