"""The real `pisyedili play` in a real terminal (tmux): what a person would see.

Runs the installed console script (or `python -m pisyedili.client.cli` when the script
is not beside the interpreter) in a private tmux server at 80×24 or wider, reads the
screen, types and presses keys as a person would, and reads the exit status.  Screens
a game reaches only by chance (a hand of 18) come from `screen_app.py`, the same client
fed recorded messages.  Skipped only when tmux itself is missing (CI installs it).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import replay_kit
from poll_kit import poll_until

from pisyedili.client import replay

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
POLL = 0.05
"""Seconds between two looks at the screen: a look is one short tmux command, and each
wait ends this soon after what it waits for appears."""


def command() -> list[str]:
    script = Path(sys.executable).with_name("pisyedili")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "pisyedili.client.cli"]


class Terminal:
    def __init__(self, socket: str) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        assert TMUX is not None
        return subprocess.run([TMUX, "-u", "-L", self.socket, "-f", os.devnull, *args],
                              capture_output=True, text=True, timeout=10, check=False)

    def start(self, argv: list[str], width: int = 80, height: int = 24,
              ascii_only: bool = False, data_home: Path | None = None,
              env: dict[str, str] | None = None) -> None:
        """Run `argv` in a fresh window (umask 022, as a login shell has it; with
        `data_home`, its own XDG_DATA_HOME; `env` over the rest, LANG=C.UTF-8 and
        TERM); when it ends, its exit status is printed and the window stays open."""
        given = env or {}
        env = {k: v for k, v in os.environ.items()
               if k in ("PATH", "HOME") or k.startswith("XDG_")}  # the test's own dirs
        env.update(TERM="xterm-256color", LANG="C.UTF-8")
        env.update(given)
        if data_home is not None:
            env["XDG_DATA_HOME"] = str(data_home)
        env_args = [a for k, v in env.items() for a in ("-e", f"{k}={v}")]
        shell = f'umask 022; {shlex.join(argv)}; echo "exit status $?"; sleep 120'
        started = self.tmux("new-session", "-d", "-s", "play", "-x", str(width),
                            "-y", str(height), "-c", str(Path(__file__).parent),
                            *env_args, shell)
        assert started.returncode == 0, started.stderr

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "play").stdout

    def history(self) -> str:
        """Everything printed so far, the scrolled-off lines too."""
        return self.tmux("capture-pane", "-p", "-S", "-", "-t", "play").stdout

    def rang(self) -> bool:
        """Whether the program rang the terminal bell (tmux flags the window)."""
        flag = self.tmux("display-message", "-p", "-t", "play", "#{window_bell_flag}")
        return flag.stdout.strip() == "1"

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "play", "-l", text)
        self.tmux("send-keys", "-t", "play", "Enter")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "play", *keys)

    def wait_for(self, ready: Callable[[str], bool], what: str, timeout: float = 20.0) -> str:
        """The screen once `ready` holds for it."""
        screens = [""]

        def shown() -> str | None:
            screens[0] = self.screen()
            return screens[0] if ready(screens[0]) else None

        return poll_until(shown, timeout, lambda: f"{what}; the screen was:\n{screens[0]}",
                          POLL)

    def exited(self) -> str:
        """Wait for the program to end; its exit status as printed."""
        screen = self.wait_for(lambda s: "exit status" in s, "the program's end")
        found = re.search(r"exit status (\d+)", screen)
        assert found, screen
        return found.group(1)


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    term = Terminal(f"pisyedili-test-{uuid.uuid4().hex[:8]}")
    try:
        yield term
    finally:
        term.tmux("kill-server")


def play(*args: str) -> list[str]:
    return [*command(), "play", "--name", "tester", *args]


CARD = r"(?:10|[2-9JQKA])[cdhs♣♦♥♠]"


def offered(screen: str) -> list[str]:
    """The legal moves on screen, each as `N:card` (maybe `+suit`), `draw` or `pass`."""
    found = re.search(r"^your move: (.*(?:\n {5,}.*)*)", screen, re.M)
    assert found, screen
    return found.group(1).split()


def hand_on(screen: str) -> list[str]:
    """The hand on screen, in order, over as many rows as it takes."""
    found = re.search(r"^hand (\d+:.*(?:\n {5}\d+:.*)*)", screen, re.M)
    assert found, screen
    return re.findall(r"\d+:(\S+)", found.group(1))


def test_play_continue_takes_the_seat_back_after_the_terminal_closed(
        terminal: Terminal) -> None:
    terminal.start(play("--bots", "2", "--seed", "11", "--ascii"), 120, 40)
    before = terminal.wait_for(lambda s: "your move:" in s, "our turn")
    hand = hand_on(before)
    terminal.tmux("kill-server")  # the terminal closes under the game

    later = Terminal(f"{terminal.socket}-continue")  # its own tmux: the old one may linger
    newer = Terminal(f"{terminal.socket}-new")
    try:
        later.start(play("--continue", "--ascii"), 120, 40)
        after = later.wait_for(lambda s: "your move:" in s, "our turn, taken back")
        assert hand_on(after) == hand
        assert offered(after) == offered(before)
        assert "no unfinished offline match" not in after
        later.type("/quit")
        later.type("/quit")
        assert later.exited() == "0"

        newer.start(play("--bots", "1", "--ascii"), 120, 40)  # no --continue: a new match
        fresh = newer.wait_for(lambda s: "your move:" in s or "bot 2:" in s, "a new match")
        assert "bot 3:" not in fresh
    finally:
        later.tmux("kill-server")
        newer.tmux("kill-server")


def move_once(term: Terminal) -> None:
    """Make the first move offered, and wait for the log to show it."""
    first = offered(term.wait_for(lambda s: "your move:" in s, "our turn"))[0]
    if first in ("draw", "pass"):
        typed = first[0]
    else:
        number = first.removesuffix("+suit").split(":")[0]
        typed = number + (" h" if first.endswith("+suit") else "")  # a jack names hearts
    term.type(typed)
    term.wait_for(lambda s: re.search(r"you (played|drew|passed)", s) is not None,
                  "our move in the log")


def journals(data_home: Path) -> Path:
    return data_home / "pisyedili" / "offline"


def free_journals(data_home: Path) -> list[Path]:
    """The offline journals no running `play` holds (each lock taken and let go)."""
    from pisyedili.server.store.files import FileInUse, FileLock

    free = []
    for path in sorted(journals(data_home).glob("*.sqlite3")):
        try:
            FileLock.acquire(path).release()
        except FileInUse:
            continue
        free.append(path)
    return free


def test_two_offline_matches_at_once_keep_a_journal_each(tmp_path: Path) -> None:
    data = tmp_path / "data"
    one, two, three, four = (Terminal(f"pisyedili-test-{uuid.uuid4().hex[:8]}")
                             for _ in range(4))
    try:
        one.start(play("--bots", "2", "--seed", "11", "--ascii"), 120, 40, data_home=data)
        hand = hand_on(one.wait_for(lambda s: "your move:" in s, "One's turn"))
        two.start(play("--bots", "1", "--seed", "5", "--ascii"), 120, 40, data_home=data)
        two.wait_for(lambda s: "your move:" in s, "Two's turn")

        # Every file the two `play`s made is their owner's alone, and so is the folder.
        folder = journals(data)
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}
        stems = {name.split(".")[0] for name in modes}
        assert len(stems) == 2, modes
        assert sorted(modes) == sorted(
            f"{stem}{suffix}" for stem in stems for suffix in (
                ".sqlite3", ".sqlite3-wal", ".sqlite3-shm", ".sqlite3.lock", ".session.json"))
        assert set(modes.values()) == {0o600}, modes
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert free_journals(data) == []  # each held by its `play`

        one.tmux("kill-server")  # One's terminal closes under its match
        poll_until(lambda: len(free_journals(data)) == 1, 20.0, "One's end", POLL)
        three.start(play("--continue", "--ascii"), 120, 40, data_home=data)
        after = three.wait_for(lambda s: "your move:" in s, "One's match, taken back")
        assert hand_on(after) == hand, "--continue took up One's match, not Two's"
        said = three.history()
        assert re.search(r"continuing the classic match started \d{4}-\d\d-\d\d "
                         r"\d\d:\d\d: deal 1, you in seat 1", said), said

        # Both matches play on, each into its own journal.
        move_once(three)
        move_once(two)
        for term in (two, three):
            assert "journal could not be written" not in term.history()

        # Nothing is left to continue: Two's match is Two's while it runs.
        four.start(play("--continue", "--ascii"), 120, 40, data_home=data)
        four.wait_for(lambda s: "no unfinished offline match to continue" in s,
                      "word that there is nothing to continue")
    finally:
        for term in (one, two, three, four):
            term.tmux("kill-server")


def test_quit_mid_match_then_continue_takes_it_back(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first, later = (Terminal(f"pisyedili-test-{uuid.uuid4().hex[:8]}") for _ in range(2))
    try:
        first.start(play("--bots", "2", "--seed", "11", "--ascii"), 120, 40, data_home=data)
        hand = hand_on(first.wait_for(lambda s: "your move:" in s, "our turn"))
        first.type("/quit")
        first.wait_for(lambda s: "play --continue` takes it up" in s, "the question")
        first.type("/quit")
        assert first.exited() == "0"

        later.start(play("--continue", "--ascii"), 120, 40, data_home=data)
        after = later.wait_for(lambda s: "your move:" in s, "the match, taken back")
        assert hand_on(after) == hand
        assert "continuing the classic match" in later.history()
    finally:
        first.tmux("kill-server")
        later.tmux("kill-server")


@pytest.mark.rule("C4")
def test_pisyedili_play_in_a_real_terminal(terminal: Terminal) -> None:
    terminal.start(play("--bots", "2", "--seed", "5", "--ascii"), 120, 40)

    screen = terminal.wait_for(lambda s: "your move:" in s, "our turn")
    # What a person needs to see: the hand, numbered; the top card; whose turn it is.
    cards = hand_on(screen)
    assert cards and all(re.fullmatch(r"(10|[2-9JQKA])[cdhs]", c) for c in cards), cards
    assert re.search(r"top ((10|[2-9JQKA])[cdhs]|none)", screen), screen
    assert "> you: " in screen, "the turn marker is on our seat"
    assert "bot 2:" in screen and "bot 3:" in screen, "each opponent's count is shown"
    assert "classic · deal 1 of 4" in screen or "classic | deal 1 of 4" in screen, screen
    assert not terminal.rang(), "no bell unless asked for"

    # Play the first card the server offers (or draw), by the number shown beside it.
    first = offered(screen)[0]
    if first in ("draw", "pass"):
        typed, expected = first[0], "you drew" if first == "draw" else "you passed"
    else:
        number, card = first.removesuffix("+suit").split(":")
        assert cards[int(number) - 1] == card, "the number shown is the card's place"
        typed = number + (" h" if first.endswith("+suit") else "")  # a jack names hearts
        expected = f"you played {card}"
    terminal.type(typed)
    terminal.wait_for(lambda s: expected in s, f"the log line {expected!r}")
    # The move was accepted: no refusal, and the pile has a top card now.
    screen = terminal.wait_for(lambda s: re.search(r"top (10|[2-9JQKA])[cdhs]", s) is not None,
                               "a top card")
    assert "(rule " not in screen, screen

    terminal.type("/quit")
    terminal.wait_for(lambda s: "play --continue` takes it up" in s,
                      "the question before leaving a match")
    terminal.type("/quit")
    assert terminal.exited() == "0"


@pytest.mark.rule("C4")
def test_a_refusal_shows_cards_as_the_screen_does(terminal: Terminal) -> None:
    terminal.start(play("--bots", "2", "--seed", "7"))
    screen = terminal.wait_for(lambda s: "your move:" in s, "our turn")
    moves = [m.split(":")[-1].removesuffix("+suit") for m in offered(screen)]
    unplayable = [c for c in hand_on(screen) if c not in moves and not c.startswith("J")]
    assert unplayable and "draw" in moves, "--seed 7 no longer deals an unplayable card"
    card = unplayable[0]
    wire = card[:-1] + {"♣": "c", "♦": "d", "♥": "h", "♠": "s"}[card[-1]]
    terminal.type(wire)
    screen = terminal.wait_for(lambda s: "(rule C" in s, "the refusal")
    [line] = [ln for ln in screen.splitlines() if "(rule C" in ln]
    assert card in line and not re.search(r"\b(10|[2-9JQKA])[cdhs]\b", line), line
    assert "[" not in line and "illegal" not in line, "no internal code on screen"


def test_help_fits_80_by_24_and_wraps_between_words(terminal: Terminal) -> None:
    from pisyedili.client import render

    terminal.start(play("--bots", "5", "--seed", "5"))
    terminal.wait_for(lambda s: "your move:" in s, "our turn")
    for topic in ("", "moves", "table", "lobby", "screen"):
        terminal.type(f"/help {topic}".strip())
        rows = [render.plain(f).rstrip() for f in render.help_lines(topic, 80)]
        screen = terminal.wait_for(lambda s, last=rows[-1]: last in s.splitlines(),  # type: ignore[misc]
                                   f"the end of /help {topic}")
        shown = [ln.rstrip() for ln in screen.splitlines()]
        # Every row of the page is on screen at once, whole: none was cut by the terminal.
        start = shown.index(rows[0])
        assert shown[start:start + len(rows)] == rows, (rows, screen)


def test_ctrl_c_mid_match_asks_then_quits_with_status_0(terminal: Terminal) -> None:
    terminal.start(play("--bots", "2", "--seed", "5", "--bell"))
    terminal.wait_for(lambda s: "your move:" in s, "our turn")
    assert terminal.rang(), "--bell rings when a decision becomes ours"
    terminal.type("/say hello")
    terminal.wait_for(lambda s: "tester: hello" in s, "the chat line")
    terminal.keys("C-d")
    terminal.wait_for(lambda s: "play --continue` takes it up" in s,
                      "the question before quitting")
    terminal.keys("C-c")
    assert terminal.exited() == "0"
    history = terminal.history()
    assert history.count("tester: hello") == 1, "Ctrl-D did not send the line again"
    assert "you left the table" not in history, "offline, the seat is kept to continue"


def test_ctrl_d_at_the_first_prompt_exits_with_status_0(terminal: Terminal,
                                                        tmp_path: Path) -> None:
    from test_client_connect import server

    with server(tmp_path) as (_, port):
        terminal.start([*command(), f"127.0.0.1:{port}", "--name", "tester"])
        terminal.wait_for(lambda s: "lobby>" in s and "connected to" in s, "the first prompt")
        terminal.keys("C-d")
        assert terminal.exited() == "0"
    assert "Traceback" not in terminal.history()


def test_a_first_connection_refused_exits_with_status_1_and_no_prompt(
        terminal: Terminal) -> None:
    terminal.start([*command(), "127.0.0.1:1", "--name", "tester"])
    assert terminal.exited() == "1"
    history = terminal.history()
    assert "cannot connect to 127.0.0.1:1: connection refused" in history
    assert "lobby>" not in history and "Traceback" not in history


def screen_app(scenario: str) -> list[str]:
    return [sys.executable, str(Path(__file__).with_name("screen_app.py")), scenario]


@pytest.mark.parametrize(("width", "height"), [(80, 24), (120, 40)])
def test_a_hand_of_18_and_six_seats_are_all_on_screen(terminal: Terminal, width: int,
                                                      height: int) -> None:
    from screen_app import HAND, LEGAL

    terminal.start(screen_app("crowded"), width, height)
    screen = terminal.wait_for(lambda s: "your move:" in s, "the table")
    shown = hand_on(screen)
    assert len(shown) == len(HAND) == 18, screen
    assert [c for c in shown if c.startswith(("4", "6", "9", "K")) and c.endswith("♦")], screen
    moves = offered(screen)
    # Every card offered is on the hand line, under the number it has there.
    for move in moves[:-1]:
        number, card = move.removesuffix("+suit").split(":")
        assert shown[int(number) - 1] == card, (move, screen)
    assert len(moves) == len(LEGAL) + 1 and moves[-1] == "draw"
    seats = re.findall(r"(you|Ayşe \(away, bot plays\)|bot \d): (\d+) cards?, (\d+) pts?",
                       screen)
    assert [s[0] for s in seats] == ["you", "Ayşe (away, bot plays)", "bot 3", "bot 4",
                                     "bot 5", "bot 6"], screen
    assert "bot 6: 1 card, 1 pt" in screen, "singular where it is one"
    assert "deal 2 of 4" in screen
    rows = screen.splitlines()
    seat_rows = next(i for i, r in enumerate(rows) if r.startswith("hand ")) - next(
        i for i, r in enumerate(rows) if r.startswith("▶ you"))
    assert seat_rows == (3 if width == 80 else 2), "a wider terminal takes fewer rows"


def test_between_deals_the_status_counts_down_to_the_next(terminal: Terminal) -> None:
    terminal.start(screen_app("between"))
    first = terminal.wait_for(lambda s: "next deal in" in s, "the countdown")
    seconds = int(re.findall(r"next deal in (\d+)s", first)[0])
    terminal.wait_for(lambda s: f"next deal in {seconds - 1}s" in s, "the countdown ticking")
    assert "deal 2 of 4" in first and "deal over" in first
    assert "waiting for" not in first and "(54s)" not in first, "nothing stale"


def test_pisyedili_replay_steps_with_the_arrow_and_page_keys(terminal: Terminal,
                                                             tmp_path: Path) -> None:
    path = tmp_path / "match.json"
    match = replay.from_document(replay_kit.play(3, "classic", 3))
    replay.save(match, path)
    terminal.start([*command(), "replay", str(path), "--ascii"], 80, 24)
    screen = terminal.wait_for(lambda s: "| dealt" in s, "the deal as dealt")
    assert "deal 1 of 2" in screen and "Ay" in screen and "Mehmet: 7 cards" in screen
    terminal.keys("Right")
    terminal.wait_for(lambda s: "move 1 of" in s, "one move on")
    terminal.keys("Right")
    terminal.wait_for(lambda s: "move 2 of" in s, "another")
    terminal.keys("Left")
    terminal.wait_for(lambda s: "move 1 of" in s, "one move back")
    terminal.keys("End")
    terminal.wait_for(lambda s: "deal over" in s, "the deal's result")
    terminal.keys("PageDown")
    terminal.wait_for(lambda s: "deal 2 of 2 | dealt" in s, "the next deal")
    terminal.type("q")
    assert terminal.exited() == "0"


def test_a_second_terminal_of_one_name_is_asked_before_it_takes_the_seat_over(
        terminal: Terminal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_client_connect import client, server

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # one user's two terminals
    with server(tmp_path) as (_, port), \
            client(tmp_path, f"127.0.0.1:{port}", "--name", "ayse") as first:
        first.out.wait_for(r"connected to .* as ayse\b")
        terminal.start([*command(), f"127.0.0.1:{port}", "--name", "ayse"])
        terminal.wait_for(lambda s: "Take the seat over?" in s and "[y/N]" in s, "the question")
        terminal.type("y")
        terminal.wait_for(lambda s: "reconnected: your session and seat are back" in s,
                          "the session taken over")
        first.out.wait_for(r"disconnected for good: .*another connection")
        terminal.type("/quit")
        assert terminal.exited() == "0"
        first.type("/quit")
        assert first.exit_status() == 0
