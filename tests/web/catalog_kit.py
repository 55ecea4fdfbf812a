"""The web client's catalogs for the tests, through the project's own catalog code
(`pisyedili.client.catalogs`, which the install's build step runs): the messages of
client/web/*.js as its extractor finds them, and each `web.po` compiled to the JSON
the page loads (`{"lang", "dir", "plural_table", "messages"}`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from babel.messages.catalog import Catalog

from pisyedili.client import catalogs

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "client" / "web"
LOCALE = ROOT / "client" / "locale"
POT = LOCALE / "web.pot"
BUILT = WEB / "locale"
LANGS = catalogs.LANGUAGES
DOMAIN = next(d for d in catalogs.DOMAINS if d.name == "web")

MessageId = str | tuple[str, str]


def extracted() -> set[MessageId]:
    """Every t()/tn() literal of client/web/*.js (the page's own, not the vendor's)."""
    return {m.id if isinstance(m.id, str) else (str(m.id[0]), str(m.id[1]))
            for m in catalogs.extract_domain(ROOT / "client", DOMAIN) if m.id}


def rule_lines() -> set[MessageId]:
    """The rule lines the Rules panel shows: keys of the page's catalog too, though
    written in client/web/rule_lines.json rather than as t() literals."""
    return {line for lines in catalogs.rule_lines().values() for line in lines}


def read(path: Path) -> Catalog:
    return catalogs.read_catalog(path) if path.suffix == ".po" else _read_template(path)


def _read_template(path: Path) -> Catalog:
    from babel.messages.pofile import read_po

    with path.open("rb") as f:
        return read_po(f)


def po_path(lang: str) -> Path:
    return catalogs.po_path(ROOT / "client", lang, "web")


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
    """client/web/locale/<lang>.json for every web.po, as the install writes them."""
    written = catalogs.compile_all(ROOT / "client", out=lambda line: None)
    return [path for path in written if path.suffix == ".json"]
