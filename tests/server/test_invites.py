"""Invitations over real sockets: invited, accepted or declined, and every way one is
refused or ends (yourself, nobody, a seated player, a full, started or rated table,
the limits per inviter, per invitee and per pair, expiry on `task.Clock`, the
inviter leaving, the invitee dropping, accepting twice)."""

from __future__ import annotations

import pytest_twisted
from twisted.internet import task
from wireclient import Msg, Server, WireClient, clocked, registered, with_accounts

from pisyedili.protocol.version import FEATURES
from pisyedili.server.people.invitations import FROM_ADDRESS, INVITE_SECONDS, TO_PLAYER

__all__ = ["clocked"]  # the fixture, used by name


async def host(server: Server, name: str = "ann", **table: object) -> tuple[WireClient, Msg]:
    client = await server.connect(name)
    snap = await client.ok("create_table", **{"rules": "classic", "seats": 3, **table})
    return client, snap


async def invited(client: WireClient) -> Msg:
    return await client.wait_type("invited")


@pytest_twisted.ensureDeferred
async def test_an_invitation_to_a_private_table_accepted_seats_the_invitee_ready(
        clocked: tuple[Server, task.Clock]) -> None:
    server, _ = clocked
    ann, snap = await host(server, private=True)
    ben = await server.connect("ben")
    assert (await ann.request("invite", name="BEN"))["type"] == "ok"  # any case
    notice = await invited(ben)
    assert notice["from"] == "ann" and notice["expires_in"] == INVITE_SECONDS
    row = notice["table"]
    assert (row["id"], row["private"], row["free"]) == (snap["table"]["id"], True, 2)
    assert "code" not in row  # the invitation is the way in, never the code
    seated = await ben.ok("answer_invite", invite=notice["invite"], accept=True)
    assert seated["type"] == "table" and seated["you"]["seat"] == 1
    answered = await ann.wait_type("invite_ended")
    assert (answered["invite"], answered["name"], answered["reason"]) == (
        notice["invite"], "ben", "accepted")
    await ann.wait(lambda m: m["type"] == "table_update"  # ready: it asked to play
                   and m["table"]["seats"][1].get("name") == "ben"
                   and m["table"]["seats"][1]["ready"])
    again = await ben.request("answer_invite", invite=notice["invite"], accept=True)
    assert again["code"] == "no_such_invite"


@pytest_twisted.ensureDeferred
async def test_a_declined_invitation_is_told_and_is_over(
        clocked: tuple[Server, task.Clock]) -> None:
    server, _ = clocked
    ann, _snap = await host(server)
    ben = await server.connect("ben")
    await ann.ok("invite", name="ben")
    notice = await invited(ben)
    assert (await ben.request("answer_invite", invite=notice["invite"],
                              accept=False))["type"] == "ok"
    assert (await ann.wait_type("invite_ended"))["reason"] == "declined"
    late = await ben.request("answer_invite", invite=notice["invite"], accept=True)
    assert late["code"] == "no_such_invite"
    cem = await server.connect("cem")  # nor may anyone answer another's
    assert (await cem.request("answer_invite", invite=notice["invite"],
                              accept=True))["code"] == "no_such_invite"


@pytest_twisted.ensureDeferred
async def test_who_and_where_an_invitation_is_refused(
        clocked: tuple[Server, task.Clock]) -> None:
    server, _ = clocked
    ann, _snap = await host(server, seats=2)
    lonely = await server.connect("lonely")
    assert (await lonely.request("invite", name="ann"))["code"] == "not_at_table"
    assert (await ann.request("invite", name="Ann"))["code"] == "invite_self"
    assert (await ann.request("invite", name="nobody"))["code"] == "no_such_player"
    old = await server.connect("old", features=[f for f in FEATURES if f != "invites"])
    assert (await ann.request("invite", name="old"))["code"] == "not_invitable"
    refused = await old.request("invite", name="ann")
    assert (refused["code"], refused["feature"]) == ("feature_not_negotiated", "invites")
    seated, _ = await host(server, "seated")
    assert (await ann.request("invite", name="seated"))["code"] == "player_busy"
    ben = await server.connect("ben")
    await ben.ok("join_table", table=_snap["table"]["id"])
    assert (await ann.request("invite", name="lonely"))["code"] == "table_full"
    await ben.ok("ready", ready=True)
    await ann.ok("start")
    assert (await ann.request("invite", name="lonely"))["code"] == "game_in_progress"
    await seated.ok("leave_table")
    assert not [m for m in lonely.received + old.received + seated.received
                if m["type"] == "invited"]


@pytest_twisted.ensureDeferred
async def test_a_rated_table_invites_no_guest() -> None:
    server = await with_accounts()
    try:
        ada = await registered(server, "Ada")
        await ada.ok("create_table", rules="classic", seats=2, rated=True)
        await server.connect("guest")
        assert (await ada.request("invite", name="guest"))["code"] == "account_required"
        bo = await registered(server, "Bo")
        await ada.ok("invite", name="Bo")
        notice = await invited(bo)
        assert notice["table"]["rated"]
        seated = await bo.ok("answer_invite", invite=notice["invite"], accept=True)
        assert seated["you"]["seat"] == 1
    finally:
        await server.stop()


@pytest_twisted.ensureDeferred
async def test_one_open_invitation_per_pair_and_a_few_a_minute_per_inviter(
        clocked: tuple[Server, task.Clock]) -> None:
    server, clock = clocked
    ann, _snap = await host(server, seats=6)
    guests = [await server.connect(f"guest{i}") for i in range(FROM_ADDRESS + 1)]
    await ann.ok("invite", name="guest0")
    again = await ann.request("invite", name="guest0")
    assert (again["code"], again["retry_after"]) == ("too_many_invites", INVITE_SECONDS)
    for guest in guests[1:FROM_ADDRESS]:
        await ann.ok("invite", name=guest.welcome["name"])
    # A fresh name from the same address is no way around the limit.
    other, _ = await host(server, "other", seats=6)
    over = await other.request("invite", name=guests[-1].welcome["name"])
    assert (over["code"], over["limit"]) == ("too_many_invites", FROM_ADDRESS)
    assert 0 < over["retry_after"] <= 60
    clock.advance(over["retry_after"])
    await other.ok("invite", name=guests[-1].welcome["name"])


@pytest_twisted.ensureDeferred
async def test_a_player_is_sent_a_few_invitations_a_minute_at_most(
        clocked: tuple[Server, task.Clock]) -> None:
    server, clock = clocked
    target = await server.connect("target")
    hosts = []
    for i in range(TO_PLAYER + 1):  # each from its own address: the invitee's limit
        client = await server.connect(f"host{i}", source=f"127.0.0.{i + 2}")
        await client.ok("create_table", rules="classic", seats=2)
        hosts.append(client)
    for client in hosts[:TO_PLAYER]:
        await client.ok("invite", name="target")
    over = await hosts[-1].request("invite", name="target")
    assert (over["code"], over["limit"]) == ("too_many_invites", TO_PLAYER)
    await target.ok("ping")
    assert len([m for m in target.received if m["type"] == "invited"]) == TO_PLAYER
    clock.advance(60)
    await hosts[-1].ok("invite", name="target")


@pytest_twisted.ensureDeferred
async def test_an_unanswered_invitation_expires_for_both(
        clocked: tuple[Server, task.Clock]) -> None:
    server, clock = clocked
    ann, _snap = await host(server)
    ben = await server.connect("ben")
    await ann.ok("invite", name="ben")
    notice = await invited(ben)
    clock.advance(INVITE_SECONDS - 1)
    await ben.ok("ping")
    assert "invite_ended" not in ben.types()
    clock.advance(1)
    ended = await ben.wait_type("invite_ended")
    assert (ended["invite"], ended["reason"]) == (notice["invite"], "expired")
    assert "name" not in ended  # the invitee's copy
    assert (await ann.wait_type("invite_ended"))["reason"] == "expired"
    late = await ben.request("answer_invite", invite=notice["invite"], accept=True)
    assert late["code"] == "no_such_invite"


@pytest_twisted.ensureDeferred
async def test_the_inviter_leaving_withdraws_and_a_table_that_fills_ends_it(
        clocked: tuple[Server, task.Clock]) -> None:
    server, _ = clocked
    ann, snap = await host(server, seats=2)
    stay = await server.connect("stay")
    await stay.ok("join_table", table=snap["table"]["id"], spectate=True)
    ben, cem = await server.connect("ben"), await server.connect("cem")
    await ann.ok("invite", name="ben")
    await ann.ok("leave_table")  # the table stays: a spectator watches it
    ended = await ben.wait_type("invite_ended")
    assert ended["reason"] == "withdrawn"
    accept = await ben.request("answer_invite", invite=ended["invite"], accept=True)
    assert accept["code"] == "no_such_invite"
    dan, snap2 = await host(server, "dan", seats=2)
    await dan.ok("invite", name="cem")
    eve = await server.connect("eve")
    await eve.ok("join_table", table=snap2["table"]["id"])  # the last seat goes
    assert (await cem.wait_type("invite_ended"))["reason"] == "unavailable"
    assert "invite_ended" not in dan.types()


@pytest_twisted.ensureDeferred
async def test_the_invitee_dropping_is_told_to_the_inviter_and_accepting_at_a_table_waits(
        clocked: tuple[Server, task.Clock]) -> None:
    server, _ = clocked
    ann, _snap = await host(server)
    ben = await server.connect("ben")
    await ann.ok("invite", name="ben")
    await invited(ben)
    await ben.close()
    await server.dropped(ben)
    assert (await ann.wait_type("invite_ended"))["reason"] == "gone"
    cem = await server.connect("cem")
    await ann.ok("invite", name="cem")
    notice = await invited(cem)
    await cem.ok("play_now", rules="cardiva")  # somewhere else meanwhile
    busy = await cem.request("answer_invite", invite=notice["invite"], accept=True)
    assert busy["code"] == "already_at_table"
    await cem.ok("leave_table")
    seated = await cem.ok("answer_invite", invite=notice["invite"], accept=True)
    assert seated["table"]["id"] == _snap["table"]["id"]
