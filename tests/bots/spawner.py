"""A 6 nimmt! bot (a real HTTP server, lowest legal card) that first starts a child of
its own, a sleeping Python process: the grandchild of the referee's guard, which must
not outlive the referee either. It prints ``spawner: pid P sleeper S`` on start."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from sample_bots._server import serve


def main() -> None:
    port = int(sys.argv[sys.argv.index("--port") + 1])
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    print(f"spawner: pid {os.getpid()} sleeper {sleeper.pid}", flush=True)

    def act(message: dict[str, Any]) -> dict[str, Any]:
        return {"action": message["legal"][0]}

    serve(act, port)


if __name__ == "__main__":
    main()
