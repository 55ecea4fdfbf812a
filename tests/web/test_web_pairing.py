"""Play now and invitations in a real browser (headless Chromium) against a real server
process, the other players speaking the protocol over TCP: an invitation shown with
Accept and Decline, each told to the inviter; inviting from a waiting table, a refusal
in words; Play now opening a quick table that counts down to its bots and starts by
itself once a second player comes."""

from __future__ import annotations

import re
from typing import Any

from browser_kit import Page
from test_web_browser import TcpPlayer
from web_fixtures import driver, page, server, viewport  # noqa: F401
from web_kit import WebServer

Msg = dict[str, Any]


class Player(TcpPlayer):
    """`TcpPlayer` that takes invitations (feature `invites`)."""

    FEATURES = ("invites",)


def said(page: Page, selector: str) -> str:
    """The text of `selector`, or nothing while it is not drawn."""
    return page.text(selector) if page.all(selector) else ""


def invited(page: Page, who: str) -> None:
    page.wait(lambda d: who in said(page, "#invites"), what=f"the invitation from {who}")


def test_an_invitation_is_declined_then_accepted_with_its_buttons(
        page: Page, server: WebServer) -> None:
    page.open(server.url)
    page.name_and_enter("Ayla")
    host = Player(server.tcp_port, "Mert")
    try:
        table = host.request({"type": "create_table", "rules": "classic", "seats": 3,
                              "private": True})["table"]
        host.request({"type": "invite", "name": "Ayla"})
        invited(page, "Mert")
        row = page.text("#invites li")
        assert "Mert invites you to Mert's table" in row and "1/3" in row, row
        page.click("#invites .decline-invite")
        told = host.until(lambda m: m["type"] == "invite_ended")
        assert (told["name"], told["reason"]) == ("Ayla", "declined")
        page.wait(lambda d: not page.all("#invites"), what="the invitation gone")

        host.request({"type": "invite", "name": "Ayla"})
        invited(page, "Mert")
        page.click("#invites .accept-invite")
        page.wait_screen("table")
        assert page.state("table.id") == table["id"] and page.state("you.seat") == 1
        assert host.until(lambda m: m["type"] == "invite_ended")["reason"] == "accepted"
        assert not page.all("#invites")
    finally:
        host.close()


def test_a_player_is_invited_from_the_waiting_table_and_a_refusal_is_in_words(
        page: Page, server: WebServer) -> None:
    page.open(server.url)
    page.name_and_enter("Selin")
    page.click("#create")
    page.wait_screen("table")
    guest = Player(server.tcp_port, "Okan")
    try:
        field = page.wait_css("#invitee")
        field.send_keys("Selin")
        page.click("#invite")
        page.wait(lambda d: "You cannot invite yourself." in said(page, "#invite-note"),
                  what="the refusal in words")
        field = page.wait_css("#invitee")
        field.clear()
        field.send_keys("Okan")
        page.click("#invite")
        page.wait(lambda d: said(page, "#invite-note") == "Invitation sent to Okan.",
                  what="the invitation sent")
        notice = guest.until(lambda m: m["type"] == "invited")
        assert notice["from"] == "Selin" and notice["table"]["free"] == 3
        guest.request({"type": "answer_invite", "invite": notice["invite"], "accept": True})
        page.wait(lambda d: page.state("table.seats[1].name") == "Okan", what="Okan seated")
        page.wait(lambda d: "Okan accepted your invitation." in page.log_text(),
                  what="the accept told")
    finally:
        guest.close()


def test_play_now_opens_a_quick_table_that_starts_when_a_second_player_comes(
        page: Page, server: WebServer) -> None:
    page.open(server.url)
    page.name_and_enter("Deniz")
    page.wait_css("#pn_seats")
    page.driver.execute_script("document.getElementById('pn_seats').value = '2';"
                               "document.getElementById('pn_rules').value = 'cardiva';"
                               "document.getElementById('pn_wait').value = '120';")
    page.click("#play-now")
    page.wait_screen("table")
    note = page.text("#quick-note")
    assert note.startswith("A quick table: it starts once every seat is filled and ready"), note
    timer = page.attr("#quick-note .timer", "data-deadline")
    assert timer is not None and re.fullmatch(r"[12]:\d\d", page.text("#quick-note .timer"))
    assert page.state("table.quick") is True and page.state("table.bots_in") == 120
    other = Player(server.tcp_port, "Emre")
    try:
        joined = other.request({"type": "play_now", "rules": "cardiva"})
        assert joined["table"]["id"] == page.state("table.id")
        page.wait(lambda d: page.body("tablePhase") == "playing", what="the match started")
        assert not page.all("#quick-note")
    finally:
        other.close()
