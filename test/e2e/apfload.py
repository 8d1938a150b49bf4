"""apfload -- a load generator for API Priority and Fairness: threads
that LIST a path as fast as the API server answers, each thread as one
of several users (bearer tokens), and count the answers by status.

    python3 apfload.py SERVER CA_FILE PATH THREADS TOKEN...

It prints one line per second, "t=S 200=N 429=M ...", and runs until
killed.  Used by test_throttle.py (make chaos); Python 3.11 standard
library only."""

import collections
import http.client
import ssl
import sys
import threading
import time
import urllib.parse


def worker(url, ctx, path, token, counts, lock):
    u = urllib.parse.urlsplit(url)
    conn = None
    while True:
        try:
            if conn is None:
                conn = http.client.HTTPSConnection(u.hostname, u.port,
                                                   context=ctx, timeout=30)
            conn.request("GET", path, headers={
                "Authorization": "Bearer " + token,
                "Accept": "application/json"})
            r = conn.getresponse()
            r.read()
            code = str(r.status)
            if r.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = None
        except (OSError, http.client.HTTPException):
            code = "error"
            if conn is not None:
                conn.close()
            conn = None
            time.sleep(0.05)
        with lock:
            counts[code] += 1


def main():
    url, ca, path, threads = sys.argv[1:5]
    tokens = sys.argv[5:]
    ctx = ssl.create_default_context(cafile=ca)
    counts = collections.Counter()
    lock = threading.Lock()
    for i in range(int(threads)):
        threading.Thread(target=worker, daemon=True,
                         args=(url, ctx, path, tokens[i % len(tokens)],
                               counts, lock)).start()
    t0 = time.monotonic()
    while True:
        time.sleep(1.0)
        with lock:
            c, _ = dict(counts), counts.clear()
        print("t=%.0f %s" % (time.monotonic() - t0, " ".join(
            "%s=%d" % kv for kv in sorted(c.items()))), flush=True)


if __name__ == "__main__":
    main()
