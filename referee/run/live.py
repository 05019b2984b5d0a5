"""Live publishing: the outputs re-rendered from the journal every ``publish_every_s``
seconds while the run goes on (``report.policy.publish_live``)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from referee.config.model import TournamentConfig
from referee.errors import RefereeError
from referee.report.policy import publish_live


class LivePublisher:
    """Publishes every ``publish_every_s`` seconds in a worker thread (rendering reads the
    journal and takes CPU: the event loop keeps serving the bots). A failed publish is a
    warning, never the run's end. ``stop`` waits for a publish in progress, so the final
    publish never races with it."""

    def __init__(self, config: TournamentConfig, scheduled: int, warn: Callable[[str], None] | None) -> None:
        self.config, self.scheduled, self.warn = config, scheduled, warn
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._loop())

    async def _loop(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.config.publish_every_s)
            if not self._stop.is_set():
                await asyncio.to_thread(self._publish)

    def _publish(self) -> None:
        try:
            publish_live(self.config, self.scheduled)
        except (RefereeError, OSError) as exc:
            if self.warn is not None:
                self.warn(f"live publish failed (the run goes on): {exc}")

    async def stop(self) -> None:
        """Stop publishing, after the publish in progress (if any) has finished."""
        self._stop.set()
        await asyncio.shield(self._task)
