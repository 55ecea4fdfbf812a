"""The real `pisyedili play` in a real terminal (tmux): what a person would see.

Runs the installed console script (or `python -m pisyedili.client.cli` when the script
is not beside the interpreter) in a private tmux server, reads the screen, types a
move, and quits.  Skipped only when tmux itself is missing (CI installs it).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


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
        return subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True,
                              text=True, timeout=10, check=False)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "play").stdout

    def alive(self) -> bool:
        return self.tmux("has-session", "-t", "play").returncode == 0

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "play", "-l", text)
        self.tmux("send-keys", "-t", "play", "Enter")

    def wait_for(self, ready: Callable[[str], bool], what: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if ready(screen):
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{what} never appeared; the screen was:\n{screen}")


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    term = Terminal(f"pisyedili-test-{uuid.uuid4().hex[:8]}")
    try:
        yield term
    finally:
        term.tmux("kill-server")


@pytest.mark.rule("C4")
def test_pisyedili_play_in_a_real_terminal(terminal: Terminal) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["TERM"] = "xterm-256color"
    cmd = shlex.join([*command(), "play", "--bots", "2", "--seed", "5", "--name", "tester",
                      "--ascii"])
    env_args = [a for k, v in env.items() if k in ("TERM", "PATH", "HOME", "LANG")
                for a in ("-e", f"{k}={v}")]
    started = terminal.tmux("new-session", "-d", "-s", "play", "-x", "120", "-y", "40",
                            *env_args, cmd)
    assert started.returncode == 0, started.stderr

    screen = terminal.wait_for(lambda s: "your move:" in s, "our turn")
    # What a person needs to see: the hand, numbered; the top card; whose turn it is.
    hand = re.search(r"^hand (1:\S+.*)$", screen, re.M)
    assert hand, screen
    cards = re.findall(r"\d+:(\S+)", hand.group(1))
    assert cards and all(re.fullmatch(r"(10|[2-9JQKA])[cdhs]", c) for c in cards), cards
    assert re.search(r"top ((10|[2-9JQKA])[cdhs]|none)", screen), screen
    assert "> you: " in screen, "the turn marker is on our seat"
    assert "bot 2:" in screen and "bot 3:" in screen, "each opponent's count is shown"

    # Play the first card the server offers (or draw), as a person would type it.
    offered = re.search(r"^your move: (.*)$", screen, re.M)
    assert offered, screen
    first = offered.group(1).split()[0]
    if first in ("draw", "pass"):
        typed, expected = first[0], "you drew" if first == "draw" else "you passed"
    else:
        card = first.removesuffix("+suit")
        typed = card.lower() + (" h" if first.endswith("+suit") else "")  # a jack names hearts
        expected = f"you played {card}"
    terminal.type(typed)
    terminal.wait_for(lambda s: expected in s, f"the log line {expected!r}")
    # The move was accepted: no refusal, and the pile has a top card now.
    screen = terminal.wait_for(lambda s: re.search(r"top (10|[2-9JQKA])[cdhs]", s) is not None,
                               "a top card")
    assert "[illegal" not in screen and "[not_your_turn]" not in screen, screen

    terminal.type("/quit")
    deadline = time.monotonic() + 10
    while terminal.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not terminal.alive(), "/quit ends the program"
