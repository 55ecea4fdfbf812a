"""systemd/pisyedili.service and .socket: hardened, dual-stack, and still serving.

`systemd-analyze` rates the shipped service and checks both units. systemd cannot run
the units here (no systemd as PID 1 in a container, so no `systemd-run`), so the last
tests rebuild the parts of the unit's sandbox that can break a Python server with the
kernel's own tools: the unit's system-call filter, MemoryDenyWriteExecute= and
RestrictAddressFamilies= as seccomp filters (what systemd installs), an empty
capability bounding set, UMask=, and, as root, a network namespace of its own
(PrivateNetwork=) and a private mount namespace with a read-only root and a /proc
with hidepid=invisible,subset=pid. The server then gets the socket the way systemd
hands it over (fd 3, LISTEN_PID/LISTEN_FDS/LISTEN_FDNAMES).

Run as a script, this file is that sandbox's launcher (see `sandboxed_exec`).
"""

from __future__ import annotations

import ctypes
import errno
import json
import mmap
import os
import re
import shlex
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # this file is also the sandbox's launcher, run with no test path
    from process_output import Output

ROOT = Path(__file__).resolve().parents[2]
SERVICE = ROOT / "systemd" / "pisyedili.service"
SOCKET = ROOT / "systemd" / "pisyedili.socket"
TEMPLATE = ROOT / "systemd" / "pisyedili@.service"
HAPROXY = ROOT / "systemd" / "haproxy-pisyedili.cfg"
SYSUSERS = ROOT / "systemd" / "pisyedili.sysusers"
OPERATING = ROOT / "docs" / "operating.md"
MAX_EXPOSURE = 2.0
BACKSTOP = 60.0
INSTALL = ("install the `systemd` package (Debian/Ubuntu: apt-get install -y systemd; "
           "it brings systemd-analyze and libseccomp)")


def units(path: Path) -> dict[str, list[str]]:
    """The unit's settings, each key with all its values in order (continuations joined)."""
    settings: dict[str, list[str]] = {}
    logical = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if logical:
            line = logical + " " + line
            logical = ""
        if line.endswith("\\"):
            logical = line[:-1].strip()
            continue
        if not line or line.startswith(("#", ";", "[")) or "=" not in line:
            continue
        key, value = line.split("=", 1)
        settings.setdefault(key.strip(), []).append(" ".join(value.split()))
    return settings


def analyze(*args: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("systemd-analyze") is None:
        pytest.fail(f"systemd-analyze is missing: {INSTALL}.", pytrace=False)
    return subprocess.run(["systemd-analyze", *args], capture_output=True, text=True,
                          timeout=BACKSTOP, check=False)


# -- what systemd-analyze says ---------------------------------------------------------

def instance(folder: Path, unit: Path, number: int = 1) -> Path:
    """`unit` (a template: as its instance `number`) in `folder`, its ExecStart= at
    this install's server, since verify wants it to exist."""
    server = shutil.which("pisyedili-server", path=str(Path(sys.executable).parent))
    assert server, "pisyedili-server is not installed next to this Python"
    text = re.sub(r"(?m)^ExecStart=\S+", f"ExecStart={server}",
                  unit.read_text(encoding="utf-8"))
    path = folder / unit.name.replace("@.", f"@{number}.")
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("unit", [SERVICE, TEMPLATE], ids=["service", "template"])
def test_the_service_rates_ok_in_systemd_analyze_security(unit: Path, tmp_path: Path
                                                          ) -> None:
    path = instance(tmp_path, unit)
    done = analyze("security", "--offline=true", f"--threshold={int(MAX_EXPOSURE * 10)}",
                   str(path))
    found = re.search(rf"Overall exposure level for {re.escape(path.name)}: "
                      r"(\d+\.\d+) (\w+)", done.stdout)
    assert found, done.stdout + done.stderr
    exposure, rating = float(found.group(1)), found.group(2)
    assert exposure <= MAX_EXPOSURE, done.stdout
    assert rating in ("OK", "SAFE", "PERFECT"), done.stdout
    assert done.returncode == 0, done.stdout + done.stderr
    # docs/operating.md quotes the score: keep it true.
    assert f"{exposure:.1f} {rating}" in OPERATING.read_text(encoding="utf-8"), (
        f"docs/operating.md should quote the measured exposure, {exposure:.1f} {rating}")


def test_both_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    service = instance(tmp_path, SERVICE)
    shutil.copy(SOCKET, tmp_path / SOCKET.name)
    done = analyze("verify", "--man=no", str(tmp_path / SOCKET.name), str(service))
    assert done.returncode == 0 and not done.stderr.strip(), done.stdout + done.stderr


def test_the_template_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    done = analyze("verify", "--man=no", str(instance(tmp_path, TEMPLATE, 2)))
    assert done.returncode == 0 and not done.stderr.strip(), done.stdout + done.stderr


@pytest.mark.parametrize("unit", [SERVICE, TEMPLATE], ids=["service", "template"])
def test_the_units_run_as_the_system_user_sysusers_makes(unit: Path, tmp_path: Path
                                                       ) -> None:
    """A static user, `pisyedili` (the name PostgreSQL's peer authentication maps to the
    role), made by the shipped sysusers.d file; not DynamicUser=, whose name the docs
    could not give. What DynamicUser= implied is set one by one."""
    settings = units(unit)
    assert "DynamicUser" not in settings
    assert settings["User"] == ["pisyedili"] and settings["Group"] == ["pisyedili"]
    for key, value in (("ProtectSystem", "strict"), ("PrivateTmp", "yes"),
                       ("RemoveIPC", "yes"), ("NoNewPrivileges", "yes"),
                       ("RestrictSUIDSGID", "yes")):
        assert settings[key] == [value], key
    if shutil.which("systemd-sysusers") is None:
        pytest.fail(f"systemd-sysusers is missing: {INSTALL}.", pytrace=False)
    (tmp_path / "etc").mkdir()
    done = subprocess.run(["systemd-sysusers", f"--root={tmp_path}", str(SYSUSERS)],
                          capture_output=True, text=True, timeout=BACKSTOP, check=False)
    assert done.returncode == 0, done.stderr
    [user] = [line.split(":") for line in
              (tmp_path / "etc" / "passwd").read_text(encoding="utf-8").splitlines()
              if line.startswith("pisyedili:")]
    [group] = [line.split(":") for line in
               (tmp_path / "etc" / "group").read_text(encoding="utf-8").splitlines()
               if line.startswith("pisyedili:")]
    assert 0 < int(user[2]) < 1000, user  # a system user
    assert user[3] == group[2], (user, group)
    assert user[5] == "/" and user[6].endswith("nologin"), user


def test_the_docs_say_how_each_process_logs_in_to_postgresql(tmp_path: Path) -> None:
    """docs/operating.md installs the user, names peer authentication over the Unix
    socket, and its drop-in for a password over TCP passes systemd-analyze verify on
    an instance of the template."""
    doc = OPERATING.read_text(encoding="utf-8")
    assert doc.count("sudo cp systemd/pisyedili.sysusers /etc/sysusers.d/pisyedili.conf") == 2
    assert "DynamicUser=yes" not in doc and "throw-away" not in doc
    assert "'postgresql:///pisyedili?host=/var/run/postgresql'" in doc
    assert "peer authentication" in doc
    [dropin] = re.findall(r"```ini\n(\[Service\]\nLoadCredential=pgpass:.*?)```", doc,
                          re.DOTALL)
    assert "Environment=PGPASSFILE=%d/pgpass" in dropin
    unit = instance(tmp_path, TEMPLATE, 2)
    folder = tmp_path / f"{unit.name}.d"
    folder.mkdir()
    (folder / "pgpass.conf").write_text(dropin, encoding="utf-8")
    if shutil.which("systemd-analyze") is None:
        pytest.fail(f"systemd-analyze is missing: {INSTALL}.", pytrace=False)
    done = subprocess.run(["systemd-analyze", "verify", "--man=no", str(unit)],
                          capture_output=True, text=True, timeout=BACKSTOP, check=False,
                          env={**os.environ, "SYSTEMD_UNIT_PATH": f"{tmp_path}:"})
    assert done.returncode == 0 and not done.stderr.strip(), done.stdout + done.stderr


def test_the_templates_ports_are_the_ones_haproxy_sends_to() -> None:
    """Instance N listens on 771N behind the PROXY protocol, serves the web on 781N
    and answers health checks on 791N; the shipped HAProxy file's `server` lines name
    those ports, speaking the PROXY protocol to the first only, and check each process
    on its health port."""
    template = units(TEMPLATE)
    env = dict(value.split("=", 1) for value in template["Environment"])
    assert env["PISYEDILI_LISTEN"].startswith("haproxy:tcp:771%i:interface=127.0.0.1")
    assert env["PISYEDILI_WEB"] == "tcp:781%i:interface=127.0.0.1"
    assert env["PISYEDILI_HEALTH"] == "tcp:791%i:interface=127.0.0.1"
    [command] = template["ExecStart"]
    for option in ("--listen ${PISYEDILI_LISTEN}", "--web ${PISYEDILI_WEB}",
                   "--health ${PISYEDILI_HEALTH}",
                   "--web-proxy 127.0.0.1", "--cluster ${PISYEDILI_CLUSTER}"):
        assert option in command
    lines = re.findall(r"(?m)^\s+server (p\d) 127\.0\.0\.1:(\d+) (.*)$",
                       HAPROXY.read_text(encoding="utf-8"))
    tcp = [(name, port, rest) for name, port, rest in lines if port.startswith("771")]
    web = [(name, port, rest) for name, port, rest in lines if port.startswith("781")]
    assert [(name, port) for name, port, _ in tcp] == [("p1", "7711"), ("p2", "7712")]
    assert [(name, port) for name, port, _ in web] == [("p1", "7811"), ("p2", "7812")]
    assert all("send-proxy-v2" in rest.split() for _, _, rest in tcp)
    assert not any("send-proxy" in rest for _, _, rest in web)
    for name, _, rest in tcp + web:
        assert f"check port 791{name[1:]}" in rest, rest


def test_the_socket_is_dual_stack_and_the_service_reads_it_as_inet6() -> None:
    sock, service = units(SOCKET), units(SERVICE)
    assert sock["ListenStream"] == ["[::]:7707"]
    assert sock["BindIPv6Only"] == ["both"]
    [command] = service["ExecStart"]
    assert "--listen systemd:domain=INET6:index=0" in command
    assert service["StateDirectory"] == ["pisyedili"]
    doc = OPERATING.read_text(encoding="utf-8")
    assert "systemd:domain=INET6:index=0" in doc and "BindIPv6Only=both" in doc


def test_the_templates_command_is_one_the_server_takes() -> None:
    """ExecStart= with instance 1's defaults put in, as systemd expands it, parses as
    the server's options: a cluster, the PROXY-protocol port, the web behind HAProxy."""
    from pisyedili.server.service.tap import ServerOptions

    template = units(TEMPLATE)
    env = dict(value.split("=", 1) for value in template["Environment"])
    [command] = template["ExecStart"]
    expanded = re.sub(r"\$\{(\w+)\}", lambda m: env[m.group(1)], command)
    expanded = expanded.replace("%i", "1").replace("%S", "/var/lib")
    options = ServerOptions()
    options.parseOptions(shlex.split(expanded)[1:])  # type: ignore[no-untyped-call]
    assert options["listen"] == ["haproxy:tcp:7711:interface=127.0.0.1:backlog=1024"]
    assert options["web"] == ["tcp:7811:interface=127.0.0.1"]
    assert options["health"] == "tcp:7911:interface=127.0.0.1"
    assert str(options["cluster"]) == "redis://127.0.0.1:6379/0"
    assert options["db"] == "/var/lib/pisyedili-1/pisyedili.sqlite3"
    assert options["proxies"].trusts("127.0.0.1")


# -- the server under the unit's sandbox -------------------------------------------------

SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_CMP_EQ, SCMP_CMP_GT, SCMP_CMP_MASKED_EQ = 4, 6, 7
SHM_EXEC = 0o100000
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP = 38, 24
CLONE_NEWNS, CLONE_NEWNET = 0x20000, 0x40000000
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18


def _errno_action(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


class _Cmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


def syscall_set(expression: str) -> set[str]:
    """System calls named by groups and names, as `systemd-analyze syscall-filter` lists them."""
    names: set[str] = set()
    for word in expression.split():
        if not word.startswith("@"):
            names.add(word)
            continue
        listed = analyze("syscall-filter", word)
        assert listed.returncode == 0, listed.stderr
        for line in listed.stdout.splitlines()[1:]:
            entry = line.split("#")[0].strip()
            if entry:
                names |= syscall_set(entry)
    return names


def sandbox_of(service: dict[str, list[str]]) -> dict[str, Any]:
    """What the launcher applies, read from the unit (so the test follows the unit)."""
    allowed: set[str] | None = None
    for value in service.get("SystemCallFilter", []):
        if value.startswith("~"):
            assert allowed is not None, "a deny list alone is not what this test rebuilds"
            allowed -= syscall_set(value[1:])
        else:
            allowed = (allowed or set()) | syscall_set(value)
    assert allowed, "the unit has no SystemCallFilter= allow list"
    families = [getattr(socket, name) for name in
                " ".join(service.get("RestrictAddressFamilies", [])).split()]
    return {
        "allowed": sorted(allowed),
        "errno": getattr(errno, service.get("SystemCallErrorNumber", ["EPERM"])[-1]),
        "families": sorted(int(f) for f in families),
        "mdwe": service.get("MemoryDenyWriteExecute") == ["yes"],
        "umask": int(service.get("UMask", ["0022"])[-1], 8),
        "no_caps": service.get("CapabilityBoundingSet") == [""],
        "read_only": service.get("ProtectSystem") == ["strict"],
        "private_network": service.get("PrivateNetwork") == ["yes"],
        "proc": service.get("ProtectProc") == ["invisible"]
        and service.get("ProcSubset") == ["pid"],
    }


def _seccomp() -> Any:
    try:
        lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    except OSError:
        pytest.fail(f"libseccomp.so.2 is missing: {INSTALL}.", pytrace=False)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                           ctypes.c_uint, ctypes.POINTER(_Cmp)]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    return lib


def _filters(cfg: dict[str, Any]) -> list[Any]:
    """seccomp filters as systemd builds them: the allow list, MDWE, address families."""
    lib = _seccomp()

    def rule(ctx: Any, action: int, name: str, *cmps: _Cmp) -> None:
        number = lib.seccomp_syscall_resolve_name(name.encode())
        if number < 0:  # not a system call on this architecture
            return
        array = (_Cmp * max(1, len(cmps)))(*cmps)
        if lib.seccomp_rule_add_array(ctx, action, number, len(cmps), array) < 0:
            raise OSError(f"seccomp rule for {name}")

    filters = []
    allow_list = lib.seccomp_init(_errno_action(cfg["errno"]))
    for name in cfg["allowed"]:
        rule(allow_list, SCMP_ACT_ALLOW, name)
    filters.append(allow_list)
    deny = _errno_action(errno.EPERM)
    if cfg["mdwe"]:
        mdwe = lib.seccomp_init(SCMP_ACT_ALLOW)
        wx, x = mmap.PROT_WRITE | mmap.PROT_EXEC, mmap.PROT_EXEC
        rule(mdwe, deny, "mmap", _Cmp(2, SCMP_CMP_MASKED_EQ, wx, wx))
        rule(mdwe, deny, "mprotect", _Cmp(2, SCMP_CMP_MASKED_EQ, x, x))
        rule(mdwe, deny, "pkey_mprotect", _Cmp(2, SCMP_CMP_MASKED_EQ, x, x))
        rule(mdwe, deny, "shmat", _Cmp(2, SCMP_CMP_MASKED_EQ, SHM_EXEC, SHM_EXEC))
        filters.append(mdwe)
    if cfg["families"]:
        families = lib.seccomp_init(SCMP_ACT_ALLOW)
        refuse = _errno_action(errno.EAFNOSUPPORT)
        top = max(cfg["families"])
        for family in range(top):
            if family not in cfg["families"]:
                rule(families, refuse, "socket", _Cmp(0, SCMP_CMP_EQ, family, 0))
        rule(families, refuse, "socket", _Cmp(0, SCMP_CMP_GT, top, 0))
        filters.append(families)
    return filters


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _best_effort(what: str, step: Any) -> None:
    """Namespaces and capabilities need root with CAP_SYS_ADMIN/CAP_SETPCAP (not in every
    container): without them the step is left out, and said so, rather than failing."""
    try:
        step()
    except OSError as e:
        print(f"sandbox: {what} left out: {e}", file=sys.stderr, flush=True)


def sandboxed_exec(cfg: dict[str, Any], argv: list[str]) -> None:
    """Apply the sandbox to this process, then become the server (same pid, as systemd)."""
    libc = ctypes.CDLL(None, use_errno=True)
    last_cap = int(Path("/proc/sys/kernel/cap_last_cap").read_text())  # before /proc shrinks

    def private_network() -> None:
        _check(libc.unshare(CLONE_NEWNET), "unshare the network")

    def private_mounts() -> None:
        _check(libc.unshare(CLONE_NEWNS), "unshare the mounts")
        _check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "private /")
        if cfg["proc"]:
            _check(libc.mount(b"proc", b"/proc", b"proc", 0,
                              b"hidepid=invisible,subset=pid"), "mount /proc")
        if cfg["read_only"]:
            _check(libc.mount(None, b"/", None, MS_REMOUNT | MS_BIND | MS_RDONLY, None),
                   "read-only /")

    def no_capabilities() -> None:
        for cap in range(last_cap + 1):
            _check(libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), "drop capability")

    if os.geteuid() == 0:  # otherwise there are no capabilities to drop or use
        if cfg["private_network"]:
            _best_effort("PrivateNetwork=", private_network)
        if cfg["read_only"] or cfg["proc"]:
            _best_effort("ProtectSystem=/ProtectProc=/ProcSubset=", private_mounts)
        if cfg["no_caps"]:
            _best_effort("CapabilityBoundingSet=", no_capabilities)
    os.umask(cfg["umask"])
    fd = cfg.get("fd")
    if fd is not None and fd != 3:
        os.dup2(fd, 3)
        os.close(fd)
    filters = _filters(cfg)
    lib = _seccomp()
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    for ctx in reversed(filters):  # the allow list last: it forbids loading more filters
        if lib.seccomp_load(ctx) < 0:
            raise OSError("seccomp_load")
    env = dict(os.environ)
    if fd is not None:
        env.update(LISTEN_PID=str(os.getpid()), LISTEN_FDS="1",
                   LISTEN_FDNAMES="pisyedili.socket")
    os.execve(argv[0], argv, env)


@pytest.fixture
def sandboxed() -> Iterator[Any]:
    procs: list[subprocess.Popen[str]] = []

    def start(cfg: dict[str, Any], args: list[str],
              listener: socket.socket | None = None) -> tuple[subprocess.Popen[str], Output]:
        server = shutil.which("pisyedili-server", path=str(Path(sys.executable).parent))
        assert server, "pisyedili-server is not installed next to this Python"
        fds: tuple[int, ...] = ()
        if listener is not None:
            cfg = {**cfg, "fd": listener.fileno()}
            fds = (listener.fileno(),)
        proc = subprocess.Popen(
            [sys.executable, __file__, json.dumps(cfg), server, *args],
            pass_fds=fds, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, encoding="utf-8",
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        procs.append(proc)
        assert proc.stdout is not None
        from process_output import Output

        return proc, Output(proc.stdout)

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def hello(host: str, port: int) -> dict[str, Any]:
    from pisyedili.protocol.codec import decode, frame
    from pisyedili.protocol.limits import SERVER_FRAME_LIMITS
    from pisyedili.protocol.version import PROTOCOL_VERSION

    with socket.create_connection((host, port), timeout=BACKSTOP) as sock:
        sock.sendall(frame({"type": "hello", "protocol": PROTOCOL_VERSION, "name": "ann",
                            "id": 1}))
        (size,) = struct.unpack(">I", sock.recv(4, socket.MSG_WAITALL))
        return decode(sock.recv(size, socket.MSG_WAITALL), SERVER_FRAME_LIMITS)


def dual_stack_listener(backlog: int) -> socket.socket:
    """The socket pisyedili.socket makes ([::], BindIPv6Only=both), on a free port."""
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    listener = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    try:
        listener.bind(("::", 0))
    except OSError as e:
        listener.close()
        pytest.skip(f"cannot bind an IPv6 socket here: {e}")
    listener.listen(backlog)
    return listener


def test_the_server_serves_ipv4_and_ipv6_under_the_units_sandbox(sandboxed: Any) -> None:
    service, sock = units(SERVICE), units(SOCKET)
    cfg = sandbox_of(service)
    [command] = service["ExecStart"]
    listener = dual_stack_listener(int(sock.get("Backlog", ["128"])[0]))
    port = listener.getsockname()[1]
    with listener:  # the server has its own copy
        proc, out = sandboxed(cfg, shlex.split(command)[1:], listener)
    out.wait_for(r"listening on systemd:domain=INET6:index=0")
    assert hello("127.0.0.1", port)["type"] == "welcome"
    assert hello("::1", port)["type"] == "welcome"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=BACKSTOP) == 0, out.rest()
    log = out.rest()
    assert "127.0.0.1 welcomed" in log  # IPv4 clients keep their own address
    assert "Traceback" not in log and "Unhandled" not in log, log


@pytest.mark.parametrize("mdwe", [False, True], ids=["MDWE-off", "MDWE-on"])
def test_tls_in_the_server_needs_memory_deny_write_execute_off(sandboxed: Any,
                                                               mdwe: bool) -> None:
    """What docs/operating.md says of an `ssl:` endpoint: with the TLS drop-in
    (MemoryDenyWriteExecute=no, PrivateNetwork=no) it serves; with MDWE on, every
    handshake fails, because pyOpenSSL registers callbacks (ALPN) with cffi's
    `ffi.callback`, which needs writable+executable memory. If the MDWE-on case starts
    passing, TLS works under MDWE: update the docs and the unit's comment."""
    pem = Path(__import__("twisted").__file__).parent / "test" / "server.pem"  # type: ignore[arg-type]
    assert pem.exists(), pem
    cfg = {**sandbox_of(units(SERVICE)), "mdwe": mdwe, "private_network": False}
    proc, out = sandboxed(cfg, ["--listen", f"ssl:0:interface=127.0.0.1:privateKey={pem}"])
    out.wait_for(r"listening on ssl:")
    port = int(re.findall(r"port=(\d+)", out.text)[-1])
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=BACKSTOP) as raw:
        if mdwe:
            with pytest.raises((ssl.SSLError, ConnectionError)):
                context.wrap_socket(raw).close()
        else:
            with context.wrap_socket(raw) as tls:
                assert tls.version() is not None
    if mdwe:
        out.wait_for(r"Cannot allocate write\+execute memory for ffi\.callback")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=BACKSTOP) == 0
    if not mdwe:
        log = out.rest()
        assert "Traceback" not in log and "Unhandled" not in log, log


if __name__ == "__main__":
    sandboxed_exec(json.loads(sys.argv[1]), sys.argv[2:])
