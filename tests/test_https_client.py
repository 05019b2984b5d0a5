"""The libraries only some commands need are imported when first needed: httpx (https://
bots) and ``scipy.special`` (the intervals of a publication). The CLI starts in every test
run and on every organiser's command, so its imports are its start-up cost; these tests
hold that line and check that the lazy paths still work."""

from __future__ import annotations

import asyncio
import datetime
import http.server
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from referee.bots.client import wire
from referee.record import ERROR
from tests.support.cli import ROOT
from tests.support.localbots import serving

pytestmark = pytest.mark.parallel


def test_the_cli_starts_without_httpx_or_scipy() -> None:
    code = "import sys, referee.cli.main; print(sorted(m for m in ('httpx', 'scipy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_t_quantile_is_scipys_once_imported() -> None:
    from referee.stats.student import student_t

    # scipy.stats.t.ppf's own values, to the bit (importing scipy.stats here costs seconds)
    assert student_t.ppf(0.975, 7) == 2.364624251592784
    assert student_t.ppf(0.995, 30) == 2.7499956535672254


def _self_signed(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file


class _Echo(http.server.BaseHTTPRequestHandler):
    answered: list[bytes] = []  # noqa: RUF012 (the test reads what reached the bot)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.answered.append(body)
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def tls_bot(tmp_path: Path) -> Iterator[str]:
    """An https:// bot on 127.0.0.1 with a self-signed certificate."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*_self_signed(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    with serving(server, "https") as url:
        yield url


def test_an_https_bot_goes_through_httpx_and_a_self_signed_certificate_is_an_error(tls_bot: str) -> None:
    async def go() -> wire.Exchange:
        client = wire.new_client(1)
        try:
            return await wire.post(client, wire.Endpoint.make("bot", tls_bot, None), b"{}", 30000, 1024)
        finally:
            await client.aclose()

    _Echo.answered.clear()
    exchange = asyncio.run(go())
    assert exchange.fault == ERROR and "certificate" in exchange.detail.lower(), exchange
    assert _Echo.answered == []  # nothing was sent to a bot whose certificate no one vouches for
