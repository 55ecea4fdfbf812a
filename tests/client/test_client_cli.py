"""The `pisyedili` command line: addresses, the terminal look, refused arguments."""

from __future__ import annotations

import pytest

from pisyedili.client.cli import build_parsers, look_for, main, parse_address


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


def test_no_color_and_ascii() -> None:
    assert look_for(False, {}, "utf-8").color and look_for(False, {}, "utf-8").unicode
    assert not look_for(False, {"NO_COLOR": "1"}, "utf-8").color
    assert look_for(False, {"NO_COLOR": ""}, "utf-8").color, "an empty NO_COLOR is unset"
    assert not look_for(True, {}, "utf-8").unicode
    assert not look_for(False, {}, "ascii").unicode, "a terminal that cannot show suits"


def test_play_options() -> None:
    _, play = build_parsers()
    args = play.parse_args(["--rules", "cardiva", "--bots", "2", "--seed", "9"])
    assert (args.rules, args.bots, args.seed) == ("cardiva", 2, 9)


@pytest.mark.rule("K1")
@pytest.mark.parametrize("argv", [["play", "--bots", "4", "--rules", "cardiva"],
                                  ["play", "--bots", "0"], ["play", "--rules", "poker"],
                                  ["nohost:notaport"], ["--name", "  "]])
def test_bad_arguments_exit_with_usage(argv: list[str],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert "usage:" in capsys.readouterr().err
