"""A 6 nimmt! bot (a raw asyncio HTTP server) that plays the first legal card and, after
answering N act messages, answers nothing more (hello included) while its process stays
alive and keeps its port: a bot hung in an endless loop, not a crashed one."""

from __future__ import annotations

import asyncio
import json
import sys

count = 0
frozen = False


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    global count, frozen
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            message = json.loads(await reader.readexactly(length))
            if message.get("type") == "act":
                count += 1
                frozen = frozen or count > LIMIT
            if frozen:
                await asyncio.sleep(3600)  # hung: never answers again
            reply = {"action": message["legal"][0]} if message.get("type") == "act" else {"ok": True}
            body = json.dumps(reply).encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%b" % (len(body), body)
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()


async def main(port: int) -> None:
    server = await asyncio.start_server(handle, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    LIMIT = int(sys.argv[1])
    asyncio.run(main(int(sys.argv[sys.argv.index("--port") + 1])))
