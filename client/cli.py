"""`pisyedili`: the terminal client's command line.

    pisyedili [HOST[:PORT]] [--name NAME] [--ascii]       play on a server
    pisyedili play [--rules R] [--bots N] [--seed N] ...  play offline against bots

Twisted's asyncio reactor is installed here, before anything imports the reactor, so
Twisted and prompt_toolkit share one asyncio loop (and, offline, the embedded server
shares it too).
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, cast

from .render import Look

DEFAULT_HOST = "localhost"
DEFAULT_PORT = 7707
MAX_NAME = 24


def default_name() -> str:
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = ""
    return (name or "player")[:MAX_NAME]


def parse_address(text: str) -> tuple[str, int]:
    """`host`, `host:port`, `[v6]:port` → (host, port); raises ValueError."""
    host, port = text, DEFAULT_PORT
    if text.startswith("["):
        close = text.find("]")
        if close < 0:
            raise ValueError(f"unclosed [ in {text!r}")
        host, rest = text[1:close], text[close + 1:]
        if rest:
            if not rest.startswith(":"):
                raise ValueError(f"cannot read {text!r}")
            port = int(rest[1:])
    elif text.count(":") == 1:
        host, _, p = text.partition(":")
        port = int(p)
    if not host or not 0 < port < 65536:
        raise ValueError(f"cannot read {text!r} as HOST[:PORT]")
    return host, port


def look_for(ascii_only: bool, environ: dict[str, str] | None = None,
             encoding: str | None = None) -> Look:
    """ASCII when asked or when the terminal cannot encode suits; `NO_COLOR` (no-color.org)
    turns colour off."""
    env = os.environ if environ is None else environ
    enc = encoding if encoding is not None else (getattr(sys.stdout, "encoding", None) or "")
    try:
        "♣♦♥♠→▶".encode(enc or "ascii")
        unicode = True
    except (UnicodeEncodeError, LookupError):
        unicode = False
    return Look(unicode=unicode and not ascii_only, color=not env.get("NO_COLOR"))


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--name", default=default_name(),
                   help=f"your player name (default: your login name), up to {MAX_NAME} chars")
    p.add_argument("--ascii", action="store_true",
                   help="letters instead of suit symbols (c d h s), for terminals without Unicode")
    p.add_argument("--log", metavar="FILE",
                   help="write the program's log to FILE (default: no log)")


def build_parsers() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    net = argparse.ArgumentParser(
        prog="pisyedili",
        description="Play Pis Yedili (Dirty Seven) on a server. "
                    "'pisyedili play' plays offline against bots.",
        epilog="In the game, /help lists every command.")
    net.add_argument("address", nargs="?", default=f"{DEFAULT_HOST}:{DEFAULT_PORT}",
                     metavar="HOST[:PORT]", help=f"server (default {DEFAULT_HOST}:{DEFAULT_PORT})")
    _common(net)

    play = argparse.ArgumentParser(
        prog="pisyedili play",
        description="Play offline: an embedded server on this machine, bots in the other "
                    "seats, the match starts at once.")
    play.add_argument("--rules", choices=("classic", "cardiva"), default="classic",
                      help="rule set (default classic)")
    play.add_argument("--bots", type=int, default=3, metavar="N",
                      help="number of bot opponents: 1-5 classic, 1-3 cardiva (default 3)")
    play.add_argument("--level", choices=("easy", "medium", "hard"), default=None,
                      help="bot level (default: the server's)")
    play.add_argument("--seed", type=int, default=None,
                      help="seed the shuffles (tests and demos: deals become predictable)")
    _common(play)
    return net, play


def install_reactor() -> Any:
    """The asyncio reactor on a fresh loop; must run before anything imports the reactor."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    from twisted.internet import asyncioreactor

    asyncioreactor.install(loop)  # type: ignore[no-untyped-call]
    from twisted.internet import reactor

    return reactor


def start_logging(path: str | None, app_status: Callable[[str], None]) -> None:
    """Logs go to `--log FILE` if given; errors also reach the player's screen."""
    from twisted.logger import (
        FilteringLogObserver,
        ILogFilterPredicate,
        ILogObserver,
        LogLevel,
        LogLevelFilterPredicate,
        formatEvent,
        globalLogBeginner,
        textFileLogObserver,
    )

    def to_screen(event: dict[str, Any]) -> None:
        app_status(f"error: {formatEvent(event)}")

    observers: list[ILogObserver] = [cast(ILogObserver, FilteringLogObserver(
        cast(ILogObserver, to_screen),
        [cast(ILogFilterPredicate, LogLevelFilterPredicate(defaultLogLevel=LogLevel.error))]))]
    if path:
        observers.append(cast(ILogObserver, textFileLogObserver(
            open(path, "a", encoding="utf-8"))))  # lives as long as the process
    globalLogBeginner.beginLoggingTo(observers, discardBuffer=True, redirectStandardIO=False)


def run_on_reactor(reactor: Any, main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    """Run `main` on the reactor's asyncio loop; stop the reactor when it returns."""
    failure: list[BaseException] = []

    def begin() -> None:
        task: asyncio.Task[None] = asyncio.get_event_loop().create_task(main())

        def finished(t: asyncio.Task[None]) -> None:
            if not t.cancelled() and t.exception() is not None:
                failure.append(cast(BaseException, t.exception()))
            reactor.stop()

        task.add_done_callback(finished)

    reactor.callWhenRunning(begin)
    reactor.run(installSignalHandlers=False)
    if failure:
        raise failure[0]


def main(argv: Sequence[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    net_parser, play_parser = build_parsers()
    offline = bool(args_in) and args_in[0] == "play"
    args = play_parser.parse_args(args_in[1:]) if offline else net_parser.parse_args(args_in)
    name = str(args.name).strip()[:MAX_NAME]
    if not name:
        net_parser.error("--name must not be blank")
    look = look_for(args.ascii)

    if offline:
        limit = 5 if args.rules == "classic" else 3
        if not 1 <= args.bots <= limit:
            play_parser.error(f"--bots must be 1-{limit} for {args.rules} (C1, K1)")
    else:
        try:
            host, port = parse_address(args.address)
        except ValueError as exc:
            net_parser.error(str(exc))

    reactor = install_reactor()
    # Imported only now: they import Twisted modules that must find the asyncio reactor.
    from .app import ClientApp
    from .offline import OfflineOptions, play, wire

    app = ClientApp(look, name)
    start_logging(args.log, app.on_status)

    async def session() -> None:
        if offline:
            opts = OfflineOptions(rules=args.rules, bots=args.bots, seed=args.seed,
                                  level=args.level)
            await play(app, reactor, name, opts)
        else:
            conn = wire(app, reactor, host, port, name)
            app.on_status(f"connecting to {host}:{port} as {name}")
            conn.start()
            await app.run()

    try:
        run_on_reactor(reactor, session)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
