"""The web client's catalogs for the tests: the messages of client/web/*.js as Babel's
JavaScript extractor finds them, and each `web.po` compiled to the JSON the page loads.

`compile_po` writes the shape the install's build step writes to
`client/web/locale/<lang>.json`: `{"lang", "dir", "plural_table", "messages"}`, a plural
keyed by `singular\\u0004plural` with one text a form, and `plural_table[n]` the form
of `n` below 200 (`100 + n % 100` above). It stands in for that step until both meet.
"""

from __future__ import annotations

import gettext
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "client" / "web"
LOCALE = ROOT / "client" / "locale"
POT = LOCALE / "web.pot"
BUILT = WEB / "locale"
LANGS = ("tr", "ru", "uk", "fa", "th")
RTL = frozenset({"fa"})
KEYWORDS = {"t": None, "tn": (1, 2)}
"""The extractor's keywords, as `pybabel extract -k t -k tn:1,2` gives them."""

MessageId = str | tuple[str, str]


def extracted() -> set[MessageId]:
    """Every t()/tn() literal of client/web/*.js (the page's own, not the vendor's)."""
    found: set[MessageId] = set()
    for _name, _line, message, _comments, _context in extract_from_dir(
            str(WEB), method_map=[("*.js", "javascript")], keywords=KEYWORDS,
            options_map={"*.js": {"parse_template_string": "true"}}):
        found.add(message if isinstance(message, str) else (str(message[0]), str(message[1])))
    return found


def read(path: Path) -> Catalog:
    with path.open("rb") as f:
        return read_po(f)


def po_path(lang: str) -> Path:
    return LOCALE / lang / "LC_MESSAGES" / "web.po"


def plural_rule(catalog: Catalog) -> Callable[[int], int]:
    """The catalog header's `plural=` expression as a function of n."""
    return gettext.c2py(catalog.plural_expr)


def compile_po(lang: str, catalog: Catalog) -> dict[str, Any]:
    """The page's JSON for one catalog: translated entries only (no fuzzy ones)."""
    rule = plural_rule(catalog)
    messages: dict[str, Any] = {}
    for m in catalog:
        if not m.id or m.fuzzy:
            continue
        if isinstance(m.id, tuple):
            forms = [str(s) for s in m.string] if isinstance(m.string, tuple) else [str(m.string)]
            if all(forms):
                messages[f"{m.id[0]}\u0004{m.id[1]}"] = forms
        elif m.string:
            messages[str(m.id)] = str(m.string)
    return {"lang": lang, "dir": "rtl" if lang in RTL else "ltr",
            "plural_table": [rule(n) for n in range(200)], "messages": messages}


def pseudo(ids: set[MessageId]) -> dict[str, Any]:
    """A catalog whose every text is "⟦" + English + "⟧": an unmarked word on the page
    was built outside t()/tn()."""
    messages: dict[str, Any] = {}
    for mid in ids:
        if isinstance(mid, tuple):
            messages[f"{mid[0]}\u0004{mid[1]}"] = [f"⟦{mid[0]}⟧", f"⟦{mid[1]}⟧"]
        else:
            messages[mid] = f"⟦{mid}⟧"
    return {"lang": "en", "dir": "ltr", "plural_table": [0 if n == 1 else 1 for n in range(200)],
            "messages": messages}


def build_all() -> list[Path]:
    """client/web/locale/<lang>.json for every web.po, as the install would write them."""
    BUILT.mkdir(exist_ok=True)
    written = []
    for lang in LANGS:
        out = BUILT / f"{lang}.json"
        out.write_text(json.dumps(compile_po(lang, read(po_path(lang))), ensure_ascii=False),
                       encoding="utf-8")
        written.append(out)
    return written
