"""Only the run may talk to its Dask cluster: whoever connects to a scheduler or worker
can run code there (as the worker's user, outside every cage), so its connections are
TLS with a certificate on both sides.

- ``workers = N``: the ``LocalCluster`` uses a key and a self-signed certificate made for
  the run, in memory only (``Security.temporary``); its nannies hand them to its workers.
  Its HTTP servers (plain HTTP, always listening) serve no page.
- ``--cluster tls://``: the organiser's certificate files, from Dask's own configuration
  (``distributed.comm.tls.*``, e.g. ``DASK_DISTRIBUTED__COMM__TLS__CA_FILE``), where
  ``dask scheduler`` and ``dask worker`` can read theirs too.
- ``--cluster tcp://`` still works, with a warning: plain TCP authenticates no one.
"""

from __future__ import annotations

import logging

from distributed.security import Security

from referee.errors import ClusterError

PROTOCOL = "tls://"  # the protocol of the LocalCluster's scheduler, nannies and workers
CREDENTIALS = (  # where Dask reads the organiser's files, as environment variables
    "DASK_DISTRIBUTED__COMM__TLS__CA_FILE",
    "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT",
    "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY",
)
# The LocalCluster's HTTP servers answer 404 to everything (dashboard, /json, /info, metrics).
NO_HTTP_PAGES: dict[str, object] = {"distributed.scheduler.http.routes": [], "distributed.worker.http.routes": []}
log = logging.getLogger("referee")


def run_security() -> Security:
    """TLS credentials made for this run only, kept in memory (the LocalCluster's)."""
    return Security.temporary()


def address_security(address: str) -> Security:
    """The credentials for the scheduler at ``address``, from Dask's configuration.

    A ``tls://`` address without them is a ClusterError naming the settings; a ``tcp://``
    address warns that anyone who reaches the scheduler can run code on it."""
    security = Security()
    if address.startswith(PROTOCOL):
        if not (security.tls_ca_file and security.tls_client_cert):
            raise ClusterError(
                f"{address} needs the cluster's certificate files: set {', '.join(CREDENTIALS)} "
                "(or distributed.comm.tls in Dask's configuration; docs/scale.md)"
            )
    else:
        log.warning(
            f"warning: {address} is plain TCP: anyone who can reach that scheduler can run code on its workers; "
            "use tls:// with certificates (docs/scale.md)"
        )
    return security
