"""Finding servers on the LAN and on this machine: mDNS/DNS-SD browsing.

Servers announce `_pisyedili._tcp.local.` (server/service/discovery.py). Browsing is a few
seconds of listening: there is no way to know that every server has answered, so
`browse` listens for a fixed time, then reads each service's address, port and TXT
records. It runs on its own asyncio loop (zeroconf's AsyncZeroconf), before the client
installs the reactor and hands the terminal to prompt_toolkit.
"""

from __future__ import annotations

import asyncio
import ipaddress
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any

from prompt_toolkit.utils import get_cwidth

from pisyedili.protocol.version import SUPPORTED_VERSIONS

from .i18n import N_, _
from .terminal_text import visible

SERVICE_TYPE = "_pisyedili._tcp.local."
BROWSE_SECONDS = 2.0
RESOLVE_SECONDS = 1.0
"""Extra time to read a service whose records did not all come with its announcement."""


@dataclass(frozen=True)
class Found:
    """One server found: where to connect, and what it says of itself."""

    name: str
    address: str
    port: int
    version: str = ""
    protocols: tuple[int, ...] = ()
    tables: int | None = None
    tls: bool = False
    instance: str = ""
    """The DNS-SD instance name (the server name, made unique on the LAN)."""

    @property
    def where(self) -> str:
        """`address:port`, with brackets around an IPv6 address."""
        return f"[{self.address}]:{self.port}" if ":" in self.address else (
            f"{self.address}:{self.port}")

    @property
    def target(self) -> str:
        """What `pisyedili` takes to connect: HOST:PORT, or a `tls:` endpoint string."""
        if self.tls:
            escaped = self.address.replace(":", "\\:")  # colons in an endpoint string
            return f"tls:{escaped}:{self.port}"
        return self.where

    @property
    def compatible(self) -> bool:
        """Whether this client speaks one of the server's protocol versions (a server
        that did not say is given the benefit of the doubt)."""
        return not self.protocols or bool(set(self.protocols) & set(SUPPORTED_VERSIONS))


def _sort_key(found: Found) -> tuple[Any, ...]:
    try:
        ip = ipaddress.ip_address(found.address.split("%")[0])
        where: tuple[Any, ...] = (ip.version, ip.packed)
    except ValueError:
        where = (9, found.address.encode())
    return (found.name.casefold(), found.name, *where, found.port, found.instance)


def _text(value: bytes | None) -> str:
    return value.decode("utf-8", "replace") if value is not None else ""


def found_of(info: Any) -> list[Found]:
    """The `Found` entries of one resolved zeroconf ServiceInfo: one per address."""
    props = {_text(k): _text(v) for k, v in (info.properties or {}).items()}
    protocols = tuple(int(p) for p in props.get("protocol", "").split(",")
                      if p.strip().isdigit())
    tables = props.get("tables", "")
    instance = info.get_name()
    return [Found(name=props.get("name") or instance, address=address, port=int(info.port),
                  version=props.get("version", ""), protocols=protocols,
                  tables=int(tables) if tables.isdigit() else None,
                  tls=props.get("tls") == "1", instance=instance)
            for address in info.parsed_scoped_addresses()]


def dedupe(found: Sequence[Found]) -> list[Found]:
    """One entry per address and port (a server heard on two interfaces, or announced
    twice, is listed once), sorted by name, then address."""
    seen: dict[tuple[str, int], Found] = {}
    for f in sorted(found, key=_sort_key):
        seen.setdefault((f.address, f.port), f)
    return sorted(seen.values(), key=_sort_key)


async def async_browse(timeout: float = BROWSE_SECONDS, *,
                       interfaces: Sequence[str] | None = None,
                       progress: Callable[[int], None] | None = None) -> list[Found]:
    """Listen for `timeout` seconds, then resolve what answered.

    `interfaces` limits the browsing to those interface addresses (default: every
    interface); `progress` is called with the number of services heard so far, a few
    times a second.
    """
    from zeroconf import DNSQuestionType, InterfaceChoice, IPVersion, ServiceListener, Zeroconf
    from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

    names: set[str] = set()

    class Heard(ServiceListener):
        def add_service(self, zc: Zeroconf, type_: str, name: str) -> None:
            names.add(name)

        def update_service(self, zc: Zeroconf, type_: str, name: str) -> None:
            names.add(name)

        def remove_service(self, zc: Zeroconf, type_: str, name: str) -> None:
            names.discard(name)  # a goodbye: that server stopped

    # IPv4 multicast is enough: responders put their IPv6 addresses (AAAA) in it too.
    aiozc = AsyncZeroconf(interfaces=InterfaceChoice.All if interfaces is None
                          else list(interfaces), ip_version=IPVersion.V4Only)
    browser: AsyncServiceBrowser | None = None
    try:
        # Multicast answers (QM), not unicast (QU): on one machine several mDNS stacks
        # share port 5353, and a unicast answer reaches only one of them, maybe not us.
        browser = AsyncServiceBrowser(aiozc.zeroconf, SERVICE_TYPE, listener=Heard(),
                                      question_type=DNSQuestionType.QM)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while (left := deadline - loop.time()) > 0:
            if progress is not None:
                progress(len(names))
            await asyncio.sleep(min(0.1, left))

        async def resolve(name: str) -> AsyncServiceInfo | None:
            info = AsyncServiceInfo(SERVICE_TYPE, name)
            ok = await info.async_request(aiozc.zeroconf, int(RESOLVE_SECONDS * 1000),
                                          question_type=DNSQuestionType.QM)
            return info if ok else None

        infos = await asyncio.gather(*(resolve(n) for n in sorted(names)))
    finally:
        if browser is not None:
            await browser.async_cancel()
        await aiozc.async_close()
    return dedupe([f for info in infos if info is not None for f in found_of(info)])


def browse(timeout: float = BROWSE_SECONDS, *, interfaces: Sequence[str] | None = None,
           progress: Callable[[int], None] | None = None) -> list[Found]:
    """`async_browse` on a loop of its own, for code that is not on one (the command
    line, before the reactor starts; a worker thread)."""
    return asyncio.run(async_browse(timeout, interfaces=interfaces, progress=progress))


# -- the command line's part ------------------------------------------------------------

HOW_ELSE = N_("To connect to a server by address: pisyedili HOST[:PORT] "
            "(pisyedili localhost for one on this machine).\n"
            "To play offline against bots: pisyedili play.")


def table(found: Sequence[Found], numbered: bool = False) -> list[str]:
    """The servers as aligned columns, with a heading. Any host on the LAN can announce
    a server, so what one says of itself (its name, its version) is shown `visible`."""
    head = [_("NAME"), _("ADDRESS"), _("VERSION"), _("PROTOCOLS"), _("TABLES"), _("TLS")]
    rows = [[visible(f.name) + ("" if f.compatible else _(" (incompatible)")),
             visible(f.where), visible(f.version) or "?", ",".join(map(str, f.protocols)) or "?",
             "?" if f.tables is None else str(f.tables), _("yes") if f.tls else _("no")]
            for f in found]
    if numbered:
        head = ["#", *head]
        rows = [[str(n), *row] for n, row in enumerate(rows, 1)]
    widths = [max(get_cwidth(r[i]) for r in [head, *rows]) for i in range(len(head))]
    return ["  ".join(c + " " * (w - get_cwidth(c)) for c, w in zip(r, widths, strict=True))
            .rstrip() for r in [head, *rows]]


def _safe(text: str, stream: IO[str]) -> str:
    """`text` as `stream` can write it: a server's name may not fit a terminal's encoding."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return text.encode(encoding, "replace").decode(encoding, "replace")
    return text


class Progress:
    """The browsing's progress line on stderr: redrawn in place on a terminal, said once
    (and its result once) otherwise."""

    def __init__(self, err: IO[str], timeout: float) -> None:
        self.err = err
        self.live = bool(getattr(err, "isatty", lambda: False)())
        self.text = _("Looking for Pis Yedili servers on the LAN ({seconds} s)",
                      seconds=f"{timeout:g}")
        if not self.live:
            print(f"{self.text}...", file=err, flush=True)

    def __call__(self, heard: int) -> None:
        if self.live:
            print(f"\r{self.text}... " + _("{count} heard", count=heard), end="",
                  file=self.err, flush=True)

    def done(self, found: int) -> None:
        end = _("{count} found", count=found) if found else _("none found")
        if self.live:
            print(f"\r{self.text}... {end}\033[K", file=self.err, flush=True)
        else:
            print(f"... {end}", file=self.err, flush=True)


def _search(err: IO[str], timeout: float, interfaces: Sequence[str] | None,
            ) -> list[Found] | None:
    shown = Progress(err, timeout)
    try:
        found = browse(timeout, interfaces=interfaces, progress=shown)
    except Exception as e:  # no multicast, no interface: say so, do not crash
        shown.done(0)
        print("pisyedili: " + _("cannot look for servers on the LAN: {error}", error=str(e)),
              file=err)
        return None
    shown.done(len(found))
    return found


def discover(out: IO[str] | None = None, err: IO[str] | None = None,
             timeout: float = BROWSE_SECONDS,
             interfaces: Sequence[str] | None = None) -> int:
    """`pisyedili --discover`: print the servers found; 0 even when there are none."""
    out, err = out or sys.stdout, err or sys.stderr
    found = _search(err, timeout, interfaces)
    if found is None:
        return 1
    if not found:
        print(_("No Pis Yedili server found on the LAN or on this machine."), file=out)
    else:
        print(_safe("\n".join(table(found)), out), file=out)
    return 0


def choose(out: IO[str] | None = None, err: IO[str] | None = None,
           read: Callable[[str], str] = input, timeout: float = BROWSE_SECONDS,
           interfaces: Sequence[str] | None = None) -> str | int:
    """`pisyedili` with no server: look for servers, then `choose_from` them."""
    out, err = out or sys.stdout, err or sys.stderr
    found = _search(err, timeout, interfaces)
    if found is None:
        print(_(HOW_ELSE), file=err)
        return 1
    return choose_from(found, out, err, read)


def choose_from(found: Sequence[Found], out: IO[str] | None = None,
                err: IO[str] | None = None, read: Callable[[str], str] = input) -> str | int:
    """List `found` and let the player pick one: by number, or yes/no when there is one.

    Returns the server to connect to, or the exit status when there is none to
    (1: nothing found or no answer; 0: the player declined).
    """
    out, err = out or sys.stdout, err or sys.stderr
    if not found:
        print(_("No Pis Yedili server found on the LAN or on this machine."), file=err)
        print(_(HOW_ELSE), file=err)
        return 1
    print(_safe("\n".join(table(found, numbered=True)), out), file=out, flush=True)
    try:
        if len(found) == 1:
            answer = read(_safe(_("Connect to {name} at {address}? [Y/n] ",
                                  name=visible(found[0].name),
                                  address=visible(found[0].where)), out))
            yes = ("", "y", "yes", _("y"), _("yes"))
            return found[0].target if answer.strip().lower() in yes else 0
        while True:
            answer = read(_("Server to connect to (1-{last}, Enter to cancel): ",
                            last=len(found))).strip()
            if not answer:
                return 0
            if answer.isdigit() and 1 <= int(answer) <= len(found):
                return found[int(answer) - 1].target
            print(_("Type a number from 1 to {last}.", last=len(found)), file=err)
    except EOFError:
        print("\n" + _("No server chosen."), file=err)
        return 1
    except KeyboardInterrupt:
        print(file=err)
        return 130
