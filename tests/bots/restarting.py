"""A 6 nimmt! bot (a real HTTP server) that crashes once and is slow to come back, as a
JVM is: it exits on its ``N``-th act of its first life, and every later start waits
``--startup-ms`` before it listens.

    python tests/bots/restarting.py N --startup-ms 800 --port P

Its first crash leaves ``crashed-once`` in its working folder (its private home, kept
across restarts), so it crashes only once.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from sample_bots._server import serve

MARK = Path("crashed-once")
count = 0
lock = threading.Lock()


def main() -> None:
    crash_at = int(sys.argv[1])
    port = int(sys.argv[sys.argv.index("--port") + 1])
    startup_s = int(sys.argv[sys.argv.index("--startup-ms") + 1]) / 1000
    restarted = MARK.exists()
    if restarted:
        time.sleep(startup_s)

    def act(message: dict[str, Any]) -> dict[str, Any]:
        global count
        with lock:
            count += 1
            if not restarted and count == crash_at:
                MARK.write_text("x")
                os._exit(3)
        return {"action": message["legal"][0]}

    serve(act, port)


if __name__ == "__main__":
    main()
