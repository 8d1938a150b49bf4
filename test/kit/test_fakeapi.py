"""Self-tests of the test API server (fakeapi.py): its Lease semantics,
Status bodies, auth and fault switches, checked over HTTPS with urllib.
They run with the integration suite (make integration): the leaderd
tests are only as good as the server they run against."""

import email.utils
import http.client
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

import fakeapi

HERE = os.path.dirname(os.path.abspath(__file__))
NS = "default"
BASE = "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % NS
TOK = "token-a"
MT = "2024-05-06T07:08:09.123456Z"


@pytest.fixture
def api(certdir):
    a = fakeapi.FakeAPI(tokens=[TOK, "token-b"], certdir=certdir).start()
    yield a
    a.stop()


def call(api, method, path, body=None, token=TOK, timeout=5, host=None,
         headers=None):
    """One request; returns (code, headers, parsed body or raw bytes)."""
    url = api.url if host is None else api.url.replace("127.0.0.1", host)
    data = None
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(url + path, data=data, method=method)
    req.add_header("Accept", "application/json")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token is not None:
        req.add_header("Authorization", "Bearer " + token)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    ctx = ssl.create_default_context(cafile=api.ca_file) if api.tls else None
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=ctx) as r:
            raw, code, hdrs = r.read(), r.status, r.headers
    except urllib.error.HTTPError as e:
        raw, code, hdrs = e.read(), e.code, e.headers
    try:
        return code, hdrs, json.loads(raw)
    except ValueError:
        return code, hdrs, raw


def lease(name, holder="a", dur=15, rv=None, uid=None, **spec):
    meta = {"name": name, "namespace": NS}
    if rv is not None:
        meta["resourceVersion"] = rv
    if uid is not None:
        meta["uid"] = uid
    s = {"holderIdentity": holder, "leaseDurationSeconds": dur,
         "acquireTime": MT, "renewTime": MT, "leaseTransitions": 0}
    s.update(spec)
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": meta, "spec": s}


def status(code, message, reason, details=None):
    b = {"kind": "Status", "apiVersion": "v1", "metadata": {},
         "status": "Failure", "message": message, "reason": reason}
    if details is not None:
        b["details"] = details
    b["code"] = code
    return b


def det(name, kind="leases"):
    return {"name": name, "group": "coordination.k8s.io", "kind": kind}


def test_tls_verifies_for_ip_and_localhost(api):
    for host in ("127.0.0.1", "localhost"):
        code, _, body = call(api, "GET", BASE + "/x", host=host)
        assert code == 404, body
    # A client without the CA must refuse the certificate.
    with pytest.raises(urllib.error.URLError) as ei:
        urllib.request.urlopen(api.url + BASE + "/x", timeout=5,
                               context=ssl.create_default_context())
    assert isinstance(ei.value.reason, ssl.SSLCertVerificationError)


def _key_of(pem):
    """The public key algorithm and size of a certificate, as openssl
    prints them ("rsaEncryption", "2048 bit")."""
    text = subprocess.run(["openssl", "x509", "-in", pem, "-noout", "-text"],
                          capture_output=True, text=True, check=True).stdout
    alg = re.search(r"Public Key Algorithm: (\S+)", text).group(1)
    bits = re.search(r"Public-Key: \((\d+) bit\)", text).group(1)
    return alg, int(bits)


def test_rsa_key_type(tmp_path):
    """key_type="rsa:2048": CA and server certificate on RSA keys (as
    kubeadm's), served and verified; a directory of P-256 certificates
    is not taken for RSA ones."""
    d = str(tmp_path / "rsa")
    a = fakeapi.FakeAPI(tokens=[TOK], certdir=d, key_type="rsa:2048").start()
    try:
        assert _key_of(a.ca_file) == ("rsaEncryption", 2048)
        assert _key_of(a.cert_file) == ("rsaEncryption", 2048)
        code, _, body = call(a, "GET", BASE + "/x")
        assert code == 404, body
    finally:
        a.stop()
    ec = str(tmp_path / "ec")
    fakeapi.make_certs(ec)
    assert _key_of(os.path.join(ec, "server.crt")) == ("id-ecPublicKey",
                                                       256)
    with pytest.raises(ValueError, match="ec certificates, not rsa:2048"):
        fakeapi.make_certs(ec, "rsa:2048")
    with pytest.raises(ValueError, match="ec or rsa:BITS"):
        fakeapi.make_certs(str(tmp_path / "bad"), "dsa")


def test_unauthorized_exact_body_and_rotation(api):
    want = {"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": "Unauthorized",
            "reason": "Unauthorized", "code": 401}
    for tok in (None, "nope"):
        code, _, body = call(api, "GET", BASE + "/x", token=tok)
        assert (code, body) == (401, want)
    code, _, _ = call(api, "GET", BASE + "/x", headers={"Authorization":
                                                         "Basic dTpw"},
                      token=None)
    assert code == 401
    api.add_token("new")
    assert call(api, "GET", BASE + "/x", token="new")[0] == 404
    api.revoke_token(TOK)
    assert call(api, "GET", BASE + "/x", token=TOK)[0] == 401
    assert call(api, "GET", BASE + "/x", token="new")[0] == 404


def test_get_missing_exact_404(api):
    code, hdrs, body = call(api, "GET", BASE + "/nope")
    assert code == 404
    assert hdrs["Content-Type"] == "application/json"
    assert body == status(404, 'leases.coordination.k8s.io "nope" not found',
                          "NotFound", det("nope"))


def test_create_then_get_and_already_exists(api):
    code, _, obj = call(api, "POST", BASE, lease("l1"))
    assert code == 201, obj
    m = obj["metadata"]
    assert m["name"] == "l1" and m["namespace"] == NS
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-"
                        r"[0-9a-f]{12}", m["uid"])
    assert isinstance(m["resourceVersion"], str) and m["resourceVersion"].isdigit()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", m["creationTimestamp"])
    assert m["managedFields"][0]["fieldsType"] == "FieldsV1"
    assert obj["spec"] == lease("l1")["spec"]
    code, _, got = call(api, "GET", BASE + "/l1")
    assert code == 200 and got == obj
    code, _, body = call(api, "POST", BASE, lease("l1", holder="b"))
    assert code == 409
    assert body == status(409, 'leases.coordination.k8s.io "l1" already exists',
                          "AlreadyExists", det("l1"))
    assert api.get_lease(NS, "l1")["spec"]["holderIdentity"] == "a"


def test_resource_versions_are_global_and_increasing(api):
    rvs = []
    for n in ("r1", "r2"):
        rvs.append(int(call(api, "POST", BASE, lease(n))[2]["metadata"]
                       ["resourceVersion"]))
    obj = api.get_lease(NS, "r1")
    code, _, up = call(api, "PUT", BASE + "/r1", lease(
        "r1", rv=obj["metadata"]["resourceVersion"], uid=obj["metadata"]["uid"]))
    assert code == 200
    rvs.append(int(up["metadata"]["resourceVersion"]))
    assert rvs == sorted(rvs) and len(set(rvs)) == 3
    assert up["metadata"]["uid"] == obj["metadata"]["uid"]
    assert up["metadata"]["creationTimestamp"] == obj["metadata"]["creationTimestamp"]


def test_put_conflict_on_stale_rv(api):
    obj = call(api, "POST", BASE, lease("c1"))[2]
    rv, uid = obj["metadata"]["resourceVersion"], obj["metadata"]["uid"]
    assert call(api, "PUT", BASE + "/c1", lease("c1", rv=rv, uid=uid,
                                                 holder="b"))[0] == 200
    code, _, body = call(api, "PUT", BASE + "/c1", lease("c1", rv=rv, uid=uid,
                                                          holder="c"))
    assert code == 409
    assert body == status(
        409, 'Operation cannot be fulfilled on leases.coordination.k8s.io '
        '"c1": the object has been modified; please apply your changes to '
        'the latest version and try again', "Conflict", det("c1"))
    assert api.get_lease(NS, "c1")["spec"]["holderIdentity"] == "b"


def test_put_without_rv_is_422(api):
    call(api, "POST", BASE, lease("v1"))
    code, _, body = call(api, "PUT", BASE + "/v1", lease("v1"))
    assert code == 422
    assert body["reason"] == "Invalid"
    assert body["message"] == ('leases.coordination.k8s.io "v1" is invalid: '
                               'metadata.resourceVersion: Invalid value: 0: '
                               'must be specified for an update')
    assert body["details"]["causes"] == [{
        "reason": "FieldValueInvalid",
        "message": "Invalid value: 0: must be specified for an update",
        "field": "metadata.resourceVersion"}]


def test_put_uid_precondition(api):
    obj = call(api, "POST", BASE, lease("u1"))[2]
    rv, uid = obj["metadata"]["resourceVersion"], obj["metadata"]["uid"]
    code, _, body = call(api, "PUT", BASE + "/u1", lease("u1", rv=rv,
                                                          uid="0000-bad"))
    assert code == 409 and body["reason"] == "Conflict"
    assert body["message"] == (
        'Operation cannot be fulfilled on leases.coordination.k8s.io "u1": '
        'Precondition failed: UID in precondition: 0000-bad, UID in object '
        'meta: %s' % uid)
    # Deleted and recreated: the old uid no longer matches.
    assert api.delete_lease(NS, "u1")
    new = call(api, "POST", BASE, lease("u1"))[2]
    code, _, body = call(api, "PUT", BASE + "/u1", lease("u1", rv=rv, uid=uid))
    assert code == 409 and "Precondition failed" in body["message"]
    assert new["metadata"]["uid"] != uid


def test_put_missing_creates_without_uid_conflicts_with_uid(api):
    code, _, body = call(api, "PUT", BASE + "/m1", lease("m1", rv="5",
                                                          uid="gone-uid"))
    assert code == 409
    assert body["message"] == (
        'Operation cannot be fulfilled on leases.coordination.k8s.io "m1": '
        'Precondition failed: UID in precondition: gone-uid, UID in object '
        'meta: ')
    assert api.get_lease(NS, "m1") is None
    code, _, obj = call(api, "PUT", BASE + "/m1", lease("m1", rv="5"))
    assert code == 201
    assert obj["metadata"]["resourceVersion"] != "5"
    assert obj["metadata"]["uid"]
    h = api.history(name="m1")
    assert [x["method"] for x in h] == ["PUT"] and h[0]["created"]


def test_name_and_namespace_mismatch_400(api):
    call(api, "POST", BASE, lease("n1"))
    code, _, body = call(api, "PUT", BASE + "/n1", lease("other", rv="1"))
    assert code == 400
    assert body == status(400, "the name of the object (other) does not match "
                          "the name on the URL (n1)", "BadRequest")
    b = lease("n1", rv="1")
    b["metadata"]["namespace"] = "kube-system"
    code, _, body = call(api, "PUT", BASE + "/n1", b)
    assert code == 400 and "namespace" in body["message"]


def test_validation_422_with_causes(api):
    code, _, body = call(api, "POST", BASE, lease("d0", dur=0))
    assert code == 422
    assert body == status(
        422, 'Lease.coordination.k8s.io "d0" is invalid: '
        'spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0',
        "Invalid", dict(det("d0", "Lease"), causes=[{
            "reason": "FieldValueInvalid",
            "message": "Invalid value: 0: must be greater than 0",
            "field": "spec.leaseDurationSeconds"}]))
    code, _, body = call(api, "POST", BASE, lease("d1", leaseTransitions=-1))
    assert code == 422 and body["details"]["causes"][0]["field"] == \
        "spec.leaseTransitions"
    code, _, body = call(api, "POST", BASE, lease("Bad_Name"))
    assert code == 422 and body["details"]["causes"][0]["field"] == "metadata.name"
    # Also on update.
    obj = call(api, "POST", BASE, lease("d2"))[2]
    code, _, body = call(api, "PUT", BASE + "/d2", lease(
        "d2", dur=-3, rv=obj["metadata"]["resourceVersion"]))
    assert code == 422 and "must be greater than 0" in body["message"]


@pytest.mark.parametrize("t", ["2024-05-06T07:08:09Z",
                               "2024-05-06T07:08:09.123Z",
                               "2024-05-06T07:08:09.123456789Z",
                               "2024-05-06T07:08:09.123456z",
                               "2024-05-06T07:08:09.123456+00:00",
                               "2024-13-06T07:08:09.123456Z",
                               "2024-05-06 07:08:09.123456Z"])
def test_microtime_must_have_six_digits(api, t):
    for field in ("acquireTime", "renewTime"):
        code, _, body = call(api, "POST", BASE, lease("t1", **{field: t}))
        assert code == 400, (t, body)
        assert body["reason"] == "BadRequest"
        assert body["message"].startswith('Lease in version "v1" cannot be '
                                          'handled as a Lease: parsing time')
    assert api.get_lease(NS, "t1") is None


def test_wrong_types_are_400(api):
    for spec in ({"leaseDurationSeconds": "15"}, {"leaseDurationSeconds": 1.5},
                 {"holderIdentity": 3}, {"leaseTransitions": True}):
        code, _, body = call(api, "POST", BASE, lease("w1", **spec))
        assert code == 400 and body["reason"] == "BadRequest", spec
    assert call(api, "POST", BASE, b"{not json")[0] == 400
    b = lease("w2")
    b["apiVersion"] = "coordination.k8s.io/v1beta1"
    assert call(api, "POST", BASE, b)[0] == 400


def test_nulls_omitted_unknown_fields_dropped_metadata_kept(api):
    b = lease("k1", acquireTime=None, extra="x")
    b["metadata"]["labels"] = {"app": "demo"}
    b["metadata"]["annotations"] = {"note": "keep me"}
    obj = call(api, "POST", BASE, b)[2]
    assert "acquireTime" not in obj["spec"] and "extra" not in obj["spec"]
    assert obj["spec"]["holderIdentity"] == "a"
    # An update that carries the metadata keeps labels and annotations.
    b2 = lease("k1", holder="", rv=obj["metadata"]["resourceVersion"],
               uid=obj["metadata"]["uid"])
    b2["metadata"]["labels"] = obj["metadata"]["labels"]
    b2["metadata"]["annotations"] = obj["metadata"]["annotations"]
    code, _, up = call(api, "PUT", BASE + "/k1", b2)
    assert code == 200
    assert up["metadata"]["labels"] == {"app": "demo"}
    assert up["metadata"]["annotations"] == {"note": "keep me"}
    assert up["spec"]["holderIdentity"] == ""


def test_delete_list_and_history(api):
    call(api, "POST", BASE, lease("h1"))
    obj = api.get_lease(NS, "h1")
    call(api, "PUT", BASE + "/h1", lease("h1", holder="", dur=1,
                                         rv=obj["metadata"]["resourceVersion"],
                                         uid=obj["metadata"]["uid"]),
         token="token-b")
    code, _, lst = call(api, "GET", BASE)
    assert code == 200 and lst["kind"] == "LeaseList"
    assert [i["metadata"]["name"] for i in lst["items"]] == ["h1"]
    code, _, st = call(api, "DELETE", BASE + "/h1")
    assert code == 200 and st["status"] == "Success"
    assert call(api, "DELETE", BASE + "/h1")[0] == 404
    h = api.history(name="h1")
    assert [x["method"] for x in h] == ["POST", "PUT", "DELETE"]
    assert [x["token"] for x in h] == [TOK, "token-b", TOK]
    assert h[1]["spec"]["holderIdentity"] == "" and \
        h[1]["spec"]["leaseDurationSeconds"] == 1
    assert h[0]["t"] <= h[1]["t"] <= h[2]["t"]
    assert all(x["t_recv"] <= x["t"] for x in h)
    assert int(h[0]["rv"]) < int(h[1]["rv"])


def test_events_accepted(api):
    ev = {"apiVersion": "v1", "kind": "Event",
          "metadata": {"name": "l.17", "namespace": NS},
          "reason": "LeaderElection", "message": "a became leader"}
    code, _, body = call(api, "POST", "/api/v1/namespaces/%s/events" % NS, ev)
    assert code == 201 and body["metadata"]["uid"]
    assert api.events()[0]["message"] == "a became leader"


def test_body_must_be_json(api):
    code, _, body = call(api, "POST", BASE, lease("j1"),
                         headers={"Content-Type": "text/plain"})
    assert code == 415 and body["reason"] == "UnsupportedMediaType"
    code, _, _ = call(api, "POST", BASE, lease("j1"), headers={
        "Content-Type": "application/json; charset=utf-8"})
    assert code == 201


def test_unknown_path_and_method(api):
    code, _, body = call(api, "GET", "/api/v1/namespaces/default/secrets")
    assert code == 404 and body["reason"] == "NotFound"
    assert call(api, "POST", BASE + "/x", {})[0] == 405
    # A PATCH of a Lease must say its patch type, as kube-apiserver asks.
    assert call(api, "PATCH", BASE + "/x", {})[0] == 415


def test_keep_alive_reuses_connection(api):
    ctx = ssl.create_default_context(cafile=api.ca_file)
    c = http.client.HTTPSConnection("127.0.0.1", api.port, context=ctx,
                                    timeout=5)
    try:
        for _ in range(3):
            c.request("GET", BASE + "/x",
                      headers={"Authorization": "Bearer " + TOK})
            r = c.getresponse()
            r.read()
            assert r.status == 404
        assert api.open_connections() == 1
    finally:
        c.close()


def test_connections_send_without_nagle(api):
    """Like Go's net/http: TCP_NODELAY on every accepted connection, so
    an answer's body never waits for the client's delayed ACK."""
    ctx = ssl.create_default_context(cafile=api.ca_file)
    c = http.client.HTTPSConnection("127.0.0.1", api.port, context=ctx,
                                    timeout=5)
    try:
        c.request("GET", BASE + "/x",
                  headers={"Authorization": "Bearer " + TOK})
        r = c.getresponse()
        r.read()
        with api._lock:
            conns = list(api._conns)
        assert len(conns) == 1
        assert conns[0].getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        c.close()


def test_fault_delay(api):
    api.fault("delay", delay_ms=400, count=1)
    t0 = time.monotonic()
    assert call(api, "GET", BASE + "/x")[0] == 404
    assert time.monotonic() - t0 >= 0.4
    t0 = time.monotonic()
    assert call(api, "GET", BASE + "/x")[0] == 404
    assert time.monotonic() - t0 < 0.4


def test_fault_status_per_token_method_and_count(api):
    f = api.fault("status", token=TOK, methods=["GET"], status=503,
                  retry_after=2, count=2)
    code, hdrs, body = call(api, "GET", BASE + "/x")
    assert code == 503 and hdrs["Retry-After"] == "2"
    assert body["reason"] == "ServiceUnavailable" and body["code"] == 503
    assert call(api, "GET", BASE + "/x", token="token-b")[0] == 404
    assert call(api, "POST", BASE, lease("s1"))[0] == 201
    assert call(api, "GET", BASE + "/x")[0] == 503
    assert call(api, "GET", BASE + "/x")[0] == 404
    assert f.hits == 2
    g = api.fault("status", status=429)
    assert call(api, "GET", BASE + "/x", token="token-b")[0] == 429
    api.clear_fault(g)
    assert call(api, "GET", BASE + "/x", token="token-b")[0] == 404


def test_fault_drop_does_not_apply(api):
    api.fault("drop", methods=["POST"], count=1)
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError,
                        urllib.error.URLError, ssl.SSLError)):
        call(api, "POST", BASE, lease("x1"))
    assert api.get_lease(NS, "x1") is None
    assert api.history(name="x1") == []
    assert call(api, "POST", BASE, lease("x1"))[0] == 201


def test_fault_apply_then_close_applies(api):
    obj = call(api, "POST", BASE, lease("a1"))[2]
    api.fault("apply_then_close", token=TOK, methods=["PUT"], count=1)
    b = lease("a1", holder="a", rv=obj["metadata"]["resourceVersion"],
              uid=obj["metadata"]["uid"], renewTime="2024-05-06T07:08:10.000001Z")
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError,
                        urllib.error.URLError, ssl.SSLError)):
        call(api, "PUT", BASE + "/a1", b)
    stored = api.get_lease(NS, "a1")
    assert stored["spec"]["renewTime"] == "2024-05-06T07:08:10.000001Z"
    h = api.history(name="a1", method="PUT")
    assert len(h) == 1 and h[0]["unanswered"]
    # The retry with the old resourceVersion now conflicts.
    code, _, body = call(api, "PUT", BASE + "/a1", b)
    assert code == 409 and body["reason"] == "Conflict"


def test_fault_blackhole_until_cleared(api):
    f = api.fault("blackhole", token=TOK)
    t0 = time.monotonic()
    with pytest.raises((socket.timeout, TimeoutError, urllib.error.URLError)):
        call(api, "GET", BASE + "/x", timeout=0.5)
    assert time.monotonic() - t0 >= 0.5
    assert call(api, "GET", BASE + "/x", token="token-b")[0] == 404
    # A held request is released (closed, unanswered) when cleared.
    done = {}

    def hold():
        try:
            call(api, "GET", BASE + "/x", timeout=10)
            done["r"] = "answered"
        except Exception as e:  # noqa: BLE001
            done["r"] = type(e).__name__
    th = threading.Thread(target=hold)
    th.start()
    time.sleep(0.3)
    assert th.is_alive()
    api.clear_fault(f)
    th.join(5)
    assert not th.is_alive() and done["r"] != "answered"
    assert call(api, "GET", BASE + "/x")[0] == 404
    assert [e["fault"] for e in api.requests(token=TOK)][:2] == \
        ["blackhole", "blackhole"]


def test_stop_releases_held_requests(certdir):
    a = fakeapi.FakeAPI(tokens=[TOK], certdir=certdir).start()
    a.fault("blackhole")
    th = threading.Thread(target=lambda: pytest.raises(
        Exception, call, a, "GET", BASE + "/x", timeout=30))
    th.start()
    time.sleep(0.2)
    t0 = time.monotonic()
    a.stop()
    th.join(5)
    assert not th.is_alive()
    assert time.monotonic() - t0 < 5


def test_request_log(api):
    t0 = time.monotonic()
    call(api, "GET", BASE + "/x", token="token-b")
    (e,) = api.requests(token="token-b")
    assert e["method"] == "GET" and e["code"] == 404
    assert t0 <= e["t_recv"] <= e["t_done"] <= time.monotonic()


def test_plain_http(certdir):
    with fakeapi.FakeAPI(tokens=[TOK], tls=False) as a:
        assert a.url.startswith("http://")
        assert call(a, "GET", BASE + "/x")[0] == 404


def test_kubeconfig_text(api, tmp_path):
    p = api.write_kubeconfig(str(tmp_path / "kc"), token="tok\"x")
    text = open(p).read()
    assert 'server: "%s"' % api.url in text
    assert 'certificate-authority: "%s"' % api.ca_file in text
    assert 'token: "tok\\"x"' in text
    assert "current-context: fakeapi" in text
    p = api.write_kubeconfig(str(tmp_path / "kc2"), token_file="/t/f")
    assert 'tokenFile: "/t/f"' in open(p).read()


def test_cli_prints_url_and_kubeconfig(tmp_path):
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "fakeapi.py"),
                          "--dir", str(tmp_path), "--token", "cli-tok"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        l1 = p.stdout.readline()
        l2 = p.stdout.readline()
        m = re.match(r"fakeapi listening on (https://127\.0\.0\.1:(\d+))$",
                     l1.strip())
        assert m, l1
        kc = l2.strip().split(": ", 1)[1]
        assert os.path.exists(kc) and m.group(1) in open(kc).read()
        ctx = ssl.create_default_context(cafile=str(tmp_path / "ca.crt"))
        req = urllib.request.Request(m.group(1) + BASE + "/x",
                                     headers={"Authorization": "Bearer cli-tok"})
        with pytest.raises(urllib.error.HTTPError) as ei:
            urllib.request.urlopen(req, timeout=5, context=ctx)
        assert ei.value.code == 404
    finally:
        p.terminate()
        try:
            assert p.wait(5) == 0
        finally:
            if p.poll() is None:
                p.kill()
            p.stdout.close()
            p.stderr.close()


# -- the Lease watch ---------------------------------------------------

WATCH_Q = "watch=1&fieldSelector=metadata.name%%3D%s&allowWatchBookmarks=true"


class RawWatch:
    """A watch client on a raw socket that sees the chunks as sent: each
    one (kept in .chunks), the terminating chunk, and a close without it.
    Events are read as lines across chunks, as the server may put several
    in one chunk or end a chunk inside one."""

    def __init__(self, api, query, token=TOK, timeout=5.0, path=BASE):
        s = socket.create_connection(("127.0.0.1", api.port), timeout=timeout)
        if api.tls:
            ctx = ssl.create_default_context(cafile=api.ca_file)
            s = ctx.wrap_socket(s, server_hostname="127.0.0.1")
        self.sock = s
        self.buf = b""
        self.lines = b""        # event bytes received, not yet returned
        self.chunks = []        # every data chunk, as received
        self.t_sent = time.monotonic()
        req = "GET %s?%s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: " \
            "application/json\r\n" % (path, query)
        if token is not None:
            req += "Authorization: Bearer %s\r\n" % token
        s.sendall((req + "\r\n").encode())
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split()[1])
        self.headers = {}
        for ln in lines[1:]:
            k, _, v = ln.partition(":")
            self.headers[k.strip().lower()] = v.strip()
        self.t_headers = time.monotonic()
        self.body = None
        if "content-length" in self.headers:
            n = int(self.headers["content-length"])
            while len(self.buf) < n:
                self._fill()
            self.body = json.loads(self.buf[:n])
            self.buf = self.buf[n:]

    def _fill(self, timeout=None):
        if timeout is not None:
            self.sock.settimeout(timeout)
        d = self.sock.recv(65536)
        if not d:
            raise EOFError("closed")
        self.buf += d

    def chunk(self, timeout=5.0):
        """The next chunk's data; b"" for the terminating chunk.  Raises
        EOFError when the server closes first, socket.timeout."""
        end = time.monotonic() + timeout
        while b"\r\n" not in self.buf:
            self._fill(max(0.01, end - time.monotonic()))
        size, _, rest = self.buf.partition(b"\r\n")
        n = int(size, 16)
        if n == 0:
            # The last chunk: no data, then (no trailers) an empty line.
            while b"\r\n" not in rest:
                self.buf = size + b"\r\n" + rest
                self._fill(max(0.01, end - time.monotonic()))
                size, _, rest = self.buf.partition(b"\r\n")
            assert rest.startswith(b"\r\n"), rest
            self.buf = rest[2:]
            self.chunks.append(b"")
            return b""
        while len(rest) < n + 2:
            self.buf = size + b"\r\n" + rest
            self._fill(max(0.01, end - time.monotonic()))
            size, _, rest = self.buf.partition(b"\r\n")
        assert rest[n:n + 2] == b"\r\n"
        self.buf = rest[n + 2:]
        self.chunks.append(rest[:n])
        return rest[:n]

    def event(self, timeout=5.0):
        """The next event (one JSON line) as a dict."""
        end = time.monotonic() + timeout
        while b"\n" not in self.lines:
            data = self.chunk(max(0.01, end - time.monotonic()))
            assert data, "the stream ended"
            self.lines += data
        line, _, self.lines = self.lines.partition(b"\n")
        return json.loads(line)

    def events(self, n, timeout=5.0):
        return [self.event(timeout) for _ in range(n)]

    def until_end(self, timeout=5.0):
        """Events until the terminating chunk: (events, "end"), or until
        the server closes without it: (events, "cut")."""
        out = []
        end = time.monotonic() + timeout
        how = "end"
        try:
            while True:
                d = self.chunk(max(0.01, end - time.monotonic()))
                if d == b"":
                    break
                self.lines += d
        except (EOFError, ConnectionResetError, ssl.SSLError):
            how = "cut"
        while self.lines:
            line, nl, self.lines = self.lines.partition(b"\n")
            assert nl, "a partial event at the end: %r" % line
            out.append(json.loads(line))
        return out, how

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


@pytest.fixture
def watch(api):
    made = []

    def open_(query, **kw):
        w = RawWatch(api, query, **kw)
        made.append(w)
        return w
    yield open_
    for w in made:
        w.close()


def wq(name, rv=None, timeout=None, bookmarks=True):
    q = "watch=1&fieldSelector=metadata.name%%3D%s" % name
    if bookmarks:
        q += "&allowWatchBookmarks=true"
    if rv is not None:
        q += "&resourceVersion=%s" % rv
    if timeout is not None:
        q += "&timeoutSeconds=%d" % timeout
    return q


def rv_of(obj):
    return obj["metadata"]["resourceVersion"]


def put_holder(api, name, holder, token=TOK):
    obj = api.get_lease(NS, name)
    code, _, up = call(api, "PUT", BASE + "/" + name, lease(
        name, holder=holder, rv=rv_of(obj), uid=obj["metadata"]["uid"]),
        token=token)
    assert code == 200, up
    return up


def test_watch_wire_format_and_events_as_get_returns_them(api, watch):
    code, _, obj = call(api, "POST", BASE, lease("w1"))
    assert code == 201
    w = watch(wq("w1"))
    assert w.status == 200
    assert w.headers["content-type"] == "application/json"
    assert w.headers["transfer-encoding"] == "chunked"
    assert "content-length" not in w.headers
    # resourceVersion unset: the current object first, as ADDED, then
    # (bookmarks allowed) the bookmark that ends the initial state, both
    # in one chunk as kube-apiserver 1.36 sends them.
    ev = w.event()
    assert ev == {"type": "ADDED", "object": obj}
    assert list(ev) == ["type", "object"]
    assert w.event() == {"type": "BOOKMARK", "object": {
        "kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
        "metadata": {"resourceVersion": rv_of(obj), "annotations": {
            "k8s.io/initial-events-end": "true"}}, "spec": {}}}
    assert len(w.chunks) == 1 and w.chunks[0].count(b"\n") == 2
    up = put_holder(api, "w1", "b")
    assert w.event() == {"type": "MODIFIED", "object": up}
    # An event that happens alone is one chunk, one line.
    assert w.chunks[1] == json.dumps({"type": "MODIFIED", "object": up},
                                     separators=(",", ":")).encode() + b"\n"
    assert call(api, "GET", BASE + "/w1")[2] == up
    # The stream stays open with nothing to say.
    with pytest.raises(socket.timeout):
        w.chunk(timeout=0.3)


def test_watch_from_rv_sends_only_later_events(api, watch):
    o1 = call(api, "POST", BASE, lease("r1"))[2]
    o2 = put_holder(api, "r1", "b")
    o3 = put_holder(api, "r1", "c")
    w = watch(wq("r1", rv=rv_of(o1)))
    assert w.events(2) == [{"type": "MODIFIED", "object": o2},
                           {"type": "MODIFIED", "object": o3}]
    w2 = watch(wq("r1", rv=rv_of(o3)))
    with pytest.raises(socket.timeout):
        w2.chunk(timeout=0.3)
    o4 = put_holder(api, "r1", "d")
    assert w2.event() == {"type": "MODIFIED", "object": o4}
    assert w.event() == {"type": "MODIFIED", "object": o4}
    # "0" is "any": the current state as ADDED, like "".
    w3 = watch(wq("r1", rv="0"))
    assert w3.event() == {"type": "ADDED", "object": o4}
    assert w3.event()["type"] == "BOOKMARK"
    # A watch on a lease that does not exist yet sends only the end of
    # the (empty) initial state until it is created.
    w4 = watch(wq("later"))
    ev = w4.event()
    assert ev["type"] == "BOOKMARK" and ev["object"]["metadata"][
        "annotations"] == {"k8s.io/initial-events-end": "true"}
    with pytest.raises(socket.timeout):
        w4.chunk(timeout=0.3)
    o5 = call(api, "POST", BASE, lease("later"))[2]
    assert w4.event() == {"type": "ADDED", "object": o5}


def test_watch_admin_edits_delete_and_selectors(api, watch):
    api.create_lease(NS, "a1", {"holderIdentity": "x",
                                "leaseDurationSeconds": 15})
    wa = watch(wq("a1", rv=rv_of(api.get_lease(NS, "a1"))))
    wall = watch("watch=true&resourceVersion=%s"
                 % rv_of(api.get_lease(NS, "a1")))
    m = api.modify_lease(NS, "a1", lambda o: o["spec"].update(
        holderIdentity=""))
    other = api.create_lease(NS, "a2", {"holderIdentity": "y"})
    api.create_lease("kube-system", "a1", {"holderIdentity": "z"})
    before = api.get_lease(NS, "a1")
    assert api.delete_lease(NS, "a1")
    again = api.create_lease(NS, "a1", {"holderIdentity": "w"})
    got = wa.events(3)
    assert [e["type"] for e in got] == ["MODIFIED", "DELETED", "ADDED"]
    assert got[0]["object"] == m
    assert got[0]["object"]["spec"]["holderIdentity"] == ""
    # DELETED carries the last state with the deletion's resourceVersion.
    d = got[1]["object"]
    assert d["spec"] == before["spec"]
    assert d["metadata"]["uid"] == before["metadata"]["uid"]
    assert int(rv_of(d)) > int(rv_of(before))
    assert int(rv_of(d)) < int(rv_of(again))
    assert got[2]["object"] == again
    # No field selector: every lease of the namespace, not other ones.
    names = [(e["type"], e["object"]["metadata"]["name"])
             for e in wall.events(4)]
    assert names == [("MODIFIED", "a1"), ("ADDED", "a2"), ("DELETED", "a1"),
                     ("ADDED", "a1")]
    assert other["metadata"]["namespace"] == NS
    rvs = [e["rv"] for e in api.watch_history()]
    assert rvs == sorted(rvs)


def test_watch_label_selector(api, watch):
    w = watch("watch=1&labelSelector=app%3Ddemo")
    api.create_lease(NS, "l1", {"holderIdentity": "x"}, labels={"app": "x"})
    b = api.create_lease(NS, "l2", {"holderIdentity": "x"},
                         labels={"app": "demo"})
    assert w.event() == {"type": "ADDED", "object": b}


def test_watch_too_old_rv_is_410_in_the_stream(api, watch):
    api.watch_settings(history=3)
    o = call(api, "POST", BASE, lease("g1"))[2]
    for h in "bcde":
        last = put_holder(api, "g1", h)
    oldest = api.watch_history()[0]["rv"]
    w = watch(wq("g1", rv=rv_of(o)))
    assert w.status == 200
    assert w.headers["content-type"] == "application/json"
    evs, how = w.until_end()
    assert how == "end"
    assert evs == [{"type": "ERROR", "object": {
        "kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure",
        "message": "too old resource version: %s (%d)" % (rv_of(o),
                                                          oldest - 1),
        "reason": "Expired", "code": 410}}]
    # From the oldest retained RV - 1 on, it is served.
    w2 = watch(wq("g1", rv=str(oldest - 1)))
    assert [e["type"] for e in w2.events(3)] == ["MODIFIED"] * 3
    # A compaction expires every older RV, the current one is fine.
    api.watch_compact()
    evs, how = watch(wq("g1", rv=str(oldest))).until_end()
    assert how == "end" and evs[0]["object"]["code"] == 410
    w3 = watch(wq("g1", rv=rv_of(last)))
    with pytest.raises(socket.timeout):
        w3.chunk(timeout=0.3)
    e = [r for r in api.requests(method="WATCH") if r["code"] == 200]
    assert [r["end"] for r in e[:1]] == ["expired"]


def test_watch_bookmarks_interval_and_before_timeout(api, watch):
    o = call(api, "POST", BASE, lease("b1"))[2]
    api.watch_settings(bookmark_interval=0.3)
    w = watch(wq("b1", rv=rv_of(o)))
    t0 = time.monotonic()
    ev = w.event(timeout=2)
    dt = time.monotonic() - t0
    assert 0.2 <= dt <= 1.0, dt
    assert ev == {"type": "BOOKMARK", "object": {
        "kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
        "metadata": {"resourceVersion": rv_of(o)}, "spec": {}}}
    # The bookmark RV follows the global RV, also past other writes.
    api.create_lease(NS, "unrelated", {"holderIdentity": "x"})
    cur = int(rv_of(api.get_lease(NS, "unrelated")))
    ev = w.event(timeout=2)
    assert ev["type"] == "BOOKMARK"
    assert int(ev["object"]["metadata"]["resourceVersion"]) == cur
    # Without allowWatchBookmarks: none.
    w2 = watch(wq("b1", rv=rv_of(o), bookmarks=False))
    with pytest.raises(socket.timeout):
        w2.chunk(timeout=0.8)
    # At the default interval (60 s) one comes 2 s before the deadline.
    api.watch_settings(bookmark_interval=60)
    w3 = watch(wq("b1", rv=rv_of(o), timeout=3))
    t0 = time.monotonic()
    ev = w3.event(timeout=3)
    assert ev["type"] == "BOOKMARK"
    assert 0.8 <= time.monotonic() - t0 <= 1.6
    evs, how = w3.until_end(timeout=4)
    assert (evs, how) == ([], "end")


def test_watch_timeout_ends_cleanly_and_keeps_the_connection(api, watch):
    o = call(api, "POST", BASE, lease("t1"))[2]
    w = watch(wq("t1", rv=rv_of(o), timeout=1, bookmarks=False))
    t0 = time.monotonic()
    evs, how = w.until_end(timeout=4)
    dt = time.monotonic() - t0
    assert (evs, how) == ([], "end")
    assert 0.8 <= dt <= 2.0, dt
    (e,) = api.watches(open_only=False)
    assert e["end"] == "timeout" and e["streaming"] is False
    assert e["t_done"] - e["t_recv"] >= 0.9
    # Keep-alive: the next request goes over the same connection.
    w.sock.sendall(("GET %s/t1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                    "%s\r\n\r\n" % (BASE, TOK)).encode())
    while b"\r\n\r\n" not in w.buf:
        w._fill(2)
    assert w.buf.startswith(b"HTTP/1.1 200 ")


def test_watch_request_log(api, watch):
    call(api, "POST", BASE, lease("q1"))
    t0 = time.monotonic()
    w = watch(wq("q1"), token="token-b")
    w.events(2)
    call(api, "GET", BASE + "/q1", token="token-b")
    wait = time.monotonic() + 2
    while not api.watches(token="token-b") and time.monotonic() < wait:
        time.sleep(0.01)
    (e,) = api.watches(token="token-b")
    assert e["method"] == "WATCH" and e["code"] == 200
    assert e["streaming"] is True and e["t_done"] is None
    assert e["events"] == 2 and e["rv"] == ""
    assert e["path"] == BASE and "watch=1" in e["query"]
    assert t0 <= e["t_recv"]
    assert [r["method"] for r in api.requests(token="token-b")] == \
        ["WATCH", "GET"]
    assert api.request_counts(token="token-b", since=t0) == \
        {"WATCH": 1, "GET": 1}
    assert api.request_counts(token="token-b", since=t0,
                              until=e["t_recv"]) == {}
    assert len(api.requests(token="token-b", method="GET")) == 1
    w.close()
    wait = time.monotonic() + 2
    while api.watches(token="token-b") and time.monotonic() < wait:
        time.sleep(0.02)
    (e,) = api.watches(token="token-b", open_only=False)
    assert e["streaming"] is False and e["end"] == "client"
    assert e["t_done"] is not None
    # watch=false is a list.
    code, _, lst = call(api, "GET", BASE + "?watch=false")
    assert code == 200 and lst["kind"] == "LeaseList"


def test_watch_bad_requests_and_auth(api, watch):
    w = watch(wq("x"), token=None)
    assert w.status == 401 and w.body["reason"] == "Unauthorized"
    w = watch(wq("x"), token="nope")
    assert w.status == 401
    # As kube-apiserver 1.36 answers it: 500, no reason.
    w = watch(wq("x", rv="abc"))
    assert w.status == 500 and "reason" not in w.body
    assert w.body["message"] == 'resourceVersion: Invalid value: "abc": ' \
        'strconv.ParseUint: parsing "abc": invalid syntax'
    w = watch("watch=1&fieldSelector=spec.holderIdentity%3Da")
    assert w.status == 400 and "spec.holderIdentity" in w.body["message"]
    w = watch(wq("x") + "&timeoutSeconds=soon")
    assert w.status == 400
    assert w.body["message"] == 'strconv.ParseInt: parsing "soon": ' \
        'invalid syntax'
    assert [r["code"] for r in api.requests(method="WATCH")] == \
        [401, 401, 500, 400, 400]


def test_watch_query_booleans_as_the_apiserver_reads_them(api, watch):
    """Absent, "0" and "false" (any case) are false; anything else, even
    "yes" or "", is true; the first of repeated values counts."""
    o = call(api, "POST", BASE, lease("qb"))[2]
    for v in ("1", "true", "True", "yes", ""):
        w = watch("watch=%s&fieldSelector=metadata.name%%3Dqb&"
                  "timeoutSeconds=1" % v)
        assert w.status == 200 and "transfer-encoding" in w.headers, v
        assert w.until_end() == ([{"type": "ADDED", "object": o}], "end"), v
    for v in ("0", "false", "FALSE"):
        code, _, body = call(api, "GET", BASE + "?watch=%s" % v)
        assert code == 200 and body["kind"] == "LeaseList", v
    code, _, body = call(api, "GET", BASE + "?watch=false&watch=true")
    assert code == 200 and body["kind"] == "LeaseList"
    # allowWatchBookmarks=maybe asks for bookmarks.
    w = watch("watch=1&fieldSelector=metadata.name%3Dqb&"
              "allowWatchBookmarks=maybe&timeoutSeconds=1")
    evs, how = w.until_end()
    assert [e["type"] for e in evs] == ["ADDED", "BOOKMARK"]


def test_watch_backlog_shares_chunks_of_2048_bytes(api, watch):
    """A replay from an old RV is written as Go's net/http writes it: up
    to 2048 bytes a chunk, a chunk may end inside an event; the client
    must read lines, not chunks."""
    o = call(api, "POST", BASE, lease("bk"))[2]
    ups = [put_holder(api, "bk", "holder-%d" % i) for i in range(6)]
    w = watch(wq("bk", rv=rv_of(o), timeout=1, bookmarks=False))
    evs, how = w.until_end()
    assert how == "end"
    assert evs == [{"type": "MODIFIED", "object": u} for u in ups]
    data = [c for c in w.chunks if c]
    assert all(len(c) <= 2048 for c in data)
    assert len(data[0]) == 2048 and not data[0].endswith(b"\n")
    assert b"".join(data).count(b"\n") == 6


def test_watch_fault_cut_after_n_events(api, watch):
    o = call(api, "POST", BASE, lease("c1"))[2]
    f = api.watch_fault("cut", token=TOK, after=1, count=1)
    w = watch(wq("c1", rv="0"))
    assert w.status == 200
    evs, how = w.until_end()
    assert how == "cut" and evs == [{"type": "ADDED", "object": o}]
    assert f.hits == 1
    # after=0: the headers, then a close.
    api.watch_fault("cut", after=0, count=1)
    w = watch(wq("c1", rv="0"))
    assert w.status == 200
    assert w.until_end() == ([], "cut")
    # Used up: the next watch is whole; other tokens and GETs never cut.
    w = watch(wq("c1", rv="0"))
    assert w.event()["type"] == "ADDED"
    api.watch_fault("cut", token=TOK, after=0)
    assert call(api, "GET", BASE + "/c1")[0] == 200
    w = watch(wq("c1", rv="0"), token="token-b")
    assert w.event()["type"] == "ADDED"
    ends = [r["end"] for r in api.requests(method="WATCH")]
    assert ends[:2] == ["cut", "cut"]


def test_watch_fault_silent_until_client_goes(api, watch):
    o = call(api, "POST", BASE, lease("s1"))[2]
    f = api.watch_fault("silent", token=TOK)
    api.watch_settings(bookmark_interval=0.1)
    w = watch(wq("s1", rv="0", timeout=1))
    assert w.status == 200
    put_holder(api, "s1", "b")
    # Nothing, not even a bookmark, and not ended at timeoutSeconds.
    with pytest.raises(socket.timeout):
        w.chunk(timeout=1.5)
    assert api.watches(token=TOK)[0]["fault"] == "watch_silent"
    w.close()
    end = time.monotonic() + 2
    while api.watches(token=TOK) and time.monotonic() < end:
        time.sleep(0.02)
    (e,) = api.watches(token=TOK, open_only=False)
    assert e["end"] == "client" and e["events"] == 0
    # Clearing the fault closes a held stream (no terminating chunk).
    w = watch(wq("s1", rv="0"))
    time.sleep(0.2)
    api.clear_fault(f)
    assert w.until_end() == ([], "cut")
    assert watch(wq("s1", rv=rv_of(o))).event()["type"] == "MODIFIED"


def test_watch_fault_gone_next_watch(api, watch):
    o = call(api, "POST", BASE, lease("x1"))[2]
    api.watch_fault("gone", token=TOK, count=1)
    w = watch(wq("x1", rv=rv_of(o)))
    evs, how = w.until_end()
    assert how == "end" and len(evs) == 1
    assert evs[0]["type"] == "ERROR"
    st = evs[0]["object"]
    assert (st["kind"], st["code"], st["reason"], st["status"]) == \
        ("Status", 410, "Expired", "Failure")
    assert st["message"].startswith("too old resource version: %s ("
                                    % rv_of(o))
    w = watch(wq("x1", rv=rv_of(o)))
    with pytest.raises(socket.timeout):
        w.chunk(timeout=0.3)


def test_watch_fault_forbidden_only_watches(api, watch):
    call(api, "POST", BASE, lease("f1"))
    api.watch_fault("forbidden", token=TOK)
    w = watch(wq("f1"))
    assert w.status == 403
    assert w.headers["content-type"] == "application/json"
    assert w.body == status(
        403, 'leases.coordination.k8s.io "f1" is forbidden: User '
        '"system:serviceaccount:default:leaderd" cannot watch resource '
        '"leases" in API group "coordination.k8s.io" in the namespace '
        '"default"', "Forbidden", det("f1"))
    assert call(api, "GET", BASE + "/f1")[0] == 200
    assert watch(wq("f1"), token="token-b").status == 200
    # Without a name (no field selector) the Status names none either.
    w = watch("watch=1")
    assert w.status == 403
    assert w.body["message"].startswith("leases.coordination.k8s.io is "
                                        "forbidden: ")
    assert w.body["details"] == {"group": "coordination.k8s.io",
                                 "kind": "leases"}
    # A plain status fault for WATCH works too (a 503 with Retry-After).
    api.clear_faults()
    api.fault("status", methods=["WATCH"], status=503, retry_after=1,
              count=1)
    w = watch(wq("f1"))
    assert w.status == 503 and w.headers["retry-after"] == "1"


def test_watch_delay_and_lag(api, watch):
    o = call(api, "POST", BASE, lease("d1"))[2]
    api.fault("delay", methods=["WATCH"], delay_ms=400, count=1)
    t0 = time.monotonic()
    w = watch(wq("d1", rv=rv_of(o)))
    assert w.status == 200 and w.t_headers - t0 >= 0.4
    # A lag: each event arrives that long after the write.
    api.watch_lag(0.5, token=TOK)
    t0 = time.monotonic()
    put_holder(api, "d1", "b")
    ev = w.event(timeout=3)
    assert ev["type"] == "MODIFIED"
    assert time.monotonic() - t0 >= 0.45
    api.watch_lag(0, token=TOK)
    t0 = time.monotonic()
    put_holder(api, "d1", "c")
    assert w.event(timeout=3)["object"]["spec"]["holderIdentity"] == "c"
    assert time.monotonic() - t0 < 0.4


def test_watch_stall_cut_and_end_open_streams(api, watch):
    o = call(api, "POST", BASE, lease("o1"))[2]
    api.watch_settings(bookmark_interval=0.1)
    w = watch(wq("o1", rv=rv_of(o), timeout=1))
    assert w.event()["type"] == "BOOKMARK"
    api.watch_stall(True, token=TOK)
    time.sleep(0.3)
    while True:     # drop what was on the wire before the stall
        try:
            w.chunk(timeout=0.2)
        except socket.timeout:
            break
    up = put_holder(api, "o1", "b")
    with pytest.raises(socket.timeout):
        w.chunk(timeout=1.3)      # past timeoutSeconds too
    api.watch_stall(False, token=TOK)
    assert w.event() == {"type": "MODIFIED", "object": up}
    evs, how = w.until_end()
    assert how == "end"
    w1 = watch(wq("o1", rv=rv_of(up)))
    w2 = watch(wq("o1", rv=rv_of(up)), token="token-b")
    w1.event()
    w2.event()
    assert api.watch_cut_open(token=TOK) == 1
    assert w1.until_end()[1] == "cut"
    assert api.watch_end_open() == 1
    assert w2.until_end()[1] == "end"
    assert api.watches() == []


def test_stop_ends_open_watches(certdir):
    a = fakeapi.FakeAPI(tokens=[TOK], certdir=certdir).start()
    w = RawWatch(a, wq("z"))
    assert w.status == 200
    t0 = time.monotonic()
    a.stop()
    assert w.until_end(timeout=3)[1] == "cut"
    assert time.monotonic() - t0 < 2
    w.close()
# -- pods (the leader label) ------------------------------------------

PODS = "/api/v1/namespaces/default/pods/"
MERGE = {"Content-Type": "application/merge-patch+json"}


def test_pod_get_and_merge_patch(api):
    assert call(api, "GET", PODS + "p1")[0] == 404
    api.create_pod("default", "p1", labels={"app": "a", "gone": "x"})
    code, _, pod = call(api, "GET", PODS + "p1")
    assert code == 200 and pod["kind"] == "Pod"
    rv = pod["metadata"]["resourceVersion"]
    code, _, pod = call(api, "PATCH", PODS + "p1",
                        {"metadata": {"labels": {"role": "leader",
                                                 "gone": None}}},
                        headers=MERGE)
    assert code == 200
    assert pod["metadata"]["labels"] == {"app": "a", "role": "leader"}
    assert pod["metadata"]["resourceVersion"] != rv
    assert api.pod_labels("default", "p1") == {"app": "a", "role": "leader"}
    h = api.pod_history("default", "p1")
    assert [x[3] for x in h] == [{"app": "a", "gone": "x"},
                                 {"app": "a", "role": "leader"}]
    assert h[-1][4] == TOK
    # The same patch again changes nothing: no new history entry.
    code, _, again = call(api, "PATCH", PODS + "p1",
                          {"metadata": {"labels": {"role": "leader"}}},
                          headers=MERGE)
    assert code == 200
    assert again["metadata"]["resourceVersion"] == \
        pod["metadata"]["resourceVersion"]
    assert len(api.pod_history("default", "p1")) == 2


def test_pod_patch_errors(api):
    api.create_pod("default", "p2")
    # A plain JSON body is not a patch type the server accepts.
    assert call(api, "PATCH", PODS + "p2", {"metadata": {}})[0] == 415
    assert call(api, "PATCH", PODS + "missing", {"metadata": {}},
                headers=MERGE)[0] == 404
    assert call(api, "PATCH", PODS + "p2", b"not json", headers=MERGE)[0] \
        == 400
    assert call(api, "PATCH", PODS + "p2", {"metadata": {"name": "other"}},
                headers=MERGE)[0] == 422
    assert call(api, "PUT", PODS + "p2", {"metadata": {}})[0] == 405
    assert call(api, "PATCH", PODS + "p2", {"metadata": {}}, headers=MERGE,
                token="bad")[0] == 401
    api.set_pod_labels("default", "p2", {"k": "v"})
    assert api.pod_labels("default", "p2") == {"k": "v"}


def test_list_pages(api):
    """A list's limit and continue: pages by name, each with the token of
    the next while more are left; resourceVersion=0 answers whole unless
    list_cache_pages; a continue beside a resourceVersion is a 400."""
    for k in range(5):
        api.create_lease("default", "p%d" % k, {"holderIdentity": "x"},
                         labels={"g": "a"})
    api.create_lease("default", "q", {"holderIdentity": "x"})
    base = "/apis/coordination.k8s.io/v1/namespaces/default/leases" \
        "?labelSelector=g%3Da&limit=2"
    names, path = [], base
    while True:
        code, _, body = call(api, "GET", path)
        assert code == 200
        names += [o["metadata"]["name"] for o in body["items"]]
        cont = body["metadata"].get("continue")
        if not cont:
            break
        assert len(body["items"]) == 2
        path = base + "&continue=" + urllib.parse.quote(cont)
    assert names == ["p0", "p1", "p2", "p3", "p4"]
    code, _, body = call(api, "GET", base + "&resourceVersion=0")
    assert len(body["items"]) == 5 and "continue" not in body["metadata"]
    api.list_cache_pages = True
    code, _, body = call(api, "GET", base + "&resourceVersion=0")
    assert len(body["items"]) == 2 and body["metadata"]["continue"]
    code, _, _ = call(api, "GET", base + "&resourceVersion=0&continue=" +
                      urllib.parse.quote(body["metadata"]["continue"]))
    assert code == 400


# -- readers that see the past ---------------------------------------------

def test_read_lag_answers_a_named_get_from_the_past(api):
    o1 = call(api, "POST", BASE, lease("p1"))[2]
    time.sleep(0.3)
    o2 = put_holder(api, "p1", "b")
    # Off: the present.
    assert rv_of(call(api, "GET", BASE + "/p1")[2]) == rv_of(o2)
    api.read_lag(0.2, token=TOK)
    code, _, got = call(api, "GET", BASE + "/p1")
    assert code == 200 and rv_of(got) == rv_of(o1)
    assert got["spec"]["holderIdentity"] == "a"
    # Other tokens, and writes, see the present: a PUT over it is a 409.
    assert rv_of(call(api, "GET", BASE + "/p1", token="token-b")[2]) == \
        rv_of(o2)
    code, _, body = call(api, "PUT", BASE + "/p1", lease(
        "p1", holder="c", rv=rv_of(got), uid=got["metadata"]["uid"]))
    assert code == 409 and body["reason"] == "Conflict"
    # A Lease younger than the lag is not there yet.
    call(api, "POST", BASE, lease("p2"))
    assert call(api, "GET", BASE + "/p2")[0] == 404
    assert api.past_counts()["stale_get"] == 2
    time.sleep(0.35)
    assert rv_of(call(api, "GET", BASE + "/p1")[2]) != rv_of(o1)
    api.read_lag(0, token=TOK)
    assert call(api, "GET", BASE + "/p2")[0] == 200


def test_list_lag_answers_a_list_at_rv_0_from_the_past(api):
    q = "?labelSelector=app%3Dg&resourceVersion=0"
    call(api, "POST", BASE, lease("m1"))
    api.modify_lease(NS, "m1", lambda o: o["metadata"].update(
        labels={"app": "g"}))
    time.sleep(0.3)
    api.create_lease(NS, "m2", {"holderIdentity": "x"}, labels={"app": "g"})
    api.modify_lease(NS, "m1", lambda o: o["spec"].update(
        holderIdentity="z"))
    now = call(api, "GET", BASE + q)[2]
    assert [i["metadata"]["name"] for i in now["items"]] == ["m1", "m2"]
    api.list_lag(0.2)
    old = call(api, "GET", BASE + q)[2]
    assert [i["metadata"]["name"] for i in old["items"]] == ["m1"]
    assert old["items"][0]["spec"]["holderIdentity"] == "a"
    assert int(old["metadata"]["resourceVersion"]) < \
        int(now["metadata"]["resourceVersion"])
    # Only a list at resourceVersion=0 comes from the cache.
    fresh = call(api, "GET", BASE + "?labelSelector=app%3Dg")[2]
    assert len(fresh["items"]) == 2
    assert api.past_counts()["stale_list"] == 1
    api.list_lag(0)
    assert len(call(api, "GET", BASE + q)[2]["items"]) == 2


def test_watch_replay_resumes_on_an_older_apiserver(api, watch):
    call(api, "POST", BASE, lease("r1"))
    ups = [put_holder(api, "r1", h) for h in "bcd"]
    api.watch_replay(2, count=1)
    w = watch(wq("r1", rv=rv_of(ups[2]), bookmarks=False))
    evs = w.events(2)
    assert [rv_of(e["object"]) for e in evs] == [rv_of(ups[1]),
                                                 rv_of(ups[2])]
    up = put_holder(api, "r1", "e")
    assert rv_of(w.event()["object"]) == rv_of(up)
    assert api.past_counts()["replayed"] == 2
    # Used up: the next watch resumes where it is asked to.
    w2 = watch(wq("r1", rv=rv_of(up), bookmarks=False))
    with pytest.raises(socket.timeout):
        w2.chunk(timeout=0.3)


def test_watch_disorder_duplicates_skips_and_reorders(api, watch):
    call(api, "POST", BASE, lease("d1"))
    w = watch(wq("d1", rv=rv_of(api.get_lease(NS, "d1")), bookmarks=False))
    api.watch_disorder(dup=1.0)
    up = put_holder(api, "d1", "b")
    assert [rv_of(e["object"]) for e in w.events(2)] == [rv_of(up)] * 2
    api.watch_disorder(reorder=1.0)
    u1 = put_holder(api, "d1", "c")
    with pytest.raises(socket.timeout):
        w.chunk(timeout=0.3)            # held back
    api.watch_disorder(0, 0, 0)
    u2 = put_holder(api, "d1", "d")
    assert [rv_of(e["object"]) for e in w.events(2)] == [rv_of(u2),
                                                         rv_of(u1)]
    api.watch_disorder(skip=1.0)
    put_holder(api, "d1", "e")
    with pytest.raises(socket.timeout):
        w.chunk(timeout=0.3)            # skipped
    api.watch_disorder(0, 0, 0)
    u4 = put_holder(api, "d1", "f")
    assert rv_of(w.event()["object"]) == rv_of(u4)
    c = api.past_counts()
    assert (c["dup"], c["reorder"], c["skip"]) == (1, 1, 1)


def test_watch_fault_too_large_is_504_in_the_stream(api, watch):
    o = call(api, "POST", BASE, lease("t1"))[2]
    ahead = str(int(rv_of(o)) + 5)
    f = api.watch_fault("too_large", count=1, hold_ms=300)
    w = watch(wq("t1", rv=ahead))
    assert w.status == 200
    evs, how = w.until_end()
    assert how == "end"
    assert w.t_headers - w.t_sent >= 0.25     # the cacher's wait first
    assert evs == [{"type": "ERROR", "object": {
        "kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure",
        "message": "Timeout: Too large resource version: %s, current: %s"
        % (ahead, rv_of(o)),
        "reason": "Timeout",
        "details": {"causes": [{"reason": "ResourceVersionTooLarge",
                                "message": "Too large resource version"}],
                    "retryAfterSeconds": 1},
        "code": 504}}]
    assert f.hits == 1 and api.past_counts()["too_large"] == 1
    # The default wait is the cacher's 3 s.
    assert api.watch_fault("too_large", count=0).hold_ms == 3000


def test_access_reviews_pods_events_and_date(api):
    """What the doctor asks: reviews answered by the test's deny rules,
    who a token is, pods and Events listed, a Date shifted on demand."""
    ssar = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
    sar = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
    ra = {"verb": "update", "group": "coordination.k8s.io",
          "resource": "leases", "namespace": NS, "name": "app"}
    code, _, b = call(api, "POST", ssar, {"spec": {"resourceAttributes": ra}})
    assert code == 201 and b["status"]["allowed"] is True
    api.deny("update", "leases", ns=NS, user="system:serviceaccount:x:y")
    code, _, b = call(api, "POST", ssar, {"spec": {"resourceAttributes": ra}})
    assert b["status"]["allowed"] is True       # another user's rule
    code, _, b = call(api, "POST", sar, {"spec": {
        "resourceAttributes": ra, "user": "system:serviceaccount:x:y"}})
    assert code == 201 and b["status"]["allowed"] is False
    api.set_token_user(TOK, "system:serviceaccount:x:y")
    code, _, b = call(api, "POST", ssar, {"spec": {"resourceAttributes": ra}})
    assert b["status"]["allowed"] is False
    code, _, b = call(api, "POST",
                      "/apis/authentication.k8s.io/v1/selfsubjectreviews", {})
    assert b["status"]["userInfo"]["username"] == "system:serviceaccount:x:y"
    assert [k for k, _, _ in api.reviews()] == [
        "SelfSubjectAccessReview", "SelfSubjectAccessReview",
        "SubjectAccessReview", "SelfSubjectAccessReview"]
    api.reviews_served = False
    code, _, _ = call(api, "POST", ssar, {"spec": {"resourceAttributes": ra}})
    assert code == 404

    api.create_pod(NS, "p-0", labels={"app": "a"}, service_account="sa")
    api.create_pod(NS, "q-0", labels={"app": "b"})
    code, _, b = call(api, "GET", "/api/v1/namespaces/%s/pods?"
                      "labelSelector=app%%3Da" % NS)
    assert code == 200 and [i["metadata"]["name"] for i in b["items"]] == \
        ["p-0"]
    assert b["items"][0]["spec"]["serviceAccountName"] == "sa"

    ev = {"involvedObject": {"kind": "Lease", "name": "app"},
          "reason": "LeaderElection", "message": "p-0 became leader"}
    assert call(api, "POST", "/api/v1/namespaces/%s/events" % NS, ev)[0] \
        == 201
    code, _, b = call(api, "GET", "/api/v1/namespaces/%s/events?"
                      "fieldSelector=involvedObject.name%%3Dapp" % NS)
    assert code == 200 and [i["message"] for i in b["items"]] == \
        ["p-0 became leader"]
    code, _, b = call(api, "GET", "/api/v1/namespaces/%s/events?"
                      "fieldSelector=involvedObject.name%%3Dother" % NS)
    assert b["items"] == []

    api.date_offset_s = -30
    _, hdrs, _ = call(api, "GET", BASE + "/none")
    date = email.utils.parsedate_to_datetime(hdrs["Date"]).timestamp()
    assert abs(date - (time.time() - 30)) < 2


def test_every_namespace_list_pages_patch_and_candidates(api):
    """What kubectl leaderd reads: GET .../v1/leases (every namespace,
    by namespace then name, paged with continue), the Lease's JSON merge
    PATCH (415 for another media type), .../v1beta1/leasecandidates."""
    for ns, name in (("b", "x"), ("a", "z"), ("a", "y")):
        api.create_lease(ns, name, {"holderIdentity": "h"})
    all_ = "/apis/coordination.k8s.io/v1/leases"
    code, _, page = call(api, "GET", all_ + "?limit=2")
    assert code == 200 and [(o["metadata"]["namespace"],
                             o["metadata"]["name"]) for o in
                            page["items"]] == [("a", "y"), ("a", "z")]
    tok = urllib.parse.quote(page["metadata"]["continue"])
    code, _, page = call(api, "GET", all_ + "?limit=2&continue=" + tok)
    assert [o["metadata"]["name"] for o in page["items"]] == ["x"]
    assert "continue" not in page["metadata"]
    path = "/apis/coordination.k8s.io/v1/namespaces/a/leases/y"
    patch = {"spec": {"preferredHolder": "p", "strategy":
                      "OldestEmulationVersion"}}
    code, _, body = call(api, "PATCH", path, patch)
    assert code == 415 and body["reason"] == "UnsupportedMediaType"
    code, _, body = call(api, "PATCH", path, patch, headers={
        "Content-Type": "application/merge-patch+json"})
    assert code == 200 and body["spec"] == {
        "holderIdentity": "h", "strategy": "OldestEmulationVersion",
        "preferredHolder": "p"}
    assert api.history(ns="a", name="y")[-1]["method"] == "PATCH"
    cands = "/apis/coordination.k8s.io/v1beta1/leasecandidates"
    assert call(api, "GET", cands)[0] == 404
    api.enable_candidates()
    api.plant_candidate("b", "c1", "x")
    api.plant_candidate("a", "c2", "y")
    code, _, body = call(api, "GET", cands)
    assert code == 200 and [(o["metadata"]["namespace"],
                             o["metadata"]["name"]) for o in
                            body["items"]] == [("a", "c2"), ("b", "c1")]
