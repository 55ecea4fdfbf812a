"""The score sheet in the real terminal client (tmux): shown at a deal's end, on
`/score`, offline and after `pisyedili play --continue` rebuilt the table from its
journal, and in `pisyedili replay` (docs/protocol.md, "The score sheet")."""

from __future__ import annotations

import functools
import re
import uuid
from pathlib import Path

import pytest
import replay_kit
from prompt_toolkit.utils import get_cwidth
from test_client_tmux import TMUX, Terminal, command, hand_on, offered, play, terminal

from pisyedili.client import replay
from pisyedili.server import rules as engine

__all__ = ["terminal"]  # the fixture, shared with test_client_tmux
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")

SHEET = "score sheet (/score; * the deal's winner)"


def sheet_rows(text: str) -> list[list[str]]:
    """The rows of the last score sheet in `text`: the header's names, each deal's
    cells, the totals."""
    start = text.rindex(SHEET)
    rows: list[list[str]] = []
    for line in text[start:].splitlines()[1:]:
        if not line.startswith("  "):
            break
        rows.append(line.split())
    return rows


def shown(screen: str) -> bool:
    """The sheet is on screen: its last line, the totals."""
    return re.search(r"^  total ", screen, re.M) is not None


def moved(hand: list[str], screen: str) -> bool:
    """Our move was taken: the deal ended, the turn passed, or the hand changed."""
    return shown(screen) or "your move:" not in screen or hand_on(screen) != hand


def draw_out_the_deal(term: Terminal) -> str:
    """Play the opening club if it is ours, then draw card after card (C7: the
    decision stays with the drawing seat) until the stock runs out (C15); the screen
    once the deal is over."""
    for _ in range(200):
        screen = term.wait_for(lambda s: "your move:" in s or shown(s),
                               "our turn or the deal's end", 60)
        if shown(screen):
            return screen
        moves = offered(screen)
        hand = hand_on(screen)
        if "draw" in moves:
            term.type("d")
        else:  # the opening: a club (C2)
            term.type(moves[0].removesuffix("+suit").split(":")[0] + " h")
        term.wait_for(functools.partial(moved, hand), "the move taken")
    raise AssertionError("the deal did not end")


@pytest.mark.rule("C15")
def test_the_sheet_shows_at_a_deals_end_and_on_score_and_after_continue(
        tmp_path: Path) -> None:
    data = tmp_path / "data"
    first, later = (Terminal(f"pisyedili-test-{uuid.uuid4().hex[:8]}") for _ in range(2))
    try:
        first.start(play("--bots", "1", "--seed", "4", "--ascii"), 120, 40, data_home=data)
        draw_out_the_deal(first)
        ended = first.history()
        assert "deal over: the stock ran out" in ended
        at_end = sheet_rows(ended)
        # deal, the two seats; deal 1's points, the winner's marked; the totals.
        assert at_end[0] == ["deal", "you", "bot", "2"], at_end
        deal_no, mine, theirs, note = at_end[1][0], at_end[1][1], at_end[1][2], at_end[1][3:]
        assert deal_no == "1" and note == ["stock", "out"], at_end  # no multiplier (C15)
        assert theirs.endswith("*") and not mine.endswith("*"), "the lower hand wins"
        assert at_end[2] == ["total", mine, theirs.rstrip("*")], at_end

        # On demand, in the next deal: the same sheet.
        first.wait_for(lambda s: "deal 2 of 4" in s, "the next deal")
        first.type("/score")
        first.wait_for(lambda s: s.count(SHEET) >= 1 and "/score" not in s.splitlines()[-1],
                       "the sheet again")
        assert sheet_rows(first.history()) == at_end

        first.type("/quit")
        first.wait_for(lambda s: "play --continue` takes it up" in s, "the question")
        first.type("/quit")
        assert first.exited() == "0"

        # The table rebuilt from its journal shows the same sheet.
        later.start(play("--continue", "--ascii"), 120, 40, data_home=data)
        later.wait_for(lambda s: "deal 2 of 4" in s, "the match, taken back")
        later.type("/score")
        later.wait_for(lambda s: SHEET in s, "the sheet after --continue")
        assert sheet_rows(later.history()) == at_end
    finally:
        first.tmux("kill-server")
        later.tmux("kill-server")


def test_a_replay_shows_the_sheet_so_far_at_each_deals_end(terminal: Terminal,
                                                           tmp_path: Path) -> None:
    path = tmp_path / "match.json"
    match = replay.from_document(replay_kit.play(3, "classic", 3))
    replay.save(match, path)
    points = [d["result"]["points"] for d in match.deals]
    terminal.start([*command(), "replay", str(path), "--ascii"], 100, 40)
    terminal.wait_for(lambda s: "| dealt" in s, "the deal as dealt")
    terminal.type("/score")  # nothing scored yet
    terminal.wait_for(lambda s: "No deal of this match has ended yet." in s, "an empty sheet")
    terminal.keys("End")
    screen = terminal.wait_for(lambda s: SHEET in s, "deal 1's result and the sheet")
    rows = sheet_rows(screen)
    assert [int(c.rstrip("*")) for c in rows[1][1:4]] == points[0], rows
    terminal.keys("PageDown")
    terminal.wait_for(lambda s: "deal 2 of 2 | dealt" in s, "the next deal")
    terminal.type("/score")  # deal 1 only: deal 2 is not over
    terminal.wait_for(lambda s: "/score" not in s.splitlines()[-1] and SHEET in s, "the sheet")
    so_far = sheet_rows(terminal.history())
    assert [r[0] for r in so_far[1:]] == ["1", "total"], so_far
    terminal.keys("End")
    screen = terminal.wait_for(lambda s: "match over" in s, "the match's end")
    rows = sheet_rows(screen)
    totals = engine.sheet_rows(d["result"] for d in match.deals)[-1]["totals"]
    assert [r[0] for r in rows[1:]] == ["1", "2", "total"], rows
    assert [int(c) for c in rows[3][1:4]] == totals
    terminal.type("q")
    assert terminal.exited() == "0"


def sheet_lines(text: str) -> list[str]:
    """The lines of the last score sheet in `text`, from its title to its totals."""
    lines = text.splitlines()
    end = max(i for i, line in enumerate(lines) if line.startswith("  total "))
    start = max(i for i, line in enumerate(lines[:end]) if line.startswith("score sheet"))
    return lines[start:end + 1]


@pytest.mark.parametrize("columns", [40, 60])
def test_a_deals_end_lays_the_sheet_out_for_a_narrow_terminal(
        terminal: Terminal, columns: int) -> None:
    """Four seats in 40 and 60 columns: no line of the sheet printed at the deal's end
    is wider than the terminal or wrapped by it (its rows marked `|`), and each seat's
    numbers end in one column from the first deal to the totals."""
    terminal.start(play("--bots", "3", "--seed", "4", "--ascii"), columns, 40)
    lines = sheet_lines(draw_out_the_deal(terminal))
    for line in lines:
        assert get_cwidth(line.rstrip()) <= columns and not line.startswith("|"), lines
    rows = [line for line in lines if line.startswith("  ")]
    assert [row.split()[0] for row in rows] == ["deal", "1", "total"], lines
    assert rows[0].split()[1:] == ["you", "bot", "2", "bot", "3", "bot", "4"] \
        or columns < 60, rows  # whole names where they fit
    assert len(rows[1].split()) >= 5 and len(rows[2].split()) == 5, rows

    def ends(line: str, skip: int) -> list[int]:
        """The display column after each seat's number, `skip` numbers in (a deal's)."""
        return [get_cwidth(line[:m.end()]) for m in re.finditer(r"\d+", line)][skip:skip + 4]

    assert ends(rows[1], 1) == ends(rows[2], 0) and len(ends(rows[2], 0)) == 4, rows
