"""Optional features gate their requests as the schema says (`MessageSpec.feature`),
once, for every request: over real sockets, a request of a feature the connection did
not agree on is refused with `feature_not_negotiated` naming that feature, whether the
server offers the feature or not. A real server with a real (in-memory) SQLite store."""

from __future__ import annotations

from typing import Any

import pytest_twisted
from twisted.internet import reactor
from wireclient import Server

from pisyedili.protocol.errors import ERRORS
from pisyedili.protocol.schema import MESSAGES, Direction, validate
from pisyedili.protocol.version import FEATURES
from pisyedili.server.people.accounts import CHEAP, AccountSettings
from pisyedili.server.store import Archive
from pisyedili.server.store.sqlite import MEMORY, SqliteStore

REQUESTS: dict[str, dict[str, Any]] = {
    "chat": {"text": "hello"},
    "rematch": {"agree": True},
    "history": {"of": "recent"},
    "replay": {"match": 1},
    "register": {"password": "correct horse battery"},
    "login": {"name": "Nobody", "password": "correct horse battery"},
    "logout": {},
    "passwd": {"old": "correct horse battery", "new": "battery staple horse"},
    "leaderboard": {},
    "profile": {"name": "Nobody"},
    "kick": {"name": "Nobody"},
    "mute": {"name": "Nobody"},
    "unmute": {"name": "Nobody"},
    "ban": {"name": "Nobody"},
    "unban": {"name": "Nobody"},
    "close_table": {"table": 1},
    "announce": {"text": "hello"},
    "invite": {"name": "Nobody"},
    "answer_invite": {"invite": 1, "accept": False},
}
"""The fields of one valid request of every type that belongs to a feature."""

FEATURE_OF = {kind: spec.feature for (direction, kind), spec in MESSAGES.items()
              if direction is Direction.TO_SERVER and spec.feature is not None}


def refusal(feature: str) -> dict[str, Any]:
    """The error a request of `feature` gets where it was not agreed on (its `id` aside)."""
    return {"type": "error", "code": "feature_not_negotiated",
            "message": f"say features: [{feature!r}] in hello to use this",
            "feature": feature}


def test_every_request_of_a_feature_is_covered() -> None:
    assert set(REQUESTS) == set(FEATURE_OF)
    assert set(FEATURE_OF.values()) == set(FEATURES)
    for kind, fields in REQUESTS.items():
        validate({"type": kind, **fields}, Direction.TO_SERVER)
    assert not ERRORS["feature_not_negotiated"].closes


@pytest_twisted.ensureDeferred
async def test_a_request_of_a_feature_not_agreed_on_is_refused() -> None:
    server = await Server.start(archive=Archive(lambda: SqliteStore(MEMORY), reactor),
                                accounts=AccountSettings(cost=CHEAP))
    try:
        assert server.factory.features == frozenset(FEATURES)
        for feature in sorted(FEATURES):
            others = sorted(set(FEATURES) - {feature})
            client = await server.connect(f"Without {feature}", features=others)
            assert client.welcome["features"] == others
            for kind in sorted(k for k, f in FEATURE_OF.items() if f == feature):
                answer = await client.request(kind, **REQUESTS[kind])
                assert {k: v for k, v in answer.items() if k != "id"} == refusal(feature), kind
            assert (await client.request("ping"))["type"] == "pong", "the connection reads on"
        agreed = await server.connect("With all", features=sorted(FEATURES))
        for kind, fields in sorted(REQUESTS.items()):
            answer = await agreed.request(kind, **fields)
            assert answer.get("code") != "feature_not_negotiated", (kind, answer)
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_a_feature_the_server_does_not_offer_is_refused_the_same_way() -> None:
    server = await Server.start()  # no store: no `history`
    try:
        assert "history" not in server.factory.features
        client = await server.connect("Ayse", features=sorted(FEATURES))
        assert "history" not in client.welcome["features"]
        for kind in sorted(k for k, f in FEATURE_OF.items() if f == "history"):
            answer = await client.request(kind, **REQUESTS[kind])
            assert {k: v for k, v in answer.items() if k != "id"} == refusal("history"), kind
    finally:
        await server.stop()
