"""A well-behaved test bot with a known pace, on raw asyncio (cheap per request, so a
single process keeps up with hundreds of requests in flight).

    python tests/bots/steady.py --port P [--delay-ms D] [--slow-first N --slow-ms S]
                                [--exclusive] [--illegal]

It plays the first legal action of every ``act`` after ``--delay-ms`` (the first
``--slow-first`` acts after ``--slow-ms`` instead). ``--exclusive``: a bot that can think
about one position at a time; an ``act`` arriving while another is being thought about
gets HTTP 503. ``--illegal``: every answer is an action that is not legal.
``GET /stats`` returns what it saw: acts, most acts in flight at once,
503s sent, and every ``time_bank_ms`` it was sent.
"""

from __future__ import annotations

import argparse
import asyncio
import json

STATS = {"acts": 0, "max_in_flight": 0, "refused": 0, "banks": []}
IN_FLIGHT = 0


async def answer(body: bytes, args: argparse.Namespace) -> tuple[int, bytes]:
    """Status and body for one POST."""
    global IN_FLIGHT
    msg = json.loads(body)
    if msg.get("type") != "act":
        return 200, b"{}"
    if args.exclusive and IN_FLIGHT > 0:
        STATS["refused"] += 1
        return 503, b'{"error": "busy"}'
    IN_FLIGHT += 1
    STATS["max_in_flight"] = max(STATS["max_in_flight"], IN_FLIGHT)
    try:
        STATS["acts"] += 1
        if "time_bank_ms" in msg:
            STATS["banks"].append(msg["time_bank_ms"])
        slow = STATS["acts"] <= args.slow_first
        await asyncio.sleep((args.slow_ms if slow else args.delay_ms) / 1000.0)
        action = {"not": "legal"} if args.illegal else msg["legal"][0]
        return 200, json.dumps({"action": action}).encode()
    finally:
        IN_FLIGHT -= 1


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, args: argparse.Namespace) -> None:
    """One keep-alive connection."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method = lines[0].split(" ", 1)[0]
            length = 0
            for line in lines[1:]:
                if line.lower().startswith("content-length:"):
                    length = int(line.split(":", 1)[1])
            body = await reader.readexactly(length) if length else b""
            if method == "GET":
                status, out = 200, json.dumps(STATS).encode()
            else:
                status, out = await answer(body, args)
            reason = {200: "OK", 503: "Service Unavailable"}[status]
            writer.write(
                f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(out)}\r\n\r\n".encode()
                + out
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--delay-ms", type=float, default=0.0)
    p.add_argument("--slow-first", type=int, default=0)
    p.add_argument("--slow-ms", type=float, default=0.0)
    p.add_argument("--exclusive", action="store_true")
    p.add_argument("--illegal", action="store_true")
    args = p.parse_args()
    server = await asyncio.start_server(lambda r, w: serve(r, w, args), "127.0.0.1", args.port, backlog=1024)
    print(f"steady bot on 127.0.0.1:{args.port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
