#!/usr/bin/env python3
"""The command the run-mode tests give `leaderd run`: it appends what it
does to a marker file, one line per event, "<pid> <event> <monotonic
time> [details]", with time.monotonic() (CLOCK_MONOTONIC, comparable
between processes on one machine).  While it lives it writes a "beat"
every 10 ms, so a process killed with SIGKILL still leaves its last
moment of life in the file.

    runchild.py MARKER [--ignore-term] [--grandchildren N]
                [--grandchildren-ignore-term] [--exit-after S] [--code C]
                [--print TEXT]
"""

import argparse
import os
import signal
import sys
import time

BEAT_S = 0.01


def mark(path, event, extra=""):
    line = "%d %s %.6f %s\n" % (os.getpid(), event, time.monotonic(), extra)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def live(path, ignore_term, exit_after=None, code=0):
    def on_term(signum, frame):
        mark(path, "term")
        if not ignore_term:
            mark(path, "stop")
            os._exit(0)
    signal.signal(signal.SIGTERM, on_term)
    end = None if exit_after is None else time.monotonic() + exit_after
    while end is None or time.monotonic() < end:
        mark(path, "beat")
        time.sleep(BEAT_S)
    mark(path, "exit", str(code))
    os._exit(code)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("marker")
    ap.add_argument("--ignore-term", action="store_true")
    ap.add_argument("--grandchildren", type=int, default=0)
    ap.add_argument("--grandchildren-ignore-term", action="store_true")
    ap.add_argument("--exit-after", type=float, default=None)
    ap.add_argument("--code", type=int, default=0)
    ap.add_argument("--print", default=None)
    a = ap.parse_args()
    env = " ".join("%s=%s" % (k, os.environ.get(k, "")) for k in
                   ("LEADERD_IDENTITY", "LEADERD_FENCING_TOKEN",
                    "LEADERD_LEASE"))
    socks = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            socks += os.readlink("/proc/self/fd/" + fd).startswith("socket:")
        except OSError:
            pass
    mark(a.marker, "start", "pgid=%d ppid=%d sockets=%d %s"
         % (os.getpgid(0), os.getppid(), socks, env))
    if a.print is not None:
        print(a.print, flush=True)
        print(a.print + " (stderr)", file=sys.stderr, flush=True)
    for _ in range(a.grandchildren):
        if os.fork() == 0:
            mark(a.marker, "grandchild", "pgid=%d" % os.getpgid(0))
            live(a.marker, a.grandchildren_ignore_term)
    live(a.marker, a.ignore_term, a.exit_after, a.code)


if __name__ == "__main__":
    main()
