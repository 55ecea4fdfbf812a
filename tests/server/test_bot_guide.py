"""docs/writing-a-bot.md holds: its example bot, run as written against a real server
process, plays a whole match on a stacked deck and exits 0; what it treats as a
resumable close, and the guide's table of closing codes, are the server's."""

from __future__ import annotations

import ast
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from process_output import server_process
from test_restart_process import Client

from pisyedili.protocol.errors import ERRORS
from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.rules import CARD_STR

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "writing-a-bot.md"
DEADLINE = 180.0
"""Seconds the bot has for its match: a two-deal match against a bot takes about one."""


def example() -> str:
    """The guide's one Python block: the example bot."""
    blocks: list[str] = re.findall(r"^```python\n(.*?)^```$",
                                   GUIDE.read_text(encoding="utf-8"), re.S | re.M)
    (code,) = blocks
    return code


def stacked() -> tuple[list[str], str]:
    """A deck whose first cards are a chain of sevens and hearts, and as the bot sends it."""
    first = ["7c", "7h", "2h", "7s", "3h", "7d", "4h", "2d", "5h", "3d", "6h", "4d", "8h",
             "5d", "9h", "6d"]
    order = first + [c for c in CARD_STR if c not in first]
    return order, " ".join(order)


def test_the_example_bot_plays_a_stacked_match_to_its_end(tmp_path: Path) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text(example(), encoding="utf-8")
    order, deck = stacked()
    with server_process("--listen", "tcp:0:interface=127.0.0.1", "--db", ":memory:",
                        "--test-decks", "--no-announce", "--bot-delay", "0",
                        "--deal-pause", "0") as (_, port):
        run = subprocess.run([sys.executable, str(bot), "127.0.0.1", str(port),
                              "--deck", deck], capture_output=True, text=True,
                             encoding="utf-8", timeout=DEADLINE, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    hands = dict(re.findall(r"^deal (\d+) hand: (.*)$", run.stdout, re.M))
    # Seat 0 opens the first deal (the dealer is the last seat) and deals the second.
    assert Counter(hands["1"].split()) == Counter(order[0:14:2])
    assert Counter(hands["2"].split()) == Counter(order[1:14:2])
    assert re.search(r"^match over: totals \[\d+, \d+\] winners \[[01, ]+\]$", run.stdout,
                     re.M), run.stdout


def test_the_example_bot_joins_a_table_by_its_code_and_plays_it_out(tmp_path: Path) -> None:
    """`--join CODE`: the bot sits, says it is ready, and plays against the host."""
    bot = tmp_path / "bot.py"
    bot.write_text(example(), encoding="utf-8")
    with server_process("--listen", "tcp:0:interface=127.0.0.1", "--db", ":memory:",
                        "--no-announce", "--turn-seconds", "0") as (_, port):
        host = Client(port)
        host.answer("hello", protocol=PROTOCOL_VERSION, name="Host")
        snap = host.answer("create_table", rules="classic", seats=2, private=True,
                           options={"match_end": "deals:1"})
        joined = subprocess.Popen([sys.executable, str(bot), "127.0.0.1", str(port),
                                   "--join", snap["table"]["code"]],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, encoding="utf-8")
        try:
            rng = random.Random(4)
            while True:
                msg = host.recv()
                assert msg is not None, "the server went away"
                if msg["type"] == "table_update" and msg["table"]["phase"] == "waiting" \
                        and msg["table"]["seats"][1].get("ready"):
                    host.send("start")
                if msg["type"] == "update" and any(e["event"] == "match_end"
                                                   for e in msg["events"]):
                    break
                if "moves" in msg:
                    host.send("move", move=rng.choice(msg["moves"]))
            out, _ = joined.communicate(timeout=DEADLINE)
        finally:
            if joined.poll() is None:
                joined.kill()
                joined.wait()
    assert joined.returncode == 0, out
    assert "match over: totals" in out


def test_the_example_resumes_after_exactly_the_closes_the_server_says_pass() -> None:
    tree = ast.parse(example())
    (resumable,) = [node.value for node in tree.body if isinstance(node, ast.Assign)
                    and any(getattr(t, "id", "") == "RESUMABLE" for t in node.targets)]
    said = ast.literal_eval(resumable)
    passing = {code for code, e in ERRORS.items() if e.reconnect} - {"bad_token"}
    assert said == {None} | passing


def test_the_guide_says_what_to_do_on_every_closing_code() -> None:
    rows = re.findall(r"^\| (`[a-z_]+`(?:, `[a-z_]+`)*) \|", GUIDE.read_text(encoding="utf-8"),
                      re.M)
    named = {code for row in rows for code in re.findall(r"`([a-z_]+)`", row)}
    closing = {code for code, e in ERRORS.items() if e.closes}
    assert closing <= named, closing - named
    assert "replaced" in named
