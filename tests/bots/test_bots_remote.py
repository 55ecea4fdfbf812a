"""`pisyedili-bot` plays whole matches against a real server on loopback.

The bot is an ordinary protocol client (client/bot.py): these tests prove that a
client written against `pisyedili.protocol` can join, get ready, start and play every
decision of a match to its end without a refused move.
"""

from __future__ import annotations

from typing import Any

import pytest
import pytest_twisted
from bots_kit import Seated
from sibling_kit import sibling
from twisted.internet import reactor
from twisted.internet.defer import Deferred, gatherResults
from twisted.internet.endpoints import HostnameEndpoint
from twisted.internet.interfaces import IStreamClientEndpoint

from pisyedili.client.bot import EXIT_OK, EXIT_REFUSED, BotClient, BotConfig, connect, main
from pisyedili.client.wire import Message

wireclient = sibling("server", "wireclient")  # the network tests' loopback server


async def live_server() -> tuple[Any, int]:
    """A real server on a loopback port (tests/server/wireclient.py) and its port."""
    server = await wireclient.Server.start(seed=5)
    return server, int(server.port.getHost().port)


def play(port: int, client: BotClient) -> Deferred[int]:
    """Run the bot; it reconnects at once (no backoff), so no test waits on the clock."""
    endpoint: IStreamClientEndpoint = HostnameEndpoint(reactor, "127.0.0.1", port)  # type: ignore[assignment]
    d = connect(reactor, endpoint, client, retry=lambda attempt: 0.0)
    d.addTimeout(30, reactor)
    return d


@pytest.mark.parametrize("rules", ["classic", "cardiva"])
@pytest_twisted.ensureDeferred
async def test_a_hard_bot_hosts_and_plays_a_match_against_server_bots(rules: str) -> None:
    server, port = await live_server()
    try:
        bot = BotClient(
            BotConfig(
                level="hard",
                name="remote",
                create=rules,
                seats=3,
                bots="medium",
                options={"match_end": "deals:1"},
                budget_s=0.01,
                seed=1,
            )
        )
        assert await play(port, bot) == EXIT_OK
        assert bot.matches == 1
        assert bot.moves_sent > 0 and bot.refused_moves == 0
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_bot_agrees_to_a_rematch_and_plays_it() -> None:
    server, port = await live_server()
    try:
        cfg = BotConfig(level="easy", name="again", create="classic", seats=2, bots="easy",
                        options={"match_end": "deals:1"}, matches=2, seed=6)  # fmt: skip
        bot = BotClient(cfg)
        assert await play(port, bot) == EXIT_OK
        assert bot.matches == 2 and bot.refused_moves == 0
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_two_remote_bots_meet_through_the_lobby() -> None:
    server, port = await live_server()
    try:
        host = BotClient(
            BotConfig(
                level="medium",
                name="host",
                create="cardiva",
                seats=2,
                bots=None,
                options={"match_end": "deals:1"},
                seed=2,
            )
        )
        guest = BotClient(BotConfig(level="easy", name="guest", seed=3))  # finds it in the lobby
        first = play(port, host)
        codes = await gatherResults([first, play(port, guest)])
        assert codes == [EXIT_OK, EXIT_OK]
        assert host.moves_sent > 0 and guest.moves_sent > 0
        assert host.refused_moves == guest.refused_moves == 0
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_guest_joins_a_private_table_by_its_invite_code() -> None:
    server, port = await live_server()
    try:
        host = Seated(
            BotConfig(
                level="easy",
                name="host",
                create="classic",
                seats=2,
                bots=None,
                private=True,
                options={"match_end": "deals:1"},
                seed=4,
            )
        )
        first = play(port, host)
        snapshot = await host.seated.addTimeout(10, reactor)  # members see the invite code
        assert snapshot["table"]["private"]
        code = snapshot["table"]["code"]
        lobby_guest = BotClient(BotConfig(level="easy", name="lurker", seed=5))
        guest = BotClient(BotConfig(level="hard", name="guest", code=code, budget_s=0.01))
        lurking = play(port, lobby_guest)  # a private table is not offered in the lobby
        assert await gatherResults([first, play(port, guest)]) == [EXIT_OK, EXIT_OK]
        assert guest.moves_sent > 0 and guest.refused_moves == 0
        assert not lobby_guest.joined
        lobby_guest.stop()
        assert await lurking == EXIT_OK
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_an_unknown_table_is_a_clean_refusal() -> None:
    server, port = await live_server()
    try:
        bot = BotClient(BotConfig(level="easy", name="lost", table=999))
        assert await play(port, bot) == EXIT_REFUSED
    finally:
        await server.stop()


class Flaky(BotClient):
    """A bot whose connection drops right after its third move is sent."""

    pushed = 0  # table snapshots the server sent unasked: the one after the resume

    def on_table(self, msg: Message) -> None:
        self.pushed += "id" not in msg
        super().on_table(msg)

    def _send_move(self, move: dict[str, Any], moves: list[dict[str, Any]]) -> None:
        super()._send_move(move, moves)
        if self.moves_sent == 3 and self.link is not None:
            self.link.drop()


@pytest_twisted.ensureDeferred
async def test_a_dropped_bot_resumes_its_seat_and_finishes_the_match() -> None:
    server, port = await live_server()
    try:
        bot = Flaky(BotConfig(level="medium", name="flaky", create="classic", seats=2,
                              bots="easy", options={"match_end": "deals:1"}, seed=8))
        assert await play(port, bot) == EXIT_OK
        assert bot.resumes == 1, "the same session, not a fresh one"
        assert bot.pushed == 1, "the resumed welcome is followed by the table's snapshot"
        assert bot.matches == 1 and bot.moves_sent > 3 and bot.refused_moves == 0
    finally:
        await server.stop()


def test_bad_arguments_exit_2_without_connecting(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["localhost:port", "--level", "easy"]) == 2
    assert main(["localhost:7707", "--budget", "0"]) == 2
    assert main(["localhost:7707", "--create", "cardiva", "--seats", "5"]) == 2
    assert main(["localhost:7707", "--name", "x" * 25]) == 2
    assert "pisyedili-bot" in capsys.readouterr().err
