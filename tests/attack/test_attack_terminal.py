"""The terminal under attack: a hostile server's words and a hostile LAN announcement
reach `pisyedili`'s terminal as text, never as the sequences a terminal acts on.

A server that refuses our `hello` with a message full of escape sequences (retitle the
window, clear the screen, a red "password needed" line, a hidden link, a clipboard
write, a C1 CSI, a right-to-left override) is a tiny Twisted server here, and the real
`pisyedili` meets it in a real terminal (tmux): the window keeps its title, the
clipboard stays empty, the screen shows the escapes written out. Any host on the LAN can
announce `_pisyedili._tcp`: one announcing a hostile name and version, on loopback, is
listed by the real browsing and the real table as text.
"""

from __future__ import annotations

import io
import os
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
import pytest_twisted
from poll_kit import poll_until
from test_client_tmux import TMUX, Terminal, command, terminal
from twisted.internet import reactor, threads, utils
from twisted.internet.endpoints import serverFromString
from twisted.internet.protocol import Factory
from twisted.protocols.basic import Int32StringReceiver
from zeroconf import ServiceInfo, Zeroconf

from pisyedili.client.discovery import SERVICE_TYPE, choose_from, discover, found_of
from pisyedili.protocol.codec import encode
from pisyedili.protocol.text import BIDI_CONTROLS

__all__ = ["terminal"]  # the fixture, shared with test_client_tmux

PAYLOAD = ("\x1b]0;PWNED\x07\x1b]2;PWNED\x07\x1b[2J\x1b[H\x1b[31mYour password is needed: "
           "\x1b[0m\x1b]8;;http://evil.example/\x1b\\here\x1b]8;;\x1b\\ "
           "\x1b]52;c;cHduZWQ=\x07 \x9b2J \u202eevil\u2069")
"""OSC 0 and 2 (the title), CSI 2J (clear), SGR red, OSC 8 (a link), OSC 52 (the
clipboard), a C1 CSI, a right-to-left override and an isolate's end."""


def acted_on(text: str) -> list[str]:
    """The characters of `text` a terminal would act on rather than show."""
    return [ch for ch in text if unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp")
            or ord(ch) in BIDI_CONTROLS]


class Refuser(Int32StringReceiver):
    """Answers the first frame (the client's `hello`) with a hostile `error`."""

    def stringReceived(self, string: bytes) -> None:
        self.sendString(encode({"type": "error", "code": "evil\x1b]2;CODE\x07",
                                "message": PAYLOAD}))  # type: ignore[no-untyped-call]
        assert self.transport is not None
        self.transport.loseConnection()  # type: ignore[misc]


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
@pytest_twisted.ensureDeferred
async def test_a_hostile_refusal_of_hello_is_shown_not_obeyed(terminal: Terminal,
                                                               tmp_path: Path) -> None:
    port = await serverFromString(reactor, "tcp:0:interface=127.0.0.1").listen(  # type: ignore[no-untyped-call]
        Factory.forProtocol(Refuser))
    try:
        where = f"127.0.0.1:{port.getHost().port}"
        # The client waits for Enter, so the terminal is set up before anything is written.
        terminal.start(["sh", "-c", 'read go; exec "$@"', "sh", *command(), where,
                        "--name", "tester"], width=100, data_home=tmp_path / "data")
        terminal.tmux("set-option", "-g", "set-clipboard", "on")  # OSC 52 would fill a buffer
        title = terminal.tmux("display-message", "-p", "-t", "play", "#{pane_title}").stdout
        terminal.keys("Enter")
        status = await threads.deferToThread(terminal.exited)
    finally:
        await port.stopListening()
    shown = terminal.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "play").stdout
    assert status == "1", shown
    assert f"{where} refused the connection: \\x1b]0;PWNED\\x07\\x1b]2;PWNED\\x07" in shown
    assert "\\x1b]52;c;cHduZWQ=\\x07 \\x9b2J \\u202eevil\\u2069 (evil\\x1b]2;CODE\\x07)" in shown
    assert terminal.tmux("display-message", "-p", "-t", "play",
                         "#{pane_title}").stdout == title, "the window kept its title"
    assert terminal.tmux("list-buffers").stdout == "", "nothing was put in the clipboard"
    assert "connecting to" in shown, "the screen was not cleared"


# -- the LAN ------------------------------------------------------------------------------

EVIL_NAME = "Kahve\x1b]0;PWNED\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07\u202eevil"
EVIL_VERSION = "1.0\x9b2J\x1b]8;;http://evil.example/\x07\r\x08"


def test_a_hostile_announcement_is_listed_as_text() -> None:
    info = ServiceInfo(SERVICE_TYPE, f"Evil.{SERVICE_TYPE}", port=7707,
                       parsed_addresses=["192.0.2.9"], server="h.local.",
                       properties={"name": EVIL_NAME, "version": EVIL_VERSION})
    found = found_of(info)
    assert found[0].name == EVIL_NAME, "what the LAN said, kept as it was"
    out = io.StringIO()

    def answer(question: str) -> str:
        out.write(question)
        return "n"

    assert choose_from(found, out, io.StringIO(), answer) == 0
    listed = out.getvalue()
    assert acted_on(listed.replace("\n", "")) == [], listed
    assert "Kahve\\x1b]0;PWNED\\x07\\x1b[2J\\x1b]52;c;cHduZWQ=\\x07\\u202eevil" in listed
    assert "1.0\\x9b2J\\x1b]8;;http://evil.example/\\x07\\x0d\\x08" in listed
    assert "Connect to Kahve\\x1b]0;PWNED" in listed, "the question names it as text too"


@pytest.fixture
def announced() -> Iterator[int]:
    """A hostile server's announcement on loopback (nothing listens at its port)."""
    port = 40000 + os.getpid() % 20000  # told apart from other runs' announcements
    zc = Zeroconf(interfaces=["127.0.0.1"])
    info = ServiceInfo(SERVICE_TYPE, f"Evil {os.getpid()}.{SERVICE_TYPE}", port=port,
                       parsed_addresses=["127.0.0.1"], server=f"evil-{os.getpid()}.local.",
                       properties={"name": EVIL_NAME, "version": EVIL_VERSION})
    try:
        zc.register_service(info, allow_name_change=True)
    except Exception as exc:  # no multicast on loopback here
        zc.close()
        pytest.skip(f"cannot announce on loopback: {exc}")
    try:
        yield port
    finally:
        zc.unregister_service(info)
        zc.close()


def test_pisyedili_discover_lists_a_hostile_announcement_as_text(announced: int) -> None:
    said = io.StringIO()

    def listed() -> list[str]:
        """The rows of one browse that name the announced port."""
        said.seek(0)
        said.truncate()
        assert discover(said, io.StringIO(), 2.0, ["127.0.0.1"]) == 0
        return [row for row in said.getvalue().splitlines() if f":{announced} " in row]

    # Browsing is time-based: a loaded machine may answer late, so browse again.
    mine = poll_until(listed, 30.0, lambda: f"the announcement listed: {said.getvalue()}")
    assert acted_on(said.getvalue().replace("\n", "")) == [], said.getvalue()
    assert mine[0].startswith("Kahve\\x1b]0;PWNED\\x07\\x1b[2J\\x1b]52;c;cHduZWQ=\\x07"
                              "\\u202eevil"), mine
    assert "1.0\\x9b2J\\x1b]8;;http://evil.example/\\x07\\x0d\\x08" in mine[0]


@pytest_twisted.ensureDeferred
async def test_pisyedili_bot_logs_a_hostile_refusal_as_text() -> None:
    """`pisyedili-bot` runs in a terminal too: its log quotes the server's refusal."""
    port = await serverFromString(reactor, "tcp:0:interface=127.0.0.1").listen(  # type: ignore[no-untyped-call]
        Factory.forProtocol(Refuser))
    try:
        bot = await utils.getProcessOutputAndValue(  # type: ignore[no-untyped-call]
            sys.executable, ["-c", "from pisyedili.client.bot import main; "
                                   "raise SystemExit(main())",
                             f"127.0.0.1:{port.getHost().port}", "--name", "tester"],
            env=dict(os.environ))
    finally:
        await port.stopListening()
    out, err, status = bot
    logged = (out + err).decode("utf-8")
    assert status != 0
    assert "\\x1b]52;c;cHduZWQ=\\x07" in logged, logged
    assert acted_on(logged.replace("\n", "")) == [], "the log acts on no terminal"
