"""The `pisyedili` command line: addresses, the terminal look, refused arguments."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from twisted.internet.endpoints import HostnameEndpoint, TCP4ClientEndpoint, UNIXClientEndpoint
from twisted.internet.testing import MemoryReactorClock

from pisyedili.client.cli import (
    build_parsers,
    check_server,
    is_endpoint_string,
    look_for,
    main,
    max_bots,
    parse_address,
    server_endpoint,
)
from pisyedili.protocol.shapes import RULE_SETS, SEAT_RANGE
from pisyedili.protocol.version import PROTOCOL_VERSION


@pytest.mark.parametrize(
    ("text", "address"),
    [("localhost", ("localhost", 7707)), ("example.org:9000", ("example.org", 9000)),
     ("[::1]:7000", ("::1", 7000)), ("[::1]", ("::1", 7707)), ("::1", ("::1", 7707))],
)
def test_addresses(text: str, address: tuple[str, int]) -> None:
    assert parse_address(text) == address


@pytest.mark.parametrize("text", ["host:0", "host:99999", "host:port", ":7707", "[::1"])
def test_bad_addresses_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_address(text)


@pytest.mark.parametrize(
    ("text", "kind"),
    [("localhost", HostnameEndpoint), ("[::1]:7000", HostnameEndpoint),
     ("tcp:example.org:7707", TCP4ClientEndpoint),
     ("tcp:host=example.org:port=7707", TCP4ClientEndpoint),
     ("unix:/run/pisyedili.sock", UNIXClientEndpoint)],
)
def test_a_server_is_host_and_port_or_an_endpoint_string(text: str, kind: type) -> None:
    assert isinstance(server_endpoint(MemoryReactorClock(), text), kind)  # type: ignore[no-untyped-call]


def test_tls_is_an_endpoint_string() -> None:
    assert is_endpoint_string("tls:example.org:7707")
    assert not is_endpoint_string("example.org:7707") and not is_endpoint_string("::1")
    try:
        server_endpoint(MemoryReactorClock(), "tls:example.org:7707")  # type: ignore[no-untyped-call]
    except ValueError as exc:  # Twisted without its TLS extras (pyOpenSSL)
        assert "twisted[tls]" in str(exc)


@pytest.mark.parametrize("text", ["tcp:example.org", "tcp:example.org:port=x", "host:port"])
def test_unreadable_servers_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        check_server(text)
    with pytest.raises(ValueError):
        server_endpoint(MemoryReactorClock(), text)  # type: ignore[no-untyped-call]


def test_offline_bots_fill_every_seat_but_yours() -> None:
    assert {r: max_bots(r) for r in RULE_SETS} == {r: SEAT_RANGE[r][1] - 1 for r in RULE_SETS}
    assert max_bots("classic") == 5 and max_bots("cardiva") == 3  # C1, K1


def test_no_color_and_ascii() -> None:
    assert look_for(False, {}, "utf-8").color and look_for(False, {}, "utf-8").unicode
    assert not look_for(False, {"NO_COLOR": "1"}, "utf-8").color
    assert look_for(False, {"NO_COLOR": ""}, "utf-8").color, "an empty NO_COLOR is unset"
    assert not look_for(True, {}, "utf-8").unicode
    assert not look_for(False, {}, "ascii").unicode, "a terminal that cannot show suits"


def test_play_options() -> None:
    _, subcommands = build_parsers()
    args = subcommands["play"].parse_args(["--rules", "cardiva", "--bots", "2", "--seed", "9",
                                           "--sort", "rank", "--bell"])
    assert (args.rules, args.bots, args.seed, args.sort, args.bell) == (
        "cardiva", 2, 9, "rank", True)


@pytest.mark.rule("K1")
@pytest.mark.parametrize("argv", [["play", "--bots", "4", "--rules", "cardiva"],
                                  ["play", "--bots", "0"], ["play", "--rules", "poker"],
                                  ["nohost:notaport"], ["tcp:nohost"], ["--name", "  "]])
def test_bad_arguments_exit_with_usage(argv: list[str],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_the_top_level_help_lists_the_subcommands_and_their_options(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert re.search(r"^  play +play offline against bots", out, re.M), out
    assert "pisyedili play [options]" in out
    for flag in ("--rules", "--bots", "--level", "--seed", "--sort", "--bell"):
        assert flag in out, flag
    with pytest.raises(SystemExit) as exit_:
        main(["play", "--help"])
    assert exit_.value.code == 0
    play = capsys.readouterr().out
    assert play.startswith("usage: pisyedili play") and "--bots N" in play and "--bell" in play


@pytest.mark.parametrize(("lang", "protocol"), [("en", "protocol"), ("tr", "protokol")])
def test_version_names_the_game_and_its_protocol(lang: str, protocol: str) -> None:
    """Through the installed console script, as a player types it."""
    script = Path(sys.executable).parent / "pisyedili"
    done = subprocess.run([str(script), "--lang", lang, "--version"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (f"pisyedili {version('pisyedili')} "
                                   f"({protocol} {PROTOCOL_VERSION})")
