"""A kicked, banned or muted player reads what an operator did, why and for how long,
in the terminal client's words (and its translations); a kicked player's link stops
instead of coming back as a new player, and its return within the kick is refused so,
over a real server on loopback."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_twisted
from client_kit import Inbox, Msg
from sibling_kit import sibling
from twisted.internet import reactor
from twisted.internet.endpoints import TCP4ClientEndpoint

from pisyedili.client import i18n
from pisyedili.client.render import Look, plain
from pisyedili.client.state import ClientState
from pisyedili.client.wire import Link

pytestmark = pytest.mark.usefixtures("english")  # tests/conftest.py

moderated = sibling("server", "test_moderation")  # a server with an operator account
ASCII = Look(unicode=False, color=False)
KICKED_FROM = "127.0.0.9"


def shown(msg: Msg) -> list[str]:
    return [plain(line) for line in ClientState(look=ASCII).handle(msg, now=0.0)]


KICKED: Msg = {"type": "error", "code": "kicked", "reason": "flooding the chat",
               "retry_after": 300, "message": "an operator removed you from the server; "
               "you may come back after 12:05 UTC: flooding the chat"}


@pytest.mark.parametrize(("lang", "msg", "line"), [
    ("en", KICKED, "An operator removed you from the server (reason: flooding the chat); "
     "you may come back in 5 minutes"),
    ("tr", KICKED, "Bir operatör sizi sunucudan çıkardı (gerekçe: flooding the chat); "
     "5 dakika sonra geri dönebilirsiniz"),
    ("ru", {"type": "error", "code": "banned", "message": "x", "retry_after": 2 * 86400},
     "Вы заблокированы на этом сервере; закончится через 2 дня"),
    ("en", {"type": "error", "code": "banned", "message": "x", "reason": "cheating"},
     "You are banned from this server (reason: cheating); until an operator lifts it"),
    ("en", {"type": "muted", "reason": "spam", "retry_after": 3600},
     "An operator muted you: you cannot chat (reason: spam); it ends in 60 minutes"),
    ("uk", {"type": "muted", "retry_after": 90},
     "Оператор позбавив вас чату; закінчиться через 90 секунд"),
])
def test_a_sanction_says_why_and_for_how_long(lang: str, msg: Msg, line: str) -> None:
    i18n.set_language(lang)
    assert shown(msg) == [line]


@pytest_twisted.ensureDeferred
async def test_a_kicked_player_is_told_and_stays_out_instead_of_coming_back(
        tmp_path: Path) -> None:
    server = await moderated.start(tmp_path / "db.sqlite3")
    links: list[Link] = []

    def link(name: str, screen: list[str], inbox: Inbox) -> Link:
        def hear(msg: Msg) -> None:
            screen.extend(plain(line) for line in state.handle(msg, 0.0))
            inbox(msg)

        state = ClientState(look=ASCII)
        endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", server.port.getHost().port,
                                      bindAddress=(KICKED_FROM, 0))
        made = Link(endpoint, name, hear, clock=reactor, retry=lambda attempt: 0.0)  # type: ignore[arg-type]
        links.append(made)
        made.start()
        return made

    try:
        operator, _ = await moderated.member(server, "Deniz")
        screen: list[str] = []
        inbox = Inbox(reactor)
        bora = link("Bora", screen, inbox)
        await inbox.wait_type("welcome")
        await operator.ok("kick", name="Bora", reason="flooding the chat")
        ended = await bora.when_ended().addTimeout(10, reactor)
        assert ended.code == "kicked"
        assert ("An operator removed you from the server (reason: flooding the chat); you "
                "may come back in 5 minutes") in screen
        assert inbox.types().count("welcome") == 1  # not welcomed back as "Bora 2"

        again: list[str] = []
        back = Inbox(reactor)
        returning = link("Bora", again, back)
        ended = await returning.when_ended().addTimeout(10, reactor)
        assert ended.code == "kicked" and "welcome" not in back.types()
        assert again == ["An operator removed you from the server (reason: flooding the "
                         "chat); you may come back in 5 minutes"]
    finally:
        for made in links:
            await made.stop().addTimeout(10, reactor)
        await server.stop()
