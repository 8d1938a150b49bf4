"""podapp -- the application in a chaos row's "pod": it asks its
leaderd's /leader over the unix socket every INTERVAL seconds and
appends one line per answer to OUT: "t0 t1 answer", t0 and t1 the
CLOCK_MONOTONIC seconds before the request and after the answer (the
clock leaderd and the tests share), answer "true", "false" or "none"
(no answer).  It is frozen and thawed with its leaderd.

    python3 podapp.py SOCKET OUT [INTERVAL]

Python 3.11 standard library only."""

import json
import socket
import sys
import time


def ask(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2.0)
    try:
        s.connect(path)
        s.sendall(b"GET /leader HTTP/1.1\r\nHost: localhost\r\n"
                  b"Connection: close\r\n\r\n")
        buf = b""
        while True:
            d = s.recv(65536)
            if not d:
                break
            buf += d
        head, _, body = buf.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            return "none"
        return "true" if json.loads(body).get("is_leader") is True \
            else "false"
    except (OSError, ValueError):
        return "none"
    finally:
        s.close()


def main():
    path, out = sys.argv[1], sys.argv[2]
    interval = float(sys.argv[3]) if len(sys.argv) > 3 else 0.05
    with open(out, "a", buffering=1) as f:
        while True:
            t0 = time.monotonic()
            a = ask(path)
            f.write("%.6f %.6f %s\n" % (t0, time.monotonic(), a))
            time.sleep(interval)


if __name__ == "__main__":
    main()
