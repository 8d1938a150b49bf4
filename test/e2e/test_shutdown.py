"""SIGTERM of a leaderd leader while its renew is held on the way to a
real kube-apiserver (issue 20), with a client-go elector on the Lease.

c-1 (leaderd, behind the fault proxy of test/kit/proxy.py) leads; c-2
(leaderd, watching) and go-1 (client-go) follow.  The proxy holds c-1's
next renew (a PUT, told from a GET by its size) for 3 x request_timeout,
and SIGTERM comes while it is held.  c-1 must abandon the renew, write
the release on a fresh connection and exit 0 within its shutdown budget;
another participant must lead within 1 s of the signal, which only a
release allows (lease_duration is 6 s); no two claims overlap, and the
held renew never brings c-1's record back.
"""

import json
import os
import sys
import time
import urllib.parse

import e2elib as E
from test_interop import Sampler, check_no_overlap

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "kit"))
from proxy import ProxyHub  # noqa: E402

BUDGET = 4.0                    # c-1's --shutdown-timeout
HOLD_MS = 3000 * E.REQ_TIMEOUT  # longer than request_timeout
TAKEOVER = 1.0                  # SIGTERM -> another participant leads


def proxied_kubeconfig(src, url):
    """A copy of the kubeconfig src (JSON) whose server is url."""
    with open(src) as f:
        kc = json.load(f)
    kc["clusters"][0]["cluster"]["server"] = url
    path = src + "-proxied"
    with open(path, "w") as f:
        json.dump(kc, f, indent=1)
    os.chmod(path, 0o600)
    return path


def test_sigterm_during_held_renew_releases_at_once(election):
    el = election(prefix="shut")
    with open(el.kubeconfig) as f:
        server = json.load(f)["clusters"][0]["cluster"]["server"]
    u = urllib.parse.urlsplit(server)
    hub = ProxyHub()
    px = hub.proxy(u.port or 443, "c-1", upstream_host=u.hostname)
    c1 = el.leaderd("c-1", kubeconfig=proxied_kubeconfig(el.kubeconfig,
                                                         px.url),
                    extra=["--shutdown-timeout", "%gs" % BUDGET])
    c2 = el.leaderd("c-2")
    go = el.goelector("go-1")
    parts = [c1, c2, go]
    sampler = Sampler(parts)
    try:
        c1.start().wait_up()
        E.wait_for(c1.is_leader, E.TERM_BOUND + 5, what="c-1 to lead")
        for p in (c2, go):
            p.start().wait_up()
        for p in (c2, go):
            E.wait_for(lambda: (v := p.leader()) and v.get("name") == "c-1",
                       E.TERM_BOUND + 5, what="%s to follow c-1" % p.ident)
        sampler.start()
        # The renews' request sizes, as the proxy saw them: a threshold
        # that catches the next renew and not a GET.
        E.wait_for(lambda: len(px.events_of("answer")) >= 4, 3 * E.RP + 5,
                   what="c-1's renews through the proxy")
        sizes = [e[3] for e in px.events_of("answer")][-2:]
        assert min(sizes) >= 500, sizes
        px.set("hold_once", up_ms=HOLD_MS, min_req_bytes=min(sizes) - 60)
        E.wait_for(lambda: px.events_of("hold"), 2 * E.RP + 3,
                   interval=0.01, what="c-1's next renew to be held")
        time.sleep(0.2)
        t0 = time.monotonic()
        rc, took_exit = c1.proc.term(timeout=BUDGET + 5)
        assert rc == 0, "c-1 exited %s on SIGTERM" % rc
        assert took_exit <= BUDGET + 0.5, took_exit
        new = E.wait_for(lambda: next((p for p in (c2, go)
                                       if p.is_leader()), None),
                         E.TERM_BOUND + 5, interval=0.01,
                         what="a leader after c-1")
        took = time.monotonic() - t0
        log = c1.proc.text()
        assert "released lease" in log, log[-3000:]
        assert took <= TAKEOVER, "%s led %.2fs after SIGTERM" % (new.ident,
                                                                  took)
        # The held renew never lands over the release (the proxy drops it
        # with c-1's connection, or the server refuses its version).
        time.sleep(HOLD_MS / 1000.0 + 1.0)
        spec = el.get_lease()["spec"]
        assert spec.get("holderIdentity") in (c2.ident, go.ident), spec
    finally:
        sampler.stop()
        hub.close()
    check_no_overlap(sampler.samples)
    print("c-1 exit %.3f s after SIGTERM; %s led %.3f s after it" % (
        took_exit, new.ident, took))
