"""`pisyedili play --web` as a player runs it: a process that prints the page's address.

The address must serve the web client, carry the match's settings for the page's
autopilot, and its `/ws` must take a hello and host that match; Ctrl-C ends it all.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple
from urllib.parse import parse_qs, urlsplit

import fork_kit
import pytest
import pytest_twisted
from process_output import PLAY, Output
from twisted.internet.threads import deferToThread
from ws_kit import ws_connect

from pisyedili.client.cli import can_open_browser

TIMEOUT = 30.0


class Played(NamedTuple):
    """The process and its two streams, each read on a thread of its own."""

    process: subprocess.Popen[str]
    stdout: Output
    stderr: Output


@contextmanager
def playing(*args: str) -> Iterator[Played]:
    """`pisyedili play --web --no-open ARGS` in a process, interrupted and reaped on exit."""
    process = fork_kit.popen([sys.executable, "-c", PLAY, "play", "--web", "--no-open",
                              *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, text=True, encoding="utf-8")
    assert process.stdout is not None and process.stderr is not None
    played = Played(process, Output(process.stdout), Output(process.stderr))
    try:
        yield played
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=TIMEOUT)
        played.stdout.rest()
        played.stderr.rest()
        process.stdout.close()
        process.stderr.close()


async def printed_url(played: Played) -> str:
    """The address: the process's first line, waited for on a thread (with a backstop)."""
    line = (await deferToThread(played.stdout.wait_for, r"^.*$", TIMEOUT)).string
    assert line.startswith("Pis Yedili is at http://127.0.0.1:"), (
        line, played.process.poll(), played.stderr.rest(5) if played.process.poll()
        is not None else "")
    return line.split(" at ", 1)[1].strip()


@pytest_twisted.ensureDeferred
async def test_play_web_prints_an_address_that_serves_the_page_and_the_socket() -> None:
    with playing("--name", "Ayşe Öz", "--rules", "cardiva", "--bots", "2", "--level",
                 "easy") as played:
        process = played.process
        url = await printed_url(played)
        parts = urlsplit(url)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        assert parts.path == "/"
        assert query == {"play": "1", "name": "Ayşe Öz", "rules": "cardiva", "bots": "2",
                         "level": "easy"}

        def get() -> tuple[int, str, bytes]:
            with urllib.request.urlopen(url, timeout=10) as response:
                return response.status, response.headers["content-type"], response.read()

        status, content_type, page = await deferToThread(get)
        assert status == 200 and content_type.startswith("text/html")
        assert b"<html" in page.lower()

        # What the page's autopilot does, over the printed address's /ws.
        browser = await ws_connect(int(parts.port or 0), name=query["name"])
        snap = await browser.ok("create_table", rules=query["rules"],
                                seats=int(query["bots"]) + 1, private=True)
        for seat in (1, 2):
            await browser.ok("add_bot", seat=seat, level=query["level"])
        await browser.ok("ready", ready=True)
        await browser.ok("start")
        # The bots play at the default delay (0.8 s a step) and may take several steps
        # each, draws and penalties included, before the first decision is ours: up to
        # 8 s was seen, past the wire client's default wait.
        assert (await browser.next_decision(TIMEOUT))["type"] in ("table", "update")
        assert snap["table"]["rules"] == "cardiva"

        process.send_signal(signal.SIGINT)  # Ctrl-C
        goodbye = await browser.wait(lambda m: m["type"] == "error")
        assert goodbye["code"] == "shutting_down"
        await browser.closed
        assert await deferToThread(process.wait, TIMEOUT) == 0


@pytest_twisted.ensureDeferred
async def test_play_web_leaves_out_a_level_it_was_not_given() -> None:
    with playing("--name", "bo", "--bots", "1") as played:
        query = parse_qs(urlsplit(await printed_url(played)).query)
        assert "level" not in query and query["bots"] == ["1"]
        assert query["rules"] == ["classic"]


def test_play_web_refuses_a_bot_count_the_rules_do_not_allow() -> None:
    done = fork_kit.run([sys.executable, "-c", PLAY, "play", "--web", "--no-open",
                         "--bots", "9"], capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 2 and "--bots must be" in done.stderr
    done = fork_kit.run([sys.executable, "-c", PLAY, "play", "--no-open"],
                        capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 2 and "--no-open goes with --web" in done.stderr


@pytest.mark.parametrize(("env", "platform", "opens"), [
    ({}, "linux", False),  # a console: no graphical browser to open
    ({"DISPLAY": ":0"}, "linux", True),
    ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", True),
    ({}, "darwin", True),
    ({}, "win32", True),
])
def test_a_browser_is_opened_only_where_one_can_show(env: dict[str, str], platform: str,
                                                      opens: bool) -> None:
    assert can_open_browser(env, platform) is opens
