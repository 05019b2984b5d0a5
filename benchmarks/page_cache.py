"""Benchmark: the bandwidth of the channel the cage leaves open between two bots, the page
cache of a shared read-only file (``python -m benchmarks.page_cache``; needs bubblewrap
and root, as the full cage does).

Two caged bots (a uid, a network and views of their own each) read the same file of
``/usr``. The sender drops every page of it from the page cache (``POSIX_FADV_DONTNEED``,
allowed on any file one can read), then reads the pages of the 1 bits of a message; the
receiver reads one byte of each page and times it: a page in memory comes back fast.
(``mincore`` says "in memory" for every page of a file the caller may not write, and a
view refuses ``RWF_NOWAIT``: the cage closes those two probes.) Both know the time to
start; each prints what it did. The line printed: bits sent, bits wrong, and the bits
per second of one exchange (the sender's and the receiver's time together). Each page
carries one bit per exchange; the sender's ``POSIX_FADV_DONTNEED`` makes it usable again.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

from referee.bots.cage.process import ManagedBot
from referee.bots.cage.sandbox import BotSpec, CageLimits, bwrap_works

SHARED = "/usr/share/doc/nodejs/api/all.html"  # a big file of /usr that nothing maps
ROLE = """
import mmap, os, random, sys, time
THRESHOLD_NS = int(sys.argv[5])
role, path, at, bits = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
page = mmap.PAGESIZE
rng = random.Random(7)
message = [rng.getrandbits(1) for _ in range(bits)]
fd = os.open(path, os.O_RDONLY)
time.sleep(max(0.0, at - time.time()))
t0 = time.perf_counter()
if role == "send":
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # no read-ahead: one page per 1 bit
    for i, bit in enumerate(message):
        if bit:
            os.pread(fd, 1, i * page)
    print(f"CHANNEL send {time.perf_counter() - t0:.6f}", flush=True)
else:
    time.sleep(1.0)
    t0 = time.perf_counter()
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # its probes must not read ahead either
    # mincore answers "in memory" for every page of a file that is not the bot's, and a view
    # refuses RWF_NOWAIT: what is left is the time a read takes (a page from memory is fast)
    took = []
    for i in range(bits):
        t = time.perf_counter_ns()
        os.pread(fd, 1, i * page)
        took.append(time.perf_counter_ns() - t)
    got = [1 if t < THRESHOLD_NS else 0 for t in took]
    wrong = sum(a != b for a, b in zip(got, message))
    print(f"CHANNEL receive {time.perf_counter() - t0:.6f} wrong {wrong} ", flush=True)
time.sleep(30)
"""


def main() -> None:
    """Run the two bots once and print the channel's bandwidth."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bits", type=int, default=1000, help="bits of the message (pages of the file)")
    parser.add_argument(
        "--threshold-ns", type=int, default=20000, help="a read faster than this found the page in memory"
    )
    args = parser.parse_args()
    if not bwrap_works():
        sys.exit("needs bubblewrap")
    size = Path(SHARED).stat().st_size // 4096
    bits = min(args.bits, size)
    at = time.time() + 3
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp)
        bots = []
        for role in ("send", "receive"):
            command = ("python", "-c", ROLE, role, SHARED, f"{at}", str(bits), str(args.threshold_ns), "{port}")
            bot = ManagedBot(BotSpec(role, command, limits=CageLimits(sandbox="bwrap")), logs)
            bot.start()
            bots.append(bot)
        time.sleep(max(0.0, at - time.time()) + 3)
        for bot in bots:
            bot.stop()
        text = "".join((logs / f"{role}.log").read_text() for role in ("send", "receive"))
    send = re.search(r"CHANNEL send ([\d.]+)", text)
    receive = re.search(r"CHANNEL receive ([\d.]+) wrong (\d+)", text)
    if not (send and receive):
        print(f"no exchange:\n{text}")
        return
    seconds = float(send.group(1)) + float(receive.group(1))
    print(
        f"page cache of a shared file: {bits} bits sent, {receive.group(2)} wrong, "
        f"{bits / seconds:,.0f} bits/s in one exchange ({seconds * 1000:.1f} ms)"
    )


if __name__ == "__main__":
    main()
