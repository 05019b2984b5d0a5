"""A transport for tests, like httpx's ``MockTransport``: a handler gives each reply.

``handler(target, body)`` returns ``(status, body)``, or an awaitable of it, or raises
``TransportError``. The rest is the transport's, as on a socket: a handler slower than
the deadline ends in ``DeadlineExceeded``, a body over the cap is cut off (``None``), and
``send_now`` starts the request at once (in a task), so a match takes the path it takes
on idle keep-alive connections.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable

from referee.bots.client.transport import DeadlineExceeded, Reply, Target, Transport

Answer = tuple[int, bytes]
Handler = Callable[[Target, bytes], Answer | Awaitable[Answer]]


class ScriptedTransport(Transport):
    """Every request answered by ``handler`` (see the module doc)."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler

    async def request(self, target: Target, body: bytes, deadline: float, max_bytes: int) -> Reply:
        """The handler's answer to ``body``, by ``deadline``, cut off past ``max_bytes``."""
        try:
            async with asyncio.timeout_at(deadline) as window:
                answer = self.handler(target, body)
                status, data = await answer if inspect.isawaitable(answer) else answer
        except TimeoutError:
            if not window.expired():
                raise
            raise DeadlineExceeded.noticed_now(deadline) from None
        return Reply(status, data if len(data) <= max_bytes else None, time.perf_counter())

    def send_now(self, target: Target, body: bytes, deadline: float, max_bytes: int) -> asyncio.Future[Reply]:
        """The request, started at once; the future of its reply."""
        return asyncio.ensure_future(self.request(target, body, deadline, max_bytes))

    async def aclose(self) -> None:
        """Nothing to close."""
