"""`pisyedili-bot` as people run it: a process playing on a real server, stopped by a signal.

SIGTERM (a supervisor, `kill`) and SIGINT (Ctrl-C) must make it leave its table and
exit with status 0, as docs/bots.md says of a bot that stops playing, without a
traceback. The timeouts are backstops only: every wait is for a log line.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from process_output import Output

BACKSTOP = 60.0


def command(script: str, module: str) -> list[str]:
    """The installed console script, or the same entry point through this Python."""
    installed = Path(sys.executable).parent / script
    if installed.exists():
        return [str(installed)]
    return [sys.executable, "-c", f"from {module} import main; raise SystemExit(main())"]


def start(argv: list[str]) -> tuple[subprocess.Popen[str], Output]:
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, encoding="utf-8")
    assert proc.stdout is not None
    return proc, Output(proc.stdout)


def end(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[int, Output]]:
    """A real `pisyedili-server` on a loopback port it chose (read from its log)."""
    proc, out = start([*command("pisyedili-server", "pisyedili.server.service.tap"),
                       "--listen", "tcp:0:interface=127.0.0.1"])
    try:
        port = int(out.wait_for(r"listening on .*port=(\d+)").group(1))
        yield port, out
    finally:
        end(proc)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_makes_the_bot_leave_and_exit_0(server: tuple[int, Output],
                                                 signum: signal.Signals) -> None:
    port, server_log = server
    bot, out = start([*command("pisyedili-bot", "pisyedili.client.bot"),
                      f"127.0.0.1:{port}", "--create", "classic", "--bots", "easy",
                      "--level", "easy", "--matches", "0"])
    try:
        player = out.wait_for(r"connected as .* \(player (\d+)\)").group(1)
        table = out.wait_for(r"at table (\d+)").group(1)
        server_log.wait_for(rf"table {table}: start by player {player}\b")  # playing
        bot.send_signal(signum)
        assert bot.wait(timeout=BACKSTOP) == 0
        text = out.rest()
        # It gave its seat up rather than dropping the connection.
        server_log.wait_for(rf"table {table}: leave by player {player}\b")
    finally:
        end(bot)
    assert f"{signum.name}: leaving" in text
    assert "bot leaves: stopped" in text
    assert "Unhandled" not in text and "Traceback" not in text, text
    assert "reconnecting" not in text, text
