"""Timings and helpers shared by the fault tests.

Timings (harness.py): lease_duration 3s, renew_deadline 2s, retry_period
500ms, request_timeout 1s.  A follower polls every retry_period x
[1, 2.2); it takes a lease over at local observation + lease_duration.
"""

import json
import signal
import socket
import time

from checker import assert_terms, good_writes  # noqa: F401
NS = "default"
from harness import (LEASE_DURATION as LD, RENEW_DEADLINE as RD,  # noqa: F401
                     RETRY_PERIOD as RP, REQUEST_TIMEOUT as RT,
                     read_http_response, wait_until)

JITTER = 2.2            # follower poll interval: RP x [1, 2.2)
SLACK = 1.0             # scheduling, request latency, checker lag
START = 2.0             # process start-up and first acquisition
POLL = JITTER * RP      # longest follower poll interval
FAILOVER = LD + POLL + SLACK    # kill -9 -> new leader (F1 bound)
PUT_BYTES = 700         # a lease PUT is ~900 TLS payload bytes, a GET ~200


def start_group(cluster, n, prefix="ld", checker=True, **kw):
    ins = cluster.start_n(n, prefix=prefix, **kw)
    chk = cluster.checker(ins) if checker else None
    leader = cluster.wait_single_leader(POLL + START + 2.0, ins)
    return ins, chk, leader


def renew_bytes(inst):
    """The TLS payload size of the steady leader inst's renew PUTs, as its
    proxy saw them, less 60 bytes: a threshold that catches a renew or
    the release (a little larger) but not an Event POST (~150 bytes
    smaller) nor a GET."""
    sizes = [e[3] for e in inst.proxy.events_of("answer")][-2:]
    assert sizes and min(sizes) >= PUT_BYTES, sizes
    return min(sizes) - 60


def last_write(inst):
    ws = inst.writes()
    return max(ws, key=lambda w: w["t"]) if ws else None


def assert_waited_ld(s, old):
    """s, a first claim by a new leader, comes no sooner than LD after the
    last write of old (the holder it took over from) arrived: a follower
    never takes a live lease.  The message shows old's last renewTimes."""
    lw = last_write(old)
    assert s[1] >= lw["t"] + LD, (
        "%s took the lease %.2fs after %s's last write (< LD %.0fs); %s's "
        "last renewTimes: %s" % (s[2], s[1] - lw["t"], old.name, LD,
                                 old.name, [w["spec"]["renewTime"]
                                            for w in old.writes()[-4:]]))


def wait_takeover(chk, since, exclude, timeout):
    return wait_until(lambda: chk.takeover(since, exclude), timeout,
                      what="a new leader (not %s)" % ", ".join(exclude))


def settle(seconds):
    time.sleep(seconds)


def terms_ok(cluster, allow_admin=True):
    return assert_terms(cluster.api, NS, cluster.lock, LD,
                        allow_admin=allow_admin)


def requests_of(api, inst, since=None, method=None):
    return api.requests(token=inst.token, since=since, method=method)


def lease_spec(cluster):
    lease = cluster.lease()
    return lease["spec"] if lease else None


def stopped_past_lease(cluster, ins, chk, old, before_cont=None,
                       after_answer=None, stop=None, cont=None):
    """Stop the leader old (SIGSTOP; or stop()) for LD + 1.5s, then go on
    (SIGCONT; or cont()), while a follower takes
    over, queue a /leader request meanwhile, run before_cont() just before
    SIGCONT (a suspend's clock, say), and return (took, new, answer,
    t_follow): the takeover's time after the stop, the new leader, the
    queued request's answer (the first after SIGCONT) and how long the
    resumed leader took to follow the new one.  Checks on the way the
    bounds F3 and F40 share: the takeover within FAILOVER and not before
    LD after the last renew, no sample claiming after SIGCONT, S1, the
    terms, every claim backed by a renew.  after_answer() runs once the
    queued answer is in."""
    chk.pause(old.name)
    t_stop = time.monotonic()
    if stop is None:
        old.signal(signal.SIGSTOP)
    else:
        stop()
    s = wait_takeover(chk, t_stop, [old.name], FAILOVER + 1.0)
    took = s[1] - t_stop
    assert took <= FAILOVER
    assert_waited_ld(s, old)
    new = [i for i in ins if i.name == s[2]][0]
    time.sleep(max(0.0, t_stop + LD + 1.5 - time.monotonic()))
    q = socket.create_connection(("127.0.0.1", old.port), timeout=2.0)
    q.sendall(b"GET /leader HTTP/1.1\r\nHost: localhost\r\n"
              b"Connection: close\r\n\r\n")
    if before_cont is not None:
        before_cont(t_stop)
    t_cont = time.monotonic()
    if cont is None:
        old.signal(signal.SIGCONT)
    else:
        cont()
    chk.resume(old.name)
    st, _, body, _ = read_http_response(q, timeout=2.0)
    q.close()
    answer = json.loads(body) if st == 200 else {"status": st}
    if after_answer is not None:
        after_answer()
    assert answer.get("is_leader") is False, \
        "first answer after SIGCONT: %s" % answer
    wait_until(lambda: (v := old.leader()) and v["name"] == new.identity
               and v["state"] == "follower", POLL + SLACK,
               what="the resumed leader to follow %s" % new.name)
    t_follow = time.monotonic() - t_cont
    # With the watch the resumed leader may follow before the checker has
    # sampled it at all: judge the samples of the next 2 x RP too.
    time.sleep(2 * RP)
    after = chk.window(old.name, since=t_cont)
    assert after and not any(x[3] for x in after), \
        "claimed after SIGCONT: %s" % [x for x in after if x[3]][:2]
    chk.assert_s1()
    terms_ok(cluster)
    for i in ins:
        chk.assert_backed(i, RD)
    return took, new, answer, t_follow
