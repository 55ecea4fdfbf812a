"""Take the table in each language, in both clients: `python tests/language_screenshots.py`.

For Turkish, Russian, Ukrainian, Persian and Thai: the web client's table a few moves
into a seeded offline match (`?play=1`, 1280x800, headless Chromium as the tests use
it), as docs/screenshots/web-<lang>.png, squeezed by `pngquant` where it is installed;
and the terminal's, `pisyedili play` in tmux at 80x24 on its first turn with the same
seed, as the text tmux captures, docs/screenshots/terminal-<lang>.txt. Not a test (pytest
does not collect it): it writes into the repository.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from urllib.parse import quote

TESTS = Path(__file__).resolve().parent
sys.path[:0] = [str(TESTS), str(TESTS / "web"), str(TESTS / "client")]  # as pytest has it

from browser_kit import Page, chromium, fresh_page  # noqa: E402
from screenshots import save, squeeze  # noqa: E402
from test_client_tmux import Terminal, command  # noqa: E402
from web_kit import served  # noqa: E402

from pisyedili.client import catalogs, i18n  # noqa: E402

OUT = TESTS.parent / "docs" / "screenshots"
SEED = "7"
TURNS = 3
"""Our moves made before the web page is taken, so the log has a few lines."""
NAMES = {"tr": "Ayşe", "ru": "Ольга", "uk": "Оксана", "fa": "سارا", "th": "สมชาย"}
"""The player, a name of the language (one server serves every page: each its own)."""


def web_table(page: Page, url: str, lang: str) -> Path:
    page.open(url)
    page.driver.execute_script("localStorage.setItem('pisyedili.lang', arguments[0])", lang)
    page.open(f"{url}?play=1&name={quote(NAMES[lang])}&rules=classic&bots=3&level=medium")
    page.wait_screen("table")
    played = 0
    while True:
        page.wait(lambda d: page.body("turn") == "mine", what="our turn")
        if played >= TURNS and page.all("#hand button.card.legal"):
            break
        page.take_turn()
        played += 1
    path = save(page, f"web-{lang}", OUT)
    squeeze(path)
    return path


def terminal_table(lang: str) -> Path:
    terminal = Terminal(f"pisyedili-shots-{uuid.uuid4().hex[:8]}")
    try:
        terminal.start([*command(), "play", "--name", NAMES[lang], "--bots", "3", "--seed", SEED,
                        "--lang", lang], 80, 24, env={"LC_ALL": "", "LC_MESSAGES": ""})
        i18n.set_language(lang)
        turn = i18n._("your move: ")
        i18n.set_language("en")
        screen = terminal.wait_for(lambda s: turn in s, f"our turn in {lang}")
    finally:
        terminal.tmux("kill-server")
    path = OUT / f"terminal-{lang}.txt"
    path.write_text("\n".join(line.rstrip() for line in screen.splitlines()).rstrip() + "\n",
                    encoding="utf-8")
    return path


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    catalogs.compile_all(out=lambda line: None)  # the page's catalogs, as installed
    with served("--seed", SEED) as server, chromium(1280, 800) as d:
        for lang in catalogs.LANGUAGES:
            path = web_table(fresh_page(d, server.url), server.url, lang)
            print(path, path.stat().st_size)
    for lang in catalogs.LANGUAGES:
        path = terminal_table(lang)
        print(path, path.stat().st_size)


if __name__ == "__main__":
    main()
