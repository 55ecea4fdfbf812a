"""A server behind TLS (`--listen ssl:...`) reached with `tls:` from the client's link.

Both sides use only what the README's install brings (Twisted's TLS extras); the
certificate is made here, for `localhost`, and is the only root the client trusts.
"""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path
from typing import Any

import pytest_twisted
from client_kit import Inbox
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from sibling_kit import sibling
from twisted.internet import reactor
from twisted.internet.endpoints import serverFromString

from pisyedili.client.cli import server_endpoint
from pisyedili.client.wire import Link

wireclient = sibling("server", "wireclient")


def make_certificate(folder: Path, host: str = "localhost") -> tuple[Path, Path]:
    """A self-signed certificate for `host` (and, for localhost, 127.0.0.1), with its
    key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    names: list[x509.GeneralName] = [x509.DNSName(host)]
    if host == "localhost":
        names.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_path, cert_path = folder / "key.pem", folder / "roots" / "cert.pem"
    cert_path.parent.mkdir()
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return key_path, cert_path


@pytest_twisted.ensureDeferred
async def test_a_tls_server_is_reached_with_a_tls_endpoint(tmp_path: Path) -> None:
    key, cert = make_certificate(tmp_path)
    server = await wireclient.Server.start()
    listening: Any = await serverFromString(  # type: ignore[no-untyped-call]
        reactor, f"ssl:0:interface=127.0.0.1:privateKey={key}:certKey={cert}",
    ).listen(server.factory)
    port = listening.getHost().port
    inbox = Inbox(reactor, 10.0)
    endpoint = server_endpoint(reactor, f"tls:localhost:{port}:trustRoots={cert.parent}")
    link = Link(endpoint, "Ayşe", inbox, clock=reactor, on_status=inbox.status.append,
                retry=lambda attempt: 0.0)
    link.start()
    try:
        welcome = await inbox.wait_type("welcome")
        assert welcome["name"] == "Ayşe"
        reply = await link.request({"type": "ping"}).addTimeout(10.0, reactor)
        assert reply["type"] == "pong"
    finally:
        await link.stop()
        await listening.stopListening()
        await server.stop()
