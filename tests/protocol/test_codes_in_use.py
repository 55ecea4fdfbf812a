"""Every error code the server can send is registered (and so documented).

The server and the rules engine name codes as string literals where they refuse
something; this reads their source (without importing it) and checks each literal
against errors.py, so a new refusal cannot reach clients undocumented.
"""

from __future__ import annotations

import ast
from pathlib import Path

from pisyedili.protocol import ERRORS

ROOT = Path(__file__).resolve().parents[2]

# Callables whose first argument is an error code.
_RAISERS = {"TableError", "ProtocolError", "send_error", "close", "make_error"}
# The engine's refusals: the code is a class attribute or a `code=` keyword.
_RULE_ERRORS = {"RuleError", "NotYourTurn", "IllegalCard", "IllegalMove", "DealOver"}

# Engine codes for misuse by the server itself (never a client's doing, never sent).
_INTERNAL = {"rule_error", "match_over", "deal_in_progress"}


def _codes_in(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else (
                func.attr if isinstance(func, ast.Attribute) else "")
            if name in _RAISERS and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                found.add(node.args[0].value)
            for kw in node.keywords:
                if kw.arg == "code" and isinstance(kw.value, ast.Constant) \
                        and isinstance(kw.value.value, str):
                    found.add(kw.value.value)
        elif isinstance(node, ast.ClassDef) and (
                node.name in _RULE_ERRORS
                or any(isinstance(b, ast.Name) and b.id in _RULE_ERRORS for b in node.bases)):
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id == "code" for t in stmt.targets) \
                        and isinstance(stmt.value, ast.Constant) \
                        and isinstance(stmt.value.value, str):
                    found.add(stmt.value.value)
    return found


def codes_used() -> dict[str, set[str]]:
    used: dict[str, set[str]] = {}
    for path in sorted((ROOT / "server").rglob("*.py")) + sorted((ROOT / "protocol").glob("*.py")):
        for code in _codes_in(ast.parse(path.read_text(encoding="utf-8"))):
            used.setdefault(code, set()).add(str(path.relative_to(ROOT)))
    return used


def test_the_scan_finds_known_refusals() -> None:
    # Guards the scanner itself: if it found nothing, the next test would pass vacuously.
    used = codes_used()
    assert {"not_your_turn", "illegal_card", "card_not_in_hand", "unknown_type",
            "bad_field"} <= set(used)


def test_every_code_the_server_uses_is_registered() -> None:
    unregistered = {code: files for code, files in codes_used().items()
                    if code not in ERRORS and code not in _INTERNAL}
    assert not unregistered, f"register these codes in protocol/errors.py: {unregistered}"


def test_every_registered_code_is_sent_by_some_path() -> None:
    # The other half of the contract: a documented code that nothing raises is a promise
    # a client author would code against in vain.
    returned: set[str] = set()  # codes handed back to a caller that sends them
    for path in sorted((ROOT / "server").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Constant) \
                    and node.value.value in ERRORS:
                returned.add(node.value.value)
    unused = set(ERRORS) - set(codes_used()) - returned
    assert not unused, f"registered but never sent: {sorted(unused)}"
