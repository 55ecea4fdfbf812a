"""The command line and service shared by `pisyedili-server` and `twistd pisyedili`."""

from __future__ import annotations

import gc
import importlib.util
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.application.service import IServiceMaker
from twisted.internet import reactor
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.logger import globalLogPublisher
from twisted.python import usage
from wireclient import WireClient

from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.service import tap

ROOT = Path(__file__).resolve().parents[2]


def parse(*argv: str) -> tap.Options:
    options = tap.Options()
    options.parseOptions(list(argv))  # type: ignore[no-untyped-call]
    return options


def test_defaults_listen_on_7707_with_text_logs() -> None:
    options = parse()
    assert options["listen"] == ["tcp:7707:backlog=1024"]
    assert options["log-format"] == "text"
    assert options["seed"] is None
    assert options["limits"].max_connections == 1000


def test_every_option_reaches_limits_and_table_settings() -> None:
    options = parse("--listen", "tcp:1", "-l", "ssl:2:privateKey=k.pem", "--name", "Kahve",
                    "--log-format", "json", "--seed", "9", "--turn-seconds", "20",
                    "--grace-seconds", "45", "--max-connections", "50",
                    "--max-per-address", "4", "--max-tables", "2", "--handshake-seconds", "3",
                    "--ping-seconds", "5", "--idle-seconds", "12", "--rate", "8",
                    "--burst", "16", "--bot-delay", "0.2")
    assert options["listen"] == ["tcp:1", "ssl:2:privateKey=k.pem"]
    limits, settings = options["limits"], options["settings"]
    assert (limits.max_connections, limits.max_per_address, limits.max_tables_per_player) == (
        50, 4, 2)
    assert (limits.handshake_seconds, limits.ping_seconds, limits.idle_seconds) == (3, 5, 12)
    assert (limits.rate, limits.burst) == (8, 16)
    assert (settings.turn_seconds, settings.grace_seconds, settings.bot_delay) == (20, 45, 0.2)
    assert options["seed"] == 9 and options["name"] == "Kahve"


@pytest.mark.parametrize("argv", [
    ["--log-format", "xml"],
    ["--max-connections", "-1"],
    ["--max-connections", "0"],
    ["--rate", "lots"],
    ["--ping-seconds", "60", "--idle-seconds", "30"],
])
def test_bad_options_are_usage_errors(argv: list[str]) -> None:
    with pytest.raises(usage.UsageError):
        parse(*argv)


def test_console_script_exits_2_on_bad_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        tap.main(["--log-format", "xml"])
    assert exc.value.code == 2
    assert "--log-format" in capsys.readouterr().err


def test_console_script_help_lists_its_subcommands_each_with_its_own_usage(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        tap.main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("Usage: pisyedili-server [--listen ENDPOINT]... ")
    commands = out[out.index("Commands:"):]
    assert "backup" in commands and "operator" in commands
    with pytest.raises(SystemExit) as exc:
        tap.main(["backup", "--help"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith(
        "Usage: pisyedili-server backup [--db PATH|URL] DEST\nOptions:")
    assert "Commands:" not in str(tap.Options())  # `twistd pisyedili` runs a server only


def test_twistd_dropin_names_this_module() -> None:
    path = ROOT / "twisted" / "plugins" / "pisyedili_server.py"
    spec = importlib.util.spec_from_file_location("pisyedili_dropin", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    makers = [v for v in vars(module).values() if IServiceMaker.providedBy(v)]
    assert [m.tapname for m in makers] == ["pisyedili"]
    assert makers[0].options is tap.Options
    assert makers[0].makeService is tap.makeService


@pytest_twisted.ensureDeferred
async def test_service_listens_warns_about_seed_and_says_goodbye() -> None:
    events: list[dict[str, Any]] = []
    globalLogPublisher.addObserver(events.append)  # type: ignore[arg-type]
    service = tap.makeService(parse("--listen", "tcp:0:interface=127.0.0.1",
                                    "--name", "Kahve", "--seed", "3"))
    try:
        service.startService()
        assert service.ready is not None
        await service.ready
        port = service.ports[0].getHost().port
        client = await connectProtocol(TCP4ClientEndpoint(reactor, "127.0.0.1", port),  # type: ignore[no-untyped-call]
                                       WireClient())
        welcome = await client.request("hello", protocol=PROTOCOL_VERSION, name="ann")
        assert welcome["server"] == "Kahve"
        await service.stopService()
        err = await client.wait_type("error")
        assert err["code"] == "shutting_down"
        await client.closed
    finally:
        globalLogPublisher.removeObserver(events.append)  # type: ignore[arg-type]
        if service.running:
            await service.stopService()
        for session in service.factory.sessions.each():  # no expiry left on the reactor
            service.factory.sessions.forget(session)
    warnings = [e for e in events if e.get("log_level") is not None
                and e["log_level"].name == "warn" and "seed" in e.get("log_format", "")]
    assert warnings and warnings[0]["seed"] == 3
    assert not [e for e in events if welcome["token"] in repr(e)]  # never logged


@pytest_twisted.ensureDeferred
async def test_nothing_listens_before_the_service_starts() -> None:
    """twistd calls privilegedStartService before the reactor runs; a port that could
    not be bound then could not stop it, so the ports are bound by startService."""
    service = tap.makeService(parse("--listen", "tcp:0:interface=127.0.0.1",
                                    "--db", ":memory:", "--no-announce"))
    service.privilegedStartService()
    assert service.ports == [] and not any(child.running for child in service)
    service.startService()
    try:
        assert service.ready is not None
        await service.ready
        assert len(service.ports) == 1 and all(child.running for child in service)
    finally:
        await service.stopService()
    assert not any(child.running for child in service)


@pytest_twisted.ensureDeferred
async def test_a_listening_server_keeps_start_up_out_of_full_collections() -> None:
    """A full collection walking start-up's objects stalled every table for tens of
    milliseconds in the middle of play: once listening, they are frozen; what is made
    later is collected as usual."""
    gc.unfreeze()
    service = tap.makeService(parse("--listen", "tcp:0:interface=127.0.0.1",
                                    "--db", ":memory:", "--no-announce"))
    service.startService()
    try:
        assert service.ready is not None
        await service.ready
        later = [service]
        tracked = gc.get_objects()
        assert not any(o is service.factory for o in tracked)  # made at start-up
        assert any(o is later for o in tracked)
        assert gc.get_freeze_count() > 0
    finally:
        await service.stopService()
        gc.unfreeze()


@pytest_twisted.ensureDeferred
async def test_service_that_cannot_listen_fails() -> None:
    first = tap.makeService(parse("--listen", "tcp:0:interface=127.0.0.1"))
    first.startService()
    assert first.ready is not None
    await first.ready
    taken = first.ports[0].getHost().port
    second = tap.makeService(parse("--listen", f"tcp:{taken}:interface=127.0.0.1",
                                   "--db", ":memory:"))  # the first one's file is its own
    second._reactor = _NotRunning()  # keep the test's reactor running
    second.startService()
    try:
        assert second.failed
    finally:
        await first.stopService()
        second.running = False


class _NotRunning:
    """Stands in for the reactor only in the failed-listen check above."""

    running = False

    def __getattr__(self, name: str) -> Any:
        return getattr(reactor, name)
