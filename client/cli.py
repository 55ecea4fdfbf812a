"""`pisyedili`: the terminal client's command line.

    pisyedili [HOST[:PORT] | ENDPOINT] [--name NAME] [--fresh]   play on a server
    pisyedili play [--rules R] [--bots N] [--seed N] ...         play offline against bots
    pisyedili play --web [--no-open] ...                        the same, in the browser
    pisyedili --discover                                         list the servers on the LAN

With no server named, `pisyedili` looks for servers on the LAN and on this machine and
asks which to join (client/discovery.py); `pisyedili localhost` joins this machine's.

Subcommands (`play`) are listed in `SUBCOMMANDS`; the top-level help shows each with
its options.

ENDPOINT is a Twisted client endpoint string (`tls:example.org:7707`,
`unix:/run/pisyedili.sock`), for servers that listen on more than plain TCP.

The session's resume token is kept on disk per server and name (client/token_store.py),
so `pisyedili HOST` after a closed terminal, a crash or a reboot resumes the session and
its seat (while the server keeps them); `--fresh` starts a new session. A `/login` is kept
per server and account name, and used only by a client of that name; without `--name`,
the name is the account whose login is saved for the server (`name_for`). Another
`--name` is another session; the same name, still in use by another client, is taken
over only when the player says so (`--take-over`, or yes at the question). Offline play keeps
its match in a file of its own (client/offline.py): `pisyedili play --continue` takes it
up again.

Twisted's asyncio reactor is installed here, before anything imports the reactor, so
Twisted and prompt_toolkit share one asyncio loop (and, offline, the embedded server
shares it too).
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import ipaddress
import os
import sys
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

# None of these imports the reactor, so they are safe before `install_reactor`.
from twisted.internet.endpoints import HostnameEndpoint, clientFromString
from twisted.internet.interfaces import (
    IStreamClientEndpoint,
    IStreamClientEndpointStringParserWithReactor,
)
from twisted.internet.task import Clock
from twisted.plugin import getPlugins

from pisyedili.protocol.limits import MAX_NAME
from pisyedili.protocol.shapes import BOT_LEVELS, RULE_SETS, SEAT_RANGE
from pisyedili.protocol.version import PROTOCOL_VERSION

from . import i18n
from .cards import HAND_ORDERS
from .i18n import N_, _
from .render import Look
from .terminal_text import visible

if TYPE_CHECKING:
    from .token_store import Saved, TokenStore
    from .wire import Ended, Link

DEFAULT_HOST = "localhost"
DEFAULT_PORT = 7707
_BUILTIN_ENDPOINTS = ("tcp", "ssl", "unix")
"""The client endpoint types Twisted parses itself; plugins add more (`tls`)."""


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


def _endpoint_types() -> set[str]:
    plugins = getPlugins(IStreamClientEndpointStringParserWithReactor)
    return {*_BUILTIN_ENDPOINTS, *(str(p.prefix).lower() for p in plugins)}


def is_endpoint_string(text: str) -> bool:
    """Whether `text` is a Twisted client endpoint string (`tls:host:port`) rather than
    HOST[:PORT]: its first field names an endpoint type. A host called `tcp` or `tls`
    would have to be written with its port as an endpoint string."""
    kind, colon, _ = text.partition(":")
    return bool(colon) and kind.lower() in _endpoint_types()


def server_endpoint(reactor: Any, text: str) -> IStreamClientEndpoint:
    """Where to connect: HOST[:PORT] (see `parse_address`), or a client endpoint string.

    Raises ValueError on text that is neither.
    """
    if is_endpoint_string(text):
        try:
            endpoint: IStreamClientEndpoint = clientFromString(  # type: ignore[no-untyped-call]
                reactor, text)
        except NameError:  # Twisted without its TLS extras leaves the TLS helpers undefined
            raise ValueError(f"{text!r} needs TLS support: pip install 'twisted[tls]'") from None
        except Exception as exc:  # each endpoint parser refuses in its own way
            raise ValueError(f"cannot use {text!r} as a client endpoint: {exc}") from None
        return endpoint
    host, port = parse_address(text)
    return cast(IStreamClientEndpoint, HostnameEndpoint(reactor, host, port, timeout=10))


def check_server(text: str) -> None:
    """Raise ValueError unless `text` names a server; needs no reactor, so bad text is
    refused before the terminal is taken over."""
    if is_endpoint_string(text):
        server_endpoint(Clock(), text)  # the parsers only keep the reactor they are given
    else:
        parse_address(text)


def insecure_target(text: str) -> str | None:
    """How to name the server when a password to it would cross a network in clear:
    None for TLS (`tls:`, `ssl:`), a UNIX socket or a loopback host."""
    text = text.strip()
    if is_endpoint_string(text):
        kind, _, rest = text.partition(":")
        if kind.lower() != "tcp":
            return None
        fields = dict(f.partition("=")[::2] for f in rest.split(":") if "=" in f)
        host = fields.get("host") or rest.split(":")[0]
    else:
        host = parse_address(text)[0]
    if host.lower() == "localhost":
        return None
    try:
        if ipaddress.ip_address(host).is_loopback:
            return None
    except ValueError:
        pass
    return host


def server_key(text: str) -> str:
    """What a server's saved session is filed under: `Example.org` and `example.org:7707`
    name one server, so they share it; an endpoint string is its own key."""
    text = text.strip()
    if is_endpoint_string(text):
        return text
    host, port = parse_address(text)
    host = host.lower()
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


RESUME_NOTE = N_("Closing the terminal keeps your session: `pisyedili` to the same server "
               "with the same --name takes your seat back (--fresh starts anew); /quit from "
               "the lobby forgets it.")


def session_key(server: str, name: str) -> str:
    """What the session of `name` on `server` (a `server_key`) is filed under: names the
    server takes for the same name (`names.keys`: case, look-alike letters) share it."""
    from pisyedili.protocol import names

    return f"{server}#{names.keys(name)[0]}"


def saved_session(store: TokenStore, server: str, name: str) -> Saved | None:
    """The session saved for `name` on `server`. A file from before sessions were kept
    per name holds one per server: it is `name`'s if it was welcomed with that name, and
    is moved to its own key."""
    key = session_key(server, name)
    saved = store.load(key)
    old = store.load(server) if saved is None else None
    if old is not None and old.name == name:
        store.save(key, old.token, old.name)
        store.delete(server)
        saved = store.load(key)
    return saved


def remember_session(link: Link, store: TokenStore, key: str, fresh: bool,
                     holder: int | None = None) -> Saved | None:
    """Start `link` from the token saved for `key` (unless `fresh`) and keep the file in
    step with each `welcome`, `holder` (this process) marked as using it; returns what
    was resumed from, if anything."""
    saved = None if fresh else store.load(key)
    if saved is not None:
        link.token = saved.token

    def changed(token: str | None, name: str) -> None:
        if token is None:
            store.delete(key)  # the server forgot it: a stale token would only be refused
        else:
            store.save(key, token, name, holder)

    link.on_token = changed
    return saved


def name_for(store: TokenStore, address: str,
             ask: Callable[[str], str] | None = None) -> str:
    """The name to play under on `address` when `--name` is not given: the account whose
    login is saved for that server, so `pisyedili HOST` logs its owner in again; with
    several (friends sharing the computer), the player says which (`ask`, a terminal's
    question; Enter, or no terminal, takes the one used last); with none, the login name.
    """
    logins = store.logins(server_key(address))
    if not logins:
        return default_name()
    last = logins[0].name
    if len(logins) == 1 or ask is None:
        return last
    answer = ask(_("Logins saved for {server}: {names}. Play as? Enter: {name} (used "
                   "last); a name not listed plays as a guest: ", server=address,
                   names=", ".join(visible(login.name) for login in logins),
                   name=visible(last))).strip()
    return answer or last


def claim_session(parser: argparse.ArgumentParser, store: TokenStore, address: str,
                  name: str, fresh: bool, take_over: bool,
                  ask: Callable[[str], str] | None = None) -> str | None:
    """Decide, before the terminal is taken over, what happens to the session saved for
    `name` on `address`; returns a line to show (what `--fresh` throws away), or exits.

    A session another live client of this user is using is taken over (that client is
    disconnected) only with `take_over` or a yes to `ask` (a terminal's question); with
    no terminal to ask, the default is not to, exit status 1.
    """
    saved = saved_session(store, server_key(address), name)
    if saved is None:
        return None
    shown = visible(saved.name)  # the name a server welcomed us with, kept in a file
    when = i18n.date(saved.saved_at, with_time=True)
    if fresh:
        return _("--fresh: forgetting the saved session of {name} on {server} (saved "
                 "{when}); the server keeps it for its grace period, a seat it holds then "
                 "goes to a bot", name=shown, server=address, when=when)
    from .token_store import in_use

    if take_over or not in_use(saved):
        return None
    where = _("the session of {name} on {server} is in use by another pisyedili "
              "(process {process})", name=shown, server=address,
              process=str(saved.holder))
    hint = _("--take-over takes its seat (that one is disconnected), --fresh starts "
             "another session beside it, or choose another --name")
    if ask is None:
        parser.exit(1, f"{parser.prog}: " + _("{where}; not taken over: {hint}", where=where,
                                              hint=hint) + "\n")
    answer = ask(_("{where}. Take the seat over? That one is disconnected. [y/N] ",
                   where=where))
    if answer.strip().lower() not in ("y", "yes", _("y"), _("yes")):
        parser.exit(1, f"{parser.prog}: " + _("not taken over: {hint}", hint=hint) + "\n")
    return None


def max_bots(rules: str) -> int:
    """Bot opponents offline: every seat of the rule set's largest table but yours."""
    return SEAT_RANGE[rules][1] - 1


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


_ARGPARSE = (
    N_("usage: "), N_("options"), N_("positional arguments"),
    N_("show this help message and exit"), N_("%(prog)s: error: %(message)s\n"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("the following arguments are required: %s"), N_("unrecognized arguments: %s"),
    N_("expected one argument"), N_("argument %(argument_name)s: %(message)s"),
    N_("invalid %(type)s value: %(value)r"),
)
"""argparse's own words (its usage and error lines), in the terminal's catalog: argparse
looks each up through its module's `_` when it prints, which `speak_argparse` points at
the chosen language."""


def speak_argparse() -> None:
    """argparse's own words in the chosen language (see `_ARGPARSE`)."""
    argparse._ = i18n.gettext  # type: ignore[attr-defined]


def chosen_language(argv: Sequence[str]) -> str | None:
    """`--lang CODE` (or `--lang=CODE`) in the arguments, read before the parsers are
    built: their help is written in that language."""
    for i, arg in enumerate(argv):
        if arg == "--lang" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--lang="):
            return arg.partition("=")[2]
    return None


def _language_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lang", choices=i18n.CHOICES, default=None, metavar="CODE",
                   help=_("the language of the screen: {codes} (default: LC_ALL, "
                          "LC_MESSAGES or LANG; /lang changes it in the game)",
                          codes=", ".join(i18n.CHOICES)))
    p.add_argument("--digits", choices=i18n.DIGITS, default="default",
                   help=_("default: the language's own digits (Persian's ۰-۹); latn: 0-9"))


def _common(p: argparse.ArgumentParser, name_help: str | None = None) -> None:
    """The options of every way to play; `name_help`: what `--name` defaults to, where
    it is not simply the login name."""
    p.add_argument("--name", default=None,
                   help=name_help or _("your player name (default: your login name), up to "
                                       "{count} chars", count=MAX_NAME))
    p.add_argument("--ascii", action="store_true",
                   help=_("letters instead of suit symbols (c d h s), for terminals without "
                          "Unicode"))
    p.add_argument("--sort", choices=HAND_ORDERS, default=HAND_ORDERS[0],
                   help=_("order your hand by suit then rank (default) or by rank; "
                          "/sort changes it in the game"))
    p.add_argument("--bell", action="store_true",
                   help=_("ring the terminal bell when it is your turn (/bell toggles it)"))
    p.add_argument("--log", metavar="FILE",
                   help=_("write the program's log to FILE (default: no log)"))
    _language_options(p)


PLAY_OPTIONS = N_("offline play")
"""The title of `play`'s own options, which the top-level help repeats."""


def build_play_parser() -> argparse.ArgumentParser:
    play = argparse.ArgumentParser(
        prog="pisyedili play",
        description=_("Play offline: an embedded server on this machine, bots in the "
                      "other seats, the match starts at once."),
        epilog=_("In the game, /help lists the commands."))
    game = play.add_argument_group(_(PLAY_OPTIONS))
    game.add_argument("--rules", choices=RULE_SETS, default=RULE_SETS[0],
                      help=_("rule set (default {rules})", rules=RULE_SETS[0]))
    limits = ", ".join(f"1-{max_bots(r)} {r}" for r in RULE_SETS)
    game.add_argument("--bots", type=int, default=3, metavar="N",
                      help=_("number of bot opponents: {limits} (default 3)", limits=limits))
    game.add_argument("--level", choices=BOT_LEVELS, default=None,
                      help=_("bot level (default {level})", level="medium"))
    game.add_argument("--seed", type=int, default=None,
                      help=_("seed the shuffles (tests and demos: deals become predictable)"))
    game.add_argument("--continue", dest="resume", action="store_true",
                      help=_("take up the most recent unfinished offline match that no "
                             "running `play` is playing, where it stopped (otherwise a new "
                             "match starts)"))
    game.add_argument("--web", action="store_true",
                      help=_("play in the browser instead of the terminal: the embedded "
                             "server serves the web client on this machine, prints its "
                             "address and opens it (Ctrl-C ends it)"))
    game.add_argument("--no-open", action="store_true",
                      help=_("with --web: print the address, do not open a browser"))
    _common(play)
    return play


REPLAY_OPTIONS = N_("replay")


def build_replay_parser() -> argparse.ArgumentParser:
    replay = argparse.ArgumentParser(
        prog="pisyedili replay",
        description=_("Watch an exported match (/export in the game) move by move, every "
                      "hand face up; no server needed."),
        epilog=_("In the viewer, /help lists its keys and commands."))
    group = replay.add_argument_group(_(REPLAY_OPTIONS))
    group.add_argument("file", metavar="FILE", help=_("a match exported as JSON "
                                                      "(docs/replay.md)"))
    replay.add_argument("--ascii", action="store_true",
                        help=_("letters instead of suit symbols (c d h s)"))
    replay.add_argument("--log", metavar="FILE",
                        help=_("write the program's log to FILE (default: no log)"))
    _language_options(replay)
    return replay


@dataclass(frozen=True)
class Subcommand:
    """A first word that makes `pisyedili` do something else than join a server."""

    name: str
    about: str
    """One line for the top-level help."""
    build: Callable[[], argparse.ArgumentParser]
    options: str = ""
    """The title of its own argument group, repeated in the top-level help."""


SUBCOMMANDS: tuple[Subcommand, ...] = (
    Subcommand("play", N_("play offline against bots on this machine"), build_play_parser,
               PLAY_OPTIONS),
    Subcommand("replay", N_("watch an exported match, every hand face up"),
               build_replay_parser, REPLAY_OPTIONS),
)
"""Each is `pisyedili NAME [options]`; a server host of the same name needs its port
(`play:7707`)."""


def _section(parser: argparse.ArgumentParser, title: str) -> str:
    """A parser's usage and the options under `title`, for another parser's help."""
    text = parser.format_help()
    usage = text.split("\n\n")[0]
    __, found, rest = text.partition(f"\n{title}:\n")
    if not title or not found:
        return usage
    options = rest.split("\n\n")[0]
    return f"{usage}\n\n" + _("{title} (with the options above):", title=title) + \
        f"\n{options}"


def version_line() -> str:
    """`pisyedili --version`: the installed game's version and the protocol it speaks."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        game = version("pisyedili")
    except PackageNotFoundError:  # run from a source tree that was never installed
        game = "0"
    return _("pisyedili {version} (protocol {protocol})", version=game,
             protocol=str(PROTOCOL_VERSION))


def build_net_parser(subcommands: dict[str, argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """`pisyedili [HOST[:PORT]]`; its help also lists the subcommands and their options."""
    listed = "\n".join(f"  {c.name:<12} {_(c.about)} (pisyedili {c.name} --help)"
                        for c in SUBCOMMANDS)
    more = "\n\n".join(_section(subcommands[c.name], _(c.options) if c.options else "")
                        for c in SUBCOMMANDS)
    net = argparse.ArgumentParser(
        prog="pisyedili",
        usage="%(prog)s [options] [HOST[:PORT] | ENDPOINT]"
              + "".join(f"\n       %(prog)s {c.name} [options]" for c in SUBCOMMANDS),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=_("Play Pis Yedili (Dirty Seven) on a server, or offline against bots.")
        + "\n\n" + _("commands:") + f"\n{listed}",
        epilog=f"{more}\n\n" + _("In the game, /help lists the commands."))
    net.add_argument("address", nargs="?", default=None, metavar="HOST[:PORT]",
                     help=_("server (default port {port}), or a Twisted client endpoint "
                            "string such as tls:example.org:7707; without one, choose among "
                            "the servers found on the LAN ('{host}' joins this machine's)",
                            port=str(DEFAULT_PORT), host=DEFAULT_HOST))
    net.add_argument("--version", action="version", version=version_line(),
                     help=_("print the game's version and its protocol's, and exit"))
    net.add_argument("--discover", action="store_true",
                     help=_("list the servers found on the LAN and on this machine, and exit"))
    net.add_argument("--fresh", action="store_true",
                     help=_("start a new session instead of resuming the one saved for this "
                            "server and name (after a closed terminal, a crash or a reboot)"))
    net.add_argument("--take-over", action="store_true",
                     help=_("resume the session saved for this name even while another "
                            "pisyedili of yours is using it (that one is disconnected); "
                            "without it you are asked, and input that is not a terminal "
                            "does not take over"))
    _common(net, _("your player name, up to {count} chars (default: the account whose "
                   "login is saved for the server; with several, you are asked, Enter "
                   "taking the last used; with none, your login name). A saved login is "
                   "used only by its own name", count=MAX_NAME))
    return net


def build_parsers() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The parser for joining a server, and one per subcommand by name."""
    subcommands = {c.name: c.build() for c in SUBCOMMANDS}
    return build_net_parser(subcommands), subcommands


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


def can_open_browser(environ: dict[str, str] | None = None,
                     platform: str | None = None) -> bool:
    """Whether a graphical browser can be opened: always on macOS and Windows; elsewhere
    only with a display (`webbrowser` would otherwise start a text browser in this
    terminal, or nothing)."""
    env = os.environ if environ is None else environ
    if (platform or sys.platform) in ("darwin", "win32"):
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def play_in_browser(reactor: Any, name: str, args: argparse.Namespace) -> int:
    """`pisyedili play --web`: the embedded server for the web client until Ctrl-C."""
    import webbrowser

    from .offline import OfflineOptions, serve_web

    start_logging(args.log, lambda line: print(visible(line), file=sys.stderr, flush=True))
    opts = OfflineOptions(rules=args.rules, bots=args.bots, seed=args.seed, level=args.level)

    def ready(url: str) -> None:
        print(_("Pis Yedili is at {url}", url=url), flush=True)
        opened = not args.no_open and can_open_browser() and webbrowser.open(url)
        if not opened:
            print(_("Open that address in a browser on this machine."), flush=True)
        print(_("Ctrl-C ends the game and the server."), flush=True)

    if not serve_web(reactor, name, opts, ready):
        print("pisyedili play: " + _("the embedded server could not listen on 127.0.0.1"),
              file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    i18n.choose(chosen_language(args_in))
    speak_argparse()
    net_parser, subcommands = build_parsers()
    command = args_in[0] if args_in and args_in[0] in subcommands else None
    parser = subcommands[command] if command else net_parser
    args = parser.parse_args(args_in[1:] if command else args_in)
    i18n.set_digits(args.digits)
    if command == "replay":
        return replay_file(parser, args.file, look_for(args.ascii), args.log)
    name = str(args.name if args.name is not None else default_name()).strip()[:MAX_NAME]
    if not name:
        parser.error(_("--name must not be blank"))
    look = look_for(args.ascii)

    offline = command == "play"
    if offline:
        limit = max_bots(args.rules)
        if not 1 <= args.bots <= limit:
            parser.error(_("--bots must be 1-{limit} for {rules} (C1, K1)", limit=str(limit),
                           rules=args.rules))
        if args.no_open and not args.web:
            parser.error(_("--no-open goes with --web"))
        if args.resume and args.web:  # the page keeps its own session, in the browser
            parser.error(_("--continue is for play in the terminal, not with --web"))
    else:
        if args.discover or args.address is None:  # LAN discovery (client/discovery.py)
            from . import discovery

            if args.discover:
                return discovery.discover()
            chosen = discovery.choose()
            if isinstance(chosen, int):
                return chosen
            args.address = chosen
        try:
            check_server(args.address)
        except ValueError as exc:
            parser.error(str(exc))
        from .token_store import TokenStore

        store = TokenStore()
        ask = input if sys.stdin.isatty() else None
        if args.name is None:
            args.name = name_for(store, args.address, ask)
        name = checked_name(parser, str(args.name))
        fresh_note = claim_session(parser, store, args.address, name, args.fresh,
                                   args.take_over, ask)

    reactor = install_reactor()
    if offline and args.web:
        return play_in_browser(reactor, name, args)
    # Imported only now: they import Twisted modules that must find the asyncio reactor.
    from .app import ClientApp
    from .offline import OfflineOptions, history_path, offline_dir, play, wire

    app = ClientApp(look, name, bell=args.bell, order=args.sort)
    start_logging(args.log, app.on_status)

    status = 0

    async def session() -> None:
        nonlocal status
        if offline:
            opts = OfflineOptions(rules=args.rules, bots=args.bots, seed=args.seed,
                                  level=args.level, resume=args.resume,
                                  journals=offline_dir(), history=history_path())
            await play(app, reactor, name, opts)
        else:
            from .token_store import ServerLogins

            server = server_key(args.address)
            key = session_key(server, name)
            link = wire(app, reactor, server_endpoint(reactor, args.address), name)
            link.retry_first = False  # a first connection that fails says why and exits
            saved = remember_session(link, store, key, args.fresh, os.getpid())
            if fresh_note:
                app.on_status(fresh_note)
            app.logins = ServerLogins(store, server, name)
            app.insecure = insecure_target(args.address)
            app.resume_note = _(RESUME_NOTE)
            if saved:
                app.on_status(_("connecting to {server} as {name} (resuming the session of "
                                "{saved})", server=args.address, name=name, saved=saved.name))
            else:
                app.on_status(_("connecting to {server} as {name}", server=args.address,
                                name=name))
            link.start()
            refused = await first_contact(link)
            if refused is not None:
                print(f"pisyedili: {refusal(args.address, refused)}", file=sys.stderr)
                status = 1
                if link.token is not None:
                    store.release(key, link.token)
                return
            await app.run()
            if link.token is None or link.fatal == "replaced":
                pass  # nothing saved, or the session and its entry are another client's now
            elif app.quit_from_match:
                store.release(key, link.token)  # kept to come back with, used by nobody
            else:
                # A clean quit from the lobby: nothing to come back to.
                store.delete(key, link.token)

    try:
        run_on_reactor(reactor, session)
    except KeyboardInterrupt:
        pass
    return status


def checked_name(parser: argparse.ArgumentParser, text: str) -> str:
    """`--name` as the server will take it (the server's own rules, `names.accept`),
    or exit with why: a name it refuses would only be refused after connecting."""
    from pisyedili.protocol import names

    try:
        return names.accept(text)
    except names.BadName as exc:
        parser.error(_("--name {why}; the server refuses such a name", why=str(exc)))


async def first_contact(link: Link) -> Ended | None:
    """Wait for the link's first `welcome`; None then, or how the link ended before it
    (the first connection failed, or the server refused our `hello`)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Ended | None] = loop.create_future()

    def settle(result: Ended | None) -> None:
        if not done.done():
            done.set_result(result)

    link.when_welcomed().addCallback(lambda _: settle(None))
    link.when_ended().addCallback(settle)
    return await done


def refusal(address: str, ended: Ended) -> str:
    """What to tell a player whose first connection came to nothing: the server's
    words (or the system's) as `visible` shows them, never as the terminal would act
    on them."""
    from .wire import UNREACHABLE

    if ended.code == UNREACHABLE:
        return _("cannot connect to {server}: {why}", server=address, why=visible(ended.text))
    return _("{server} refused the connection: {why} ({code})", server=address,
             why=visible(ended.text), code=visible(ended.code or ""))


def replay_file(parser: argparse.ArgumentParser, path: str, look: Look,
                log_path: str | None) -> int:
    """`pisyedili replay FILE`: the file is read and checked before the terminal is
    taken over, so a bad one is a plain message and exit status 1."""
    from .replay import ReplayError, load

    try:
        match = load(path)
    except (ReplayError, OSError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        parser.exit(1, f"{parser.prog}: {path}: {visible(why)}\n")  # it may quote the file
    reactor = install_reactor()
    from .app import ClientApp

    app = ClientApp(look, "")
    app.replay_only = True
    app.replay_to_log = not sys.stdout.isatty()
    start_logging(log_path, app.on_status)

    async def session() -> None:
        app.start_replay(match)
        await app.run()

    try:
        run_on_reactor(reactor, session)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
