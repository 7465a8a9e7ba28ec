#!/usr/bin/env python3
"""Drives newsboat on a pseudo-terminal, as a person at its keyboard would.

Usage: newsboat_keys.py HOME CONFIG CACHE URLS KEYS...

Each KEYS argument is sent after the screen has settled for a moment: `A` marks the
selected feed read, `\\r` opens it, `\\x05` (Ctrl-E) edits an article's flags. newsboat
pushes each of these to its server through the Google Reader API (FeedHQ mode).
"""
import os
import pty
import select
import sys
import time

home, config, cache, urls, *keys = sys.argv[1:]
pid, fd = pty.fork()
if pid == 0:
    os.environ.update({"TERM": "xterm", "HOME": home, "LANG": "C.UTF-8"})
    os.execvp("newsboat", ["newsboat", "-C", config, "-c", cache, "-u", urls])


def settle(seconds):
    end = time.time() + seconds
    while time.time() < end:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                os.read(fd, 65536)
            except OSError:
                return


settle(3)
for key in keys:
    os.write(fd, key.encode().decode("unicode_escape").encode())
    settle(1.5)
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
