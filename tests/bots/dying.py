"""A 6 nimmt! bot (a real HTTP server) that plays the lowest card and exits the whole
process after answering N act messages: a bot that crashes mid-run."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

from sample_bots._server import serve

count = 0
lock = threading.Lock()


def main() -> None:
    limit = int(sys.argv[1])
    port = int(sys.argv[sys.argv.index("--port") + 1])

    def act(message: dict[str, Any]) -> dict[str, Any]:
        global count
        with lock:
            count += 1
            if count > limit:
                os._exit(3)
        return {"action": message["legal"][0]}

    serve(act, port)


if __name__ == "__main__":
    main()
