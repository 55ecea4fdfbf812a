"""Handshake, builders, error registry and feature negotiation."""

from __future__ import annotations

import re

import pytest

from pisyedili.protocol import (
    ERRORS,
    FEATURES,
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    Direction,
    ProtocolError,
    announced_limits,
    build,
    make_error,
    make_hello,
    make_move,
    make_ok,
    make_welcome,
    negotiate_features,
    parse_hello,
    unsupported_version,
    validate,
)


def refusal(msg: dict[str, object]) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        parse_hello(msg)
    return info.value


def test_parse_hello_reads_every_field() -> None:
    hello = parse_hello(make_hello("Ayşe", token="t0k", client="c", version="1",
                                   features=["chat"], id=4))
    assert (hello.protocol, hello.name, hello.token, hello.client, hello.version) == (
        PROTOCOL_VERSION, "Ayşe", "t0k", "c", "1")
    assert hello.features == ("chat",)
    assert hello.id == 4


def test_hello_without_features_is_distinguished_from_an_empty_list() -> None:
    assert parse_hello(make_hello("a")).features is None
    assert parse_hello(make_hello("a", features=[])).features == ()


@pytest.mark.parametrize("version", [0, 1, 3, 99, 2**40])
def test_unspoken_versions_get_the_list_of_spoken_ones(version: object) -> None:
    err = refusal({"type": "hello", "protocol": version, "name": "a", "id": 3})
    assert err.code == "unsupported_version"
    assert err.closes
    msg = err.to_message(3)
    assert msg["versions"] == list(SUPPORTED_VERSIONS)
    assert msg["id"] == 3
    validate(msg, Direction.TO_CLIENT)


def test_version_is_checked_before_the_schema() -> None:
    # A future hello may carry fields this schema refuses; it must still learn the version.
    err = refusal({"type": "hello", "protocol": 3, "name": ["not", "a", "string"]})
    assert err.code == "unsupported_version"


def test_version_1_is_no_longer_spoken() -> None:
    err = refusal({"type": "hello", "protocol": 1, "name": "a"})
    assert (err.code, err.extra["versions"]) == ("unsupported_version", [2])


def test_a_missing_protocol_is_a_missing_field() -> None:
    err = refusal({"type": "hello", "name": "a"})
    assert (err.code, err.extra["field"]) == ("missing_field", "protocol")


@pytest.mark.parametrize("version", ["2", None, True, 2.0, [2]])
def test_a_protocol_that_is_not_an_integer_is_a_bad_field(version: object) -> None:
    err = refusal({"type": "hello", "protocol": version, "name": ["not", "a", "string"]})
    assert (err.code, err.extra["field"]) == ("bad_field", "protocol")


def test_first_message_must_be_hello() -> None:
    err = refusal({"type": "ping"})
    assert err.code == "hello_required"
    assert err.closes


def test_bad_hello_fields_are_schema_errors() -> None:
    err = refusal({"type": "hello", "protocol": 2, "name": ""})
    assert (err.code, err.extra["field"]) == ("bad_field", "name")


def test_unsupported_version_message_is_short_even_for_huge_input() -> None:
    assert len(unsupported_version("x" * 5000).message) < 100


def test_make_error_refuses_unregistered_codes_and_reserved_extras() -> None:
    with pytest.raises(ValueError):
        make_error("oops_not_a_code", "x")
    with pytest.raises(ValueError):
        make_error("bad_field", "x", type="sneaky")


def test_make_error_builds_a_valid_error() -> None:
    msg = make_error("illegal_card", "follow the jack's suit", id=7, rule="C6")
    assert msg == {"type": "error", "code": "illegal_card", "message": "follow the jack's suit",
                   "id": 7, "rule": "C6"}
    validate(msg, Direction.TO_CLIENT)


def test_every_error_code_is_snake_case_and_explained() -> None:
    for code, info in ERRORS.items():
        assert re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", code)
        assert info.code == code
        assert info.meaning.endswith(".")


def test_framing_and_handshake_failures_close_the_connection() -> None:
    closing = {c for c, e in ERRORS.items() if e.closes}
    assert {"frame_too_large", "unsupported_version", "hello_required", "server_full",
            "too_many_connections", "idle_timeout", "handshake_timeout"} <= closing
    # Errors that leave the stream in sync must not close (DESIGN: unknown types get an
    # error, not a disconnect).
    assert not closing & {"unknown_type", "bad_field", "malformed_frame", "rate_limited",
                          "illegal_card"}


def test_builders_produce_valid_messages() -> None:
    welcome = make_welcome(server="s", version="0.1", player=1, name="Ayşe", token="t",
                           features=["chat"], id=1)
    assert welcome["protocol"] == PROTOCOL_VERSION
    assert welcome["limits"] == announced_limits()
    assert "resumed" not in welcome  # None fields are left out
    assert make_ok(3) == {"type": "ok", "id": 3}
    assert make_move({"kind": "draw"}, id=2) == {"type": "move", "id": 2,
                                                  "move": {"kind": "draw"}}


def test_build_refuses_what_the_receiver_would() -> None:
    with pytest.raises(ProtocolError) as info:
        build("sit", Direction.TO_SERVER, seat=17)
    assert info.value.code == "bad_field"
    with pytest.raises(ProtocolError):
        make_hello("")


def test_features_are_negotiated_by_intersection() -> None:
    assert negotiate_features(None) == []
    assert negotiate_features([]) == []
    assert negotiate_features(["chat", "teleport", "rematch"]) == ["chat", "rematch"]
    assert negotiate_features(list(FEATURES)) == sorted(FEATURES)
    assert negotiate_features(["chat"], offered=["rematch"]) == []


def test_announced_limits_match_the_schema() -> None:
    limits = announced_limits()
    long_name = "x" * (limits["name"] + 1)
    with pytest.raises(ProtocolError):
        make_hello(long_name)
    make_hello("x" * limits["name"])


def test_an_error_leaves_out_extras_that_are_none() -> None:
    # A move refused by a check without a rule number carries no `rule` at all: the
    # schema's optional fields are absent, never nil.
    msg = make_error("illegal_move", "not now", 4, rule=None, seat=1)
    assert msg == {"type": "error", "code": "illegal_move", "message": "not now", "id": 4,
                   "seat": 1}
    validate(msg, Direction.TO_CLIENT)
