"""The schema and the codec limits agree: every message the schema allows can be
encoded and decoded under its direction's limits, so no valid message is ever refused
by the receiver's decoder (and the schema never promises more than a frame can hold)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pisyedili.protocol import (
    MESSAGES,
    Direction,
    decode_message,
    encode,
    limits_for,
)
from pisyedili.protocol.limits import Limits
from pisyedili.protocol.types import (
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

UTF8_MAX = 4  # bytes per character, worst case


def _fits(t: FieldType, limits: Limits, depth: int, path: str) -> list[str]:
    """Where type `t`, nested at `depth`, could exceed `limits` (empty: it cannot)."""
    problems: list[str] = []
    if isinstance(t, StrT):
        longest = max((len(c) for c in t.choices), default=t.max_len)
        if longest * UTF8_MAX > limits.str_len:
            problems.append(f"{path}: {longest} chars may exceed str_len")
    elif isinstance(t, NullableT):
        problems += _fits(t.inner, limits, depth, path)
    elif isinstance(t, ListT):
        if depth + 1 > limits.depth:
            problems.append(f"{path}: depth {depth + 1}")
        if t.max_len > limits.array_len:
            problems.append(f"{path}: {t.max_len} items may exceed array_len")
        problems += _fits(t.item, limits, depth + 1, f"{path}[]")
    elif isinstance(t, DictT):
        if depth + 1 > limits.depth or t.max_len > limits.map_len:
            problems.append(f"{path}: depth or size")
        problems += _fits(t.value, limits, depth + 1, f"{path}.*")
    elif isinstance(t, MapT):
        problems += _fields_fit(t.fields, limits, depth + 1, path)
    elif isinstance(t, TaggedT):
        for tag, fields in t.variants.items():
            problems += _fields_fit(fields, limits, depth + 1, f"{path}<{tag}>")
    return problems


def _fields_fit(fields: tuple[Field, ...], limits: Limits, depth: int,
                path: str) -> list[str]:
    problems = [f"{path}: depth {depth}"] if depth > limits.depth else []
    if len(fields) + 1 > limits.map_len:
        problems.append(f"{path}: {len(fields)} fields may exceed map_len")
    for f in fields:
        problems += _fits(f.type, limits, depth, f"{path}.{f.name}")
    return problems


@pytest.mark.parametrize("key", sorted(MESSAGES), ids=lambda k: f"{k[0]}-{k[1]}")
def test_every_message_fits_its_direction_limits(key: tuple[Direction, str]) -> None:
    spec = MESSAGES[key]
    assert _fields_fit(spec.fields, limits_for(key[0]), 1, key[1]) == []


# --- Generated messages: whatever the schema allows, the validator accepts -----------

def strategy(t: FieldType) -> st.SearchStrategy[Any]:
    if isinstance(t, IntT):
        return st.integers(t.lo, t.hi)
    if isinstance(t, FloatT):
        return st.floats(t.lo, t.hi, allow_nan=False)
    if isinstance(t, BoolT):
        return st.booleans()
    if isinstance(t, StrT):
        if t.choices:
            return st.sampled_from(t.choices)
        if t.pattern is not None:
            return st.from_regex(t.pattern, fullmatch=True)
        if t.text:
            letters = st.characters(whitelist_categories=("L", "N", "P", "S", "Zs"))
            return st.text(letters, min_size=1, max_size=min(t.max_len, 12)).filter(
                lambda s: bool(s.strip()))
        return st.text(max_size=min(t.max_len, 12))
    if isinstance(t, NullableT):
        return st.none() | strategy(t.inner)
    if isinstance(t, ListT):
        return st.lists(strategy(t.item), min_size=t.min_len,
                        max_size=max(t.min_len, min(t.max_len, 3)))
    if isinstance(t, DictT):
        return st.dictionaries(st.text(max_size=8), strategy(t.value), max_size=3)
    if isinstance(t, MapT):
        return fields_strategy(t.fields, t.one_of)
    assert isinstance(t, TaggedT)
    return st.one_of([
        fields_strategy(fields, ()).map(lambda d, tag=tag: {t.tag: tag, **d})  # type: ignore[misc]
        for tag, fields in t.variants.items()
    ])


def fields_strategy(fields: tuple[Field, ...],
                    one_of: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    required = {f.name: strategy(f.type) for f in fields if f.required}
    optional = {f.name: strategy(f.type) for f in fields
                if not f.required and f.name not in one_of}
    base = st.fixed_dictionaries(required, optional=optional)
    if not one_of:
        return base
    types = {f.name: f.type for f in fields}
    pick = st.sampled_from(one_of).flatmap(
        lambda name: strategy(types[name]).map(lambda v, name=name: {name: v}))  # type: ignore[misc]
    return st.tuples(base, pick).map(lambda pair: {**pair[0], **pair[1]})


def message_strategy() -> st.SearchStrategy[tuple[Direction, dict[str, Any]]]:
    return st.sampled_from(sorted(MESSAGES)).flatmap(
        lambda key: fields_strategy(MESSAGES[key].fields, MESSAGES[key].one_of).map(
            lambda d, key=key: (key[0], {"type": key[1], **d})))  # type: ignore[misc]


@settings(max_examples=300, deadline=None)
@given(message_strategy())
def test_generated_messages_survive_the_wire(case: tuple[Direction, dict[str, Any]]) -> None:
    direction, msg = case
    assert decode_message(encode(msg), direction) == msg
