"""Every rule number of the rule book has at least one test marked with it."""

from __future__ import annotations

import types

import test_rules_cardiva
import test_rules_classic

EXPECTED = {f"C{i}" for i in range(1, 17)} | {"C12a"} | {f"K{i}" for i in range(1, 16)}


def _marked(module: types.ModuleType) -> set[str]:
    found: set[str] = set()
    for name, obj in vars(module).items():
        if name.startswith("test_"):
            for mark in getattr(obj, "pytestmark", []):
                if mark.name == "rule":
                    found.add(mark.args[0])
    return found


def test_every_rule_number_has_a_marked_test() -> None:
    marked = _marked(test_rules_classic) | _marked(test_rules_cardiva)
    assert sorted(EXPECTED - marked) == []
    assert sorted(marked - EXPECTED) == []
