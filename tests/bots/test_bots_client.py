"""The bot client's reactions, frame by frame, on an in-memory transport.

Server messages are built as a server would send them and checked against the schema,
so these cannot drift from protocol 2; the bot reads them through the same `Link` as
the terminal client.
"""

from __future__ import annotations

from typing import Any, cast

from bots_kit import fresh
from transport_kit import written
from twisted.internet.interfaces import IStreamClientEndpoint
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport

from pisyedili.client.bot import EXIT_LOST, EXIT_OK, EXIT_REFUSED, BotClient, BotConfig
from pisyedili.client.wire import WireProtocol
from pisyedili.protocol.codec import frame
from pisyedili.protocol.messages import make_error, make_welcome
from pisyedili.protocol.schema import Direction, validate
from pisyedili.server.rules import legal_moves, move_to_wire, view

Msg = dict[str, Any]



class Wired:
    def __init__(self, **cfg: Any) -> None:
        self.client = BotClient(BotConfig(**cfg))
        self.link = self.client.make_link(cast(IStreamClientEndpoint, object()), Clock())  # type: ignore[arg-type]
        self.codes: list[int] = []
        self.client.done.addCallback(self.codes.append)
        self.transport = StringTransport()  # type: ignore[no-untyped-call]
        self.proto = WireProtocol(self.link)
        self.proto.makeConnection(self.transport)  # type: ignore[no-untyped-call]
        [self.hello] = written(self.transport)

    def hear(self, msg: Msg, reply_to: Msg | None = None) -> None:
        if reply_to is not None:
            msg = {**msg, "id": reply_to["id"]}
        self.proto.dataReceived(frame(validate(msg, Direction.TO_CLIENT)))  # type: ignore[no-untyped-call]

    def sent(self) -> list[Msg]:
        return written(self.transport)

    def welcome(self, resumed: bool | None = None) -> None:
        self.hear(make_welcome(server="s", version="1", player=9, name="bot", token="t",
                               features=[], resumed=resumed, id=self.hello["id"]))


def table_info(phase: str = "playing") -> Msg:
    return {"id": 1, "name": "t", "rules": "classic", "options": {}, "host": 5,
            "phase": phase, "private": False, "spectators": [],
            "seats": [{"seat": 0, "kind": "human", "name": "bot", "player": 9, "ready": True,
                       "connected": True},
                      {"seat": 1, "kind": "bot", "name": "b", "level": "easy", "ready": True}]}


def test_hello_is_the_protocols_and_asks_only_for_what_the_bot_uses() -> None:
    one = Wired(level="easy")
    assert one.hello["type"] == "hello" and one.hello["client"] == "pisyedili-bot"
    assert one.hello["protocol"] == 2 and one.hello["features"] == []
    assert Wired(level="easy", matches=2).hello["features"] == ["rematch"]


def test_answers_its_decision_then_falls_back_once_on_a_refusal() -> None:
    deal = fresh("classic", 2, 8)
    seat = deal.to_act
    assert seat is not None
    wire = [move_to_wire(m) for m in legal_moves(deal, seat)]
    w = Wired(level="medium", seed=1)
    w.welcome()
    w.sent()
    w.hear({"type": "update", "table": 1, "events": [{"event": "pass", "seat": 1}],
            "view": view(deal, seat), "moves": wire, "deadline": 30.0})
    (move,) = w.sent()
    assert move["type"] == "move" and move["move"] in wire
    w.hear({"type": "error", "code": "illegal_card", "message": "no"}, reply_to=move)
    retry = w.sent()
    assert len(wire) > 1 and move["move"] != wire[0], "this deal must exercise the fallback"
    assert [m["move"] for m in retry] == [wire[0]]
    w.hear({"type": "error", "code": "illegal_card", "message": "no"}, reply_to=retry[0])
    assert w.sent() == []  # only once
    assert w.client.refused_moves == 2


def test_an_update_without_moves_is_watched_not_answered() -> None:
    deal = fresh("classic", 2, 8)
    w = Wired(level="easy")
    w.welcome()
    w.sent()
    w.hear({"type": "update", "table": 1, "events": [], "view": view(deal, 0)})
    assert w.sent() == [] and w.client.view == view(deal, 0)


def test_a_resumed_snapshot_brings_back_the_pending_decision() -> None:
    deal = fresh("classic", 2, 8)
    seat = deal.to_act
    assert seat is not None
    wire = [move_to_wire(m) for m in legal_moves(deal, seat)]
    w = Wired(level="easy", table=1)
    w.welcome()
    [join] = w.sent()
    w.hear({"type": "table", "table": table_info(), "you": {"seat": 0, "spectator": False,
            "host": False}, "view": view(deal, seat), "match": None}, reply_to=join)
    policy = w.client.policy
    w.welcome(resumed=True)  # after a dropped connection: no second join
    assert w.sent() == []
    w.hear({"type": "table", "table": table_info(), "you": {"seat": 0, "spectator": False,
            "host": False}, "view": view(deal, seat), "match": None, "moves": wire})
    (move,) = w.sent()
    assert move["type"] == "move" and move["move"] in wire
    assert w.client.resumes == 1 and w.client.policy is not policy, "it forgot what it missed"


def test_the_last_match_end_leaves_the_table() -> None:
    deal = fresh("classic", 2, 8)
    w = Wired(level="easy")
    w.welcome()
    w.sent()
    w.hear({"type": "update", "table": 1, "view": view(deal, 0), "events": [
        {"event": "match_end", "totals": [10, 40], "winners": [0]}]})
    (leave,) = w.sent()
    assert leave["type"] == "leave_table" and w.client.matches == 1
    assert w.codes == []
    w.hear({"type": "ok"}, reply_to=leave)
    assert w.codes == [EXIT_OK] and w.transport.disconnecting


def test_pings_get_pongs_and_bad_frames_are_ignored() -> None:
    w = Wired(level="easy")
    w.welcome()
    w.sent()
    w.proto.dataReceived(frame({"type": "ping", "id": 4}))  # type: ignore[no-untyped-call]
    assert w.sent() == [{"type": "pong", "id": 4}]
    w.proto.dataReceived(frame({"type": "update", "table": 1}))  # type: ignore[no-untyped-call]  # refused by the schema
    w.proto.dataReceived(frame({"type": "no_such_message"}))  # type: ignore[no-untyped-call]
    assert w.sent() == []
    assert not w.transport.disconnecting


def test_a_refused_join_ends_the_bot() -> None:
    w = Wired(level="easy", table=3)
    w.welcome()
    [join] = w.sent()
    assert join["type"] == "join_table"
    w.hear(make_error("no_such_table", "gone"), reply_to=join)
    assert w.codes == [EXIT_REFUSED] and w.transport.disconnecting


def test_being_replaced_ends_the_bot() -> None:
    w = Wired(level="easy")
    w.welcome()
    w.hear({"type": "replaced"})
    assert w.codes == [EXIT_LOST]


def lobby_row(tid: int, free: int) -> Msg:
    return {"id": tid, "name": f"t{tid}", "rules": "classic", "options": {}, "seats": 2,
            "taken": 2 - free, "free": free, "bots": 0, "spectators": 0, "phase": "waiting",
            "private": False}


def test_a_bot_reads_the_lobby_page_by_page_for_an_open_seat() -> None:
    w = Wired(level="easy")
    w.welcome()
    [sub] = w.sent()
    assert sub["type"] == "lobby_subscribe" and "offset" not in sub
    w.hear({"type": "lobby", "tables": [lobby_row(i, 0) for i in range(1, 201)], "total": 203,
            "offset": 0}, reply_to=sub)
    [more] = w.sent()
    assert more["type"] == "lobby_subscribe" and more["offset"] == 200
    w.hear({"type": "lobby", "tables": [lobby_row(201, 0), lobby_row(202, 1),
                                        lobby_row(203, 1)], "total": 203, "offset": 200},
           reply_to=more)
    unsub, join = w.sent()
    assert unsub["type"] == "lobby_unsubscribe" and join["table"] == 202


def test_with_every_row_seen_and_none_open_a_bot_waits_for_deltas() -> None:
    w = Wired(level="easy")
    w.welcome()
    [sub] = w.sent()
    w.hear({"type": "lobby", "tables": [lobby_row(1, 0)], "total": 201, "offset": 0},
           reply_to=sub)
    [more] = w.sent()
    assert more["offset"] == 1, "the server's page may be smaller: read on from what came"
    w.hear({"type": "lobby", "tables": [], "total": 1, "offset": 1}, reply_to=more)
    assert w.sent() == []
    w.hear({"type": "lobby_update", "op": "add", "table": 9, "summary": lobby_row(9, 1)})
    assert [m["type"] for m in w.sent()] == ["lobby_unsubscribe", "join_table"]
