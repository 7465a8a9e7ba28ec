#!/usr/bin/env python3
"""A flood of reconnecting sockets for ServeSoakTests (Tests/EndToEndTests/ServeSoakTests.swift):
SOCKETS clients on 127.0.0.1:PORT, each connecting, sending half a request head, waiting a
moment and closing, again and again for SECONDS. Prints how many connections were made.
Its own process, so the test runner never holds thousands of sockets itself.
Usage: flood.py PORT SOCKETS SECONDS"""
import asyncio, random, resource, sys, time

port, sockets, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, sockets + 256)), hard))
deadline = time.monotonic() + seconds
made = 0


async def client():
    global made
    while time.monotonic() < deadline:
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 2)
            made += 1
            writer.write(b"GET /feed.atom HTTP/1.1\r\nHost: flood\r\n")
            await asyncio.sleep(random.uniform(0.005, 0.15))
            writer.close()
        except Exception:
            await asyncio.sleep(0.02)


async def main():
    await asyncio.gather(*(client() for _ in range(sockets)))


asyncio.run(main())
print(made)
