"""Nobody but the run can talk to its Dask cluster. The ``LocalCluster`` of ``workers = N``
speaks TLS with credentials made for the run; ``--cluster tls://`` plays through a real
``dask scheduler`` and ``dask worker`` started with certificate files this test makes on
disk (a CA of its own, one certificate each for scheduler, worker and referee). In both,
an attacker on the machine (plain TCP, a certificate of another CA, no certificate at
all) reaches neither the scheduler nor a worker, so it cannot run code there, while the
same probe with the run's credentials is answered. A ``tcp://`` address prints a warning;
a ``tls://`` one without certificate files is one clear error."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import logging
import os
import socket
import ssl
import subprocess
import sys
import threading
import tomllib
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from distributed import Client
from distributed.comm import connect
from distributed.security import Security

from referee.bots.cage.process import free_port
from referee.config.parse import parse_config
from referee.errors import ClusterError
from referee.run import security
from referee.run.cluster import DaskExecutor
from referee.run.dq import DqJudge
from referee.schedule.formats import schedule
from tests.support.cli import ROOT, referee, run_here
from tests.support.cluster import DASK, assert_same_outputs, config_text, indices, run, serve_url_bot, stop_process
from tests.support.tournament import wait_port

pytestmark = pytest.mark.parallel

Certs = dict[str, Path]  # role -> PEM file: "ca", "<role>.pem", "<role>.key"


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_certs(folder: Path, roles: list[str]) -> Certs:
    """A CA and a certificate and key signed by it for each role, as PEM files in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())

    def cert(cn: str, key: ec.EllipticCurvePrivateKey, ca: bool) -> x509.Certificate:
        return (
            x509.CertificateBuilder()
            .subject_name(_name(cn))
            .issuer_name(_name(f"{folder.name}-ca"))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256())
        )

    out = {"ca": folder / "ca.pem"}
    out["ca"].write_bytes(cert(f"{folder.name}-ca", ca_key, True).public_bytes(serialization.Encoding.PEM))
    for role in roles:
        key = ec.generate_private_key(ec.SECP256R1())
        out[f"{role}.pem"] = folder / f"{role}.pem"
        out[f"{role}.key"] = folder / f"{role}.key"
        out[f"{role}.pem"].write_bytes(cert(role, key, False).public_bytes(serialization.Encoding.PEM))
        pkcs8 = serialization.PrivateFormat.PKCS8
        key_pem = key.private_bytes(serialization.Encoding.PEM, pkcs8, serialization.NoEncryption())
        out[f"{role}.key"].write_bytes(key_pem)
    return out


def any_server(cert: tuple[Path, Path] | None) -> ssl.SSLContext:
    """An attacker's TLS context: trusts any server, shows ``cert`` (or none)."""
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if cert is not None:
        ctx.load_cert_chain(*cert)
    return ctx


def http_status(url: str) -> int:
    """The HTTP status of a GET of ``url``."""
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return exc.code


async def answers(address: str, ctx: ssl.SSLContext | None) -> bool:
    """Whether the Dask server at ``address`` answers an ``identity`` request over ``ctx``."""
    args: dict[str, Any] = {} if ctx is None else {"ssl_context": ctx, "require_encryption": True}
    try:
        comm = await connect(address, timeout=2, **args)
    except (OSError, TimeoutError):
        return False
    try:
        await comm.write({"op": "identity"})
        return isinstance(await asyncio.wait_for(comm.read(), 5), dict)
    except (OSError, TimeoutError):
        return False
    finally:
        comm.abort()


async def assert_only_the_run_gets_in(addresses: list[str], run_ctx: ssl.SSLContext, rogue: Certs) -> None:
    """Every address is TLS, answers the run's credentials and nobody else's; the rogue
    credentials cannot start a client either (a client is how code is sent to run)."""
    rogue_pair = (rogue["attacker.pem"], rogue["attacker.key"])
    for address in addresses:
        assert address.startswith("tls://"), address
        assert await answers(address, run_ctx), address  # the probe works with the run's credentials
        assert not await answers(address.replace("tls://", "tcp://"), None), address
        assert not await answers(address, any_server(None)), address  # TLS without a certificate
        assert not await answers(address, any_server(rogue_pair)), address  # a certificate of another CA
    rogue_security = Security(
        tls_ca_file=str(rogue["ca"]), tls_client_cert=str(rogue_pair[0]), tls_client_key=str(rogue_pair[1])
    )
    with pytest.raises((OSError, TimeoutError)):
        await Client(addresses[0], security=rogue_security, asynchronous=True, timeout=3)
    with pytest.raises((OSError, TimeoutError)):
        await Client(addresses[0], security=Security.temporary(), asynchronous=True, timeout=3)


class _Collect:
    """A sink that keeps the records (the journal is another test's)."""

    def __init__(self, into: list[Any]) -> None:
        self.into = into

    def accept(self, fixture: Any, rec: Any) -> None:
        self.into.append(rec)


def test_the_local_cluster_of_a_run_answers_only_the_run(tmp_path: Path) -> None:
    rogue = make_certs(tmp_path / "rogue", ["attacker"])
    with serve_url_bot() as url:
        # one worker shows every kind of server (scheduler, nanny, worker): each worker is made alike
        text = config_text(tmp_path / "out", url, rounds=1, extra="workers = 1")
        cfg = parse_config(tomllib.loads(text), tmp_path / "t.toml", {})

        async def main() -> list[Any]:
            async with DaskExecutor(cfg) as ex:
                assert ex.cluster is not None and ex.client is not None
                info = await ex.client.scheduler.identity()
                workers = list(info["workers"])
                nannies = [w["nanny"] for w in info["workers"].values()]
                assert len(workers) == 1 and len(nannies) == 1
                run_ctx = ex.cluster.security.get_connection_args("client")["ssl_context"]
                await assert_only_the_run_gets_in([ex.cluster.scheduler_address, *workers, *nannies], run_ctx, rogue)
                # the HTTP servers Dask always starts (plain HTTP) serve no page
                ports = [info["services"]["dashboard"], *(w["services"]["dashboard"] for w in info["workers"].values())]
                for port in ports:
                    for path in ("/json/identity.json", "/info/main/workers.html", "/health", "/metrics", "/status"):
                        assert await asyncio.to_thread(http_status, f"http://127.0.0.1:{port}{path}") == 404
                # and the run plays through it: the bots' plugin, the leases of max_concurrent, the events
                fixtures = schedule(cfg)
                await ex.use(cfg, DqJudge(cfg, fixtures.total))
                played: list[Any] = []
                await ex.play(iter(fixtures), _Collect(played))  # type: ignore[arg-type]
                return played

        records = asyncio.run(main())
    assert sorted(r.index for r in records) == list(range(len(schedule(cfg))))
    assert all(not r.faults for r in records)


class TlsCluster:
    """``dask scheduler`` and one ``dask worker`` on 127.0.0.1, TLS with the certificate files in ``certs``."""

    def __init__(self, tmp: Path, certs: Certs) -> None:
        self.tmp, self.certs = tmp, certs
        self.port, self.worker_port = free_port(), free_port()
        self.address = f"tls://127.0.0.1:{self.port}"
        self.worker_address = f"tls://127.0.0.1:{self.worker_port}"
        self.procs: list[subprocess.Popen[bytes]] = []

    def tls(self, role: str) -> list[str]:
        c = self.certs
        return ["--tls-ca-file", str(c["ca"]), "--tls-cert", str(c[f"{role}.pem"]), "--tls-key", str(c[f"{role}.key"])]

    def start(self) -> None:
        argv = [DASK, "scheduler", "--protocol", "tls", "--host", "127.0.0.1", "--port", str(self.port)]
        sched = self._spawn(argv + ["--no-dashboard", *self.tls("scheduler")], "scheduler")
        wait_port(self.port, sched)
        argv = [DASK, "worker", self.address, "--nthreads", "2", "--no-nanny", "--no-dashboard", "--name", "w0"]
        argv += ["--host", "127.0.0.1", "--worker-port", str(self.worker_port)]
        worker = self._spawn(argv + ["--local-directory", str(self.tmp / "w0"), *self.tls("worker")], "worker")
        wait_port(self.worker_port, worker)

    def _spawn(self, argv: list[str], name: str) -> subprocess.Popen[bytes]:
        with open(self.tmp / f"{name}.log", "wb") as log:
            proc = subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(proc)
        return proc

    def client_env(self) -> dict[str, str]:
        """The client's certificate files, in Dask's own environment variables."""
        c = self.certs
        return dict(zip(security.CREDENTIALS, [str(c["ca"]), str(c["client.pem"]), str(c["client.key"])]))

    def stop(self) -> None:
        for p in reversed(self.procs):
            stop_process(p)


@pytest.fixture
def tls_cluster(tmp_path: Path) -> Iterator[TlsCluster]:
    c = TlsCluster(tmp_path, make_certs(tmp_path / "organiser", ["scheduler", "worker", "client"]))
    try:
        c.start()
        yield c
    finally:
        c.stop()


def test_a_tls_cluster_plays_with_the_organisers_certificates_and_no_one_else(
    tmp_path: Path, tls_cluster: TlsCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve_url_bot() as url:
        config = tmp_path / "t.toml"
        config.write_text(config_text(tmp_path / "x", url, rounds=1))
        one = tmp_path / "one"
        run_here(config, one)
        on_tls = tmp_path / "tls"
        # without the certificate files: one line, exit 1, nothing played
        bare = {k: v for k, v in os.environ.items() if not k.startswith("DASK_DISTRIBUTED__COMM__TLS")}
        refused = subprocess.run(
            [sys.executable, "-m", "referee", "run", str(config), "-q", "--output", str(on_tls)]
            + ["--cluster", tls_cluster.address],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            env=bare,
        )
        assert refused.returncode == 1 and "needs the cluster's certificate files" in refused.stderr
        assert "Traceback" not in refused.stderr and not (on_tls / "matches.jsonl").exists()
        # with them: the whole tournament, the outputs of one process
        for name, value in tls_cluster.client_env().items():
            monkeypatch.setenv(name, value)
        done = run(config, on_tls, "--cluster", tls_cluster.address)
        assert "plain TCP" not in done.stderr
    assert sorted(indices(on_tls)) == list(range(len(indices(one))))
    assert_same_outputs(one, on_tls)
    rows = json.loads((on_tls / "standings.json").read_text())["standings"]
    assert all(r["faults"]["total"] == 0 for r in rows)
    assert (on_tls / "logs" / "worker-w0" / "greedy.log").exists()  # played on the TLS worker
    # an attacker on the machine reaches neither the scheduler nor the worker
    c = tls_cluster.certs
    run_security = Security(
        tls_ca_file=str(c["ca"]), tls_client_cert=str(c["client.pem"]), tls_client_key=str(c["client.key"])
    )
    run_ctx = run_security.get_connection_args("client")["ssl_context"]
    rogue = make_certs(tmp_path / "rogue", ["attacker"])
    asyncio.run(assert_only_the_run_gets_in([tls_cluster.address, tls_cluster.worker_address], run_ctx, rogue))


@contextlib.contextmanager
def not_a_scheduler() -> Iterator[str]:
    """A ``tcp://`` address where something listens but no scheduler answers: each
    connection is closed at once. (At a port nobody listens on, Dask tries again until the
    referee's connect timeout, 10 s; a dropped connection fails at once, through the same
    ``except`` of the referee, so the test waits for nothing.)"""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def drop() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                conn, _ = server.accept()
                conn.close()

    thread = threading.Thread(target=drop, daemon=True)
    thread.start()
    port = server.getsockname()[1]
    try:
        yield f"tcp://127.0.0.1:{port}"
    finally:
        stop.set()
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()  # wakes the accept
        thread.join(5)
        server.close()


def test_a_tcp_address_warns_and_a_tls_one_needs_certificates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    for name in security.CREDENTIALS:
        monkeypatch.delenv(name, raising=False)
    with caplog.at_level(logging.WARNING, logger="referee"):
        security.address_security("tcp://127.0.0.1:8786")
    assert [r.getMessage() for r in caplog.records] == [
        "warning: tcp://127.0.0.1:8786 is plain TCP: anyone who can reach that scheduler can run code on its "
        "workers; use tls:// with certificates (docs/scale.md)"
    ]
    with pytest.raises(ClusterError, match="DASK_DISTRIBUTED__COMM__TLS__CA_FILE"):
        security.address_security("tls://127.0.0.1:8786")
    # the real command: the warning is one line of its output, before the failure to connect
    config = tmp_path / "t.toml"
    config.write_text(config_text(tmp_path / "x", "http://127.0.0.1:9/", rounds=1))
    with not_a_scheduler() as address:
        gone = referee("run", str(config), "-q", "--cluster", address, timeout=120)
    # no scheduler answers there: one line, exit 1
    assert gone.returncode == 1 and "Traceback" not in gone.stderr
    assert f"cannot reach the Dask scheduler at {gone.args[-1]}" in gone.stderr
    assert [line for line in gone.stderr.splitlines() if "plain TCP" in line] == [
        f"warning: {gone.args[-1]} is plain TCP: anyone who can reach that scheduler can run code on its workers; "
        "use tls:// with certificates (docs/scale.md)"
    ]
