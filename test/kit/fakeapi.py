#!/usr/bin/env python3
"""fakeapi -- a small Kubernetes API server for leaderd's integration tests.

It implements the coordination.k8s.io/v1 Lease endpoints with the
semantics of a real kube-apiserver (ref/clientgo-leaderelection.md 4):
a global resourceVersion counter, uid and creationTimestamp on create,
optimistic concurrency on PUT (409 Conflict, 422 without resourceVersion,
409 on a uid precondition), create-on-update, MicroTime and field
validation, and the real Status bodies for 400/401/404/409/422.  A
list by label selector pages with limit and continue (resourceVersion=0
answers whole, as a watch cache without snapshots does, unless
list_cache_pages is set).  Core
events (POST /api/v1/namespaces/NS/events) are accepted and kept.  Pods
(GET and JSON merge PATCH on /api/v1/namespaces/NS/pods/NAME, for the
leader label) exist only when a test creates them, and every change of
their labels is kept with its time (pod_history).

On top of that it has fault switches, global or per bearer token (every
leaderd under test gets its own token, so a fault can target one
instance): delay, status (5xx/429 with optional Retry-After), drop (read
the request, close without answering or applying), apply_then_close
(apply the write, close without answering: the ambiguous write),
blackhole (hold the request unanswered until the fault is cleared),
answer_late (apply the write at once, answer it hold_ms later),
apply_then_status (apply the write, answer a 5xx Status), each
optionally limited to K requests and to some methods.  A delay holds a
request and then applies it, compare-and-swap included, whether or not
its client is still there.

Watches on a namespace's leases (GET .../leases?watch=1, as the real
server's watch cache serves them: chunked JSON lines ADDED/MODIFIED/
DELETED/BOOKMARK/ERROR, 410 Expired in the stream for an RV older than
the last 100 events, bookmarks every 60 s and 2 s before the deadline,
a clean end after timeoutSeconds) are logged with method "WATCH"; their
fault switches (cut after N events, silent, 410, 403, lag, stall) are in
the block "Lease watch" below.

Every successful write is appended to a history list, every request to a
request log, both stamped with time.monotonic() (CLOCK_MONOTONIC, the
same clock leaderd uses), so tests can compare server-side times with
what leaderd answered.

In-process use (pytest):

    api = FakeAPI(tokens=["t1"]).start()
    api.write_kubeconfig(path, token="t1")
    api.fault("status", token="t1", status=503, methods=["PUT"], count=3)
    ...
    api.stop()

As a program (the demo, manual experiments):

    python3 fakeapi.py [--port N] [--http] [--token T ...] [--dir D]
        [--key-type ec|rsa:BITS]

prints the URL and the path of a kubeconfig for the first token, then
serves until interrupted.

Python 3.11 standard library only; certificates come from the openssl
command line tool.
"""

import argparse
import base64
import copy
import datetime
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

GROUP = "coordination.k8s.io"
LEASE_API = GROUP + "/v1"
LEASE_PREFIX = "/apis/coordination.k8s.io/v1/namespaces/"
LEASE_ALL = "/apis/coordination.k8s.io/v1/leases"     # every namespace's
CAND_API = GROUP + "/v1beta1"
CAND_PREFIX = "/apis/coordination.k8s.io/v1beta1/namespaces/"
CAND_ALL = "/apis/coordination.k8s.io/v1beta1/leasecandidates"
POD_PREFIX = "/api/v1/namespaces/"
EVENT_PREFIXES = ("/api/v1/namespaces/", "/apis/events.k8s.io/v1/namespaces/")
BODY_MAX = 3 * 1024 * 1024
BLACKHOLE_MAX_S = 120.0  # a held request is answered by a close at the latest then

MICROTIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
DNS1123_SUBDOMAIN_RE = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1123_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case "
               "alphanumeric characters, '-' or '.', and must start and end "
               "with an alphanumeric character (e.g. 'example.com', regex "
               "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?"
               "(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
OPTIMISTIC_LOCK_MSG = ("the object has been modified; please apply your "
                       "changes to the latest version and try again")

SPEC_ORDER = ("holderIdentity", "leaseDurationSeconds", "acquireTime",
              "renewTime", "leaseTransitions", "strategy", "preferredHolder")
META_ORDER = ("name", "generateName", "namespace", "uid", "resourceVersion",
              "generation", "creationTimestamp", "deletionTimestamp",
              "deletionGracePeriodSeconds", "labels", "annotations",
              "ownerReferences", "finalizers", "managedFields")
STRATEGIES = ("OldestEmulationVersion",)

REASONS = {
    400: "BadRequest", 401: "Unauthorized", 403: "Forbidden",
    404: "NotFound", 405: "MethodNotAllowed", 409: "Conflict",
    413: "RequestEntityTooLarge", 415: "UnsupportedMediaType",
    422: "Invalid", 429: "TooManyRequests", 500: "InternalError",
    502: "BadGateway", 503: "ServiceUnavailable", 504: "Timeout",
}
FAULT_KINDS = ("delay", "status", "drop", "apply_then_close", "blackhole",
               "answer_late", "apply_then_status")


def status_body(code, message, reason=None, details=None):
    """A metav1.Status failure object, fields in apimachinery's order."""
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": message,
            "reason": reason if reason is not None else REASONS.get(code, "")}
    if details is not None:
        body["details"] = details
    body["code"] = code
    return body


def lease_details(name, kind="leases"):
    return {"name": name, "group": GROUP, "kind": kind}


def not_found(name):
    return status_body(404, 'leases.coordination.k8s.io "%s" not found' % name,
                       "NotFound", lease_details(name))


def conflict(name, why=OPTIMISTIC_LOCK_MSG):
    return status_body(409, 'Operation cannot be fulfilled on '
                       'leases.coordination.k8s.io "%s": %s' % (name, why),
                       "Conflict", lease_details(name))


def already_exists(name):
    return status_body(409, 'leases.coordination.k8s.io "%s" already exists'
                       % name, "AlreadyExists", lease_details(name))


def invalid(name, causes, kind="Lease"):
    """422 Invalid; causes are (field, value_repr, detail) triples."""
    errs = ["%s: Invalid value: %s: %s" % c for c in causes]
    agg = errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
    msg = '%s.%s "%s" is invalid: %s' % (kind, GROUP, name, agg)
    det = lease_details(name, kind)
    det["causes"] = [{"reason": "FieldValueInvalid",
                      "message": "Invalid value: %s: %s" % (v, d),
                      "field": f} for f, v, d in causes]
    return status_body(422, msg, "Invalid", det)


def bad_request(message):
    return status_body(400, message, "BadRequest")


UNAUTHORIZED = status_body(401, "Unauthorized", "Unauthorized")


def _merge_patch(target, patch):
    """RFC 7386 JSON merge patch: objects merge, null deletes."""
    if not isinstance(patch, dict):
        return patch
    if not isinstance(target, dict):
        target = {}
    for k, v in patch.items():
        if v is None:
            target.pop(k, None)
        else:
            target[k] = _merge_patch(target.get(k), v)
    return target


def go_quote(v):
    return json.dumps(v) if isinstance(v, str) else str(v)


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def now_microtime():
    return datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ")


class _DecodeError(Exception):
    """The body cannot be decoded as a Lease: a 400 BadRequest."""


def _decode_lease(raw):
    """Parse and type-check a Lease body the way the Go decoder would."""
    try:
        obj = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise _DecodeError("couldn't get version/kind; json parse error: %s" % e)
    if not isinstance(obj, dict):
        raise _DecodeError("couldn't get version/kind; json parse error: "
                           "json: cannot unmarshal %s into Go value of type "
                           "struct { APIVersion string \"json:\\\"apiVersion,"
                           "omitempty\\\"\"; Kind string \"json:\\\"kind,"
                           "omitempty\\\"\" }" % type(obj).__name__)
    av, kind = obj.get("apiVersion"), obj.get("kind")
    if av not in (None, "", LEASE_API):
        raise _DecodeError("the API version in the data (%s) does not match "
                           "the expected API version (%s)" % (av, LEASE_API))
    if kind not in (None, "", "Lease"):
        raise _DecodeError("no kind \"%s\" is registered for version \"%s\" "
                           "in scheme" % (kind, LEASE_API))
    prefix = 'Lease in version "v1" cannot be handled as a Lease: '
    meta = obj.get("metadata")
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise _DecodeError(prefix + "json: cannot unmarshal %s into Go struct "
                           "field Lease.metadata of type v1.ObjectMeta"
                           % _jtype(meta))
    for k in ("name", "namespace", "uid", "resourceVersion", "generateName"):
        if k in meta and meta[k] is not None and not isinstance(meta[k], str):
            raise _DecodeError(prefix + "json: cannot unmarshal %s into Go "
                               "struct field ObjectMeta.metadata.%s of type "
                               "string" % (_jtype(meta[k]), k))
    for k in ("labels", "annotations"):
        v = meta.get(k)
        if v is not None and (not isinstance(v, dict) or
                              not all(isinstance(x, str) for x in v.values())):
            raise _DecodeError(prefix + "json: cannot unmarshal %s into Go "
                               "struct field ObjectMeta.metadata.%s of type "
                               "map[string]string" % (_jtype(v), k))
    spec = obj.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise _DecodeError(prefix + "json: cannot unmarshal %s into Go struct "
                           "field Lease.spec of type v1.LeaseSpec" % _jtype(spec))
    out = {}
    for k in SPEC_ORDER:
        v = spec.get(k)
        if v is None:
            continue  # omitempty pointers: null and absent are the same
        if k in ("holderIdentity", "strategy", "preferredHolder"):
            if not isinstance(v, str):
                raise _DecodeError(prefix + "json: cannot unmarshal %s into Go "
                                   "struct field LeaseSpec.spec.%s of type "
                                   "string" % (_jtype(v), k))
        elif k in ("leaseDurationSeconds", "leaseTransitions"):
            if (isinstance(v, bool) or not isinstance(v, int) or
                    not -2**31 <= v < 2**31):
                raise _DecodeError(prefix + "json: cannot unmarshal %s into Go "
                                   "struct field LeaseSpec.spec.%s of type "
                                   "int32" % (_jtype(v), k))
        else:
            if not isinstance(v, str):
                raise _DecodeError(prefix + "json: cannot unmarshal %s into Go "
                                   "struct field LeaseSpec.spec.%s of type "
                                   "string" % (_jtype(v), k))
            if not _valid_microtime(v):
                raise _DecodeError(prefix + 'parsing time "%s" as '
                                   '"2006-01-02T15:04:05.000000Z07:00": '
                                   'cannot parse "%s" as ".000000"' % (v, v))
        out[k] = v
    return obj, meta, out


def _jtype(v):
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null"


def _valid_microtime(s):
    if not MICROTIME_RE.match(s):
        return False
    try:
        datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ")
    except ValueError:
        return False
    return True


def _validate(name, spec):
    """Lease validation (ref 4.5): a list of (field, value, detail)."""
    causes = []
    if not name or len(name) > 253 or not DNS1123_SUBDOMAIN_RE.match(name):
        causes.append(("metadata.name", go_quote(name), DNS1123_MSG))
    d = spec.get("leaseDurationSeconds")
    if d is not None and d <= 0:
        causes.append(("spec.leaseDurationSeconds", str(d),
                       "must be greater than 0"))
    t = spec.get("leaseTransitions")
    if t is not None and t < 0:
        causes.append(("spec.leaseTransitions", str(t),
                       "must be greater than or equal to 0"))
    st = spec.get("strategy")
    if st is not None and "/" not in st and st not in STRATEGIES:
        causes.append(("spec.strategy", go_quote(st), "supported values: " +
                       ", ".join('"%s"' % s for s in STRATEGIES)))
    if spec.get("preferredHolder") and not spec.get("strategy"):
        causes.append(("spec.preferredHolder", go_quote(spec["preferredHolder"]),
                       "may only be specified if `strategy` is defined"))
    return causes


def _ordered(d, order):
    out = {k: d[k] for k in order if k in d}
    for k, v in d.items():
        if k not in out and k in order:
            out[k] = v
    return out


class Fault:
    """One fault switch.  Created by FakeAPI.fault(); see there."""

    def __init__(self, kind, token=None, methods=None, count=None,
                 delay_ms=0, status=503, retry_after=None, hold_ms=None,
                 path_prefix=None, message=None, path=None):
        if kind not in FAULT_KINDS:
            raise ValueError("unknown fault kind %r (one of %s)"
                             % (kind, ", ".join(FAULT_KINDS)))
        self.kind = kind
        self.token = token
        self.methods = None if methods is None else {m.upper() for m in methods}
        self.count = count
        self.delay_ms = delay_ms
        self.status = status
        self.retry_after = retry_after
        self.hold_ms = hold_ms
        self.path_prefix = path_prefix
        self.path = path
        self.message = message
        self.hits = 0
        self.cleared = threading.Event()

    def matches(self, token, method, path):
        if self.count is not None and self.count <= 0:
            return False
        if self.token is not None and token != self.token:
            return False
        if self.methods is not None and method not in self.methods:
            return False
        if self.kind in WATCH_FAULT_KINDS and method != "WATCH":
            return False
        if self.path_prefix is not None and not path.startswith(self.path_prefix):
            return False
        if self.path is not None and path != self.path:
            return False
        return True

    def __repr__(self):
        return ("Fault(%s token=%r methods=%r count=%r hits=%d)"
                % (self.kind, self.token, self.methods, self.count, self.hits))


# -- Lease watch ------------------------------------------------------
#
# GET .../namespaces/NS/leases?watch=1[&fieldSelector=...][&labelSelector=
# ...][&resourceVersion=RV][&allowWatchBookmarks=true][&timeoutSeconds=N]
# as kube-apiserver 1.36 serves it (checked with curl against the e2e
# harness): 200, chunked, one {"type":..,"object":..} JSON line per event
# (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR); an event that happens alone
# is one chunk, a backlog shares chunks of up to 2048 bytes (_ChunkWriter).
# The request is logged with method "WATCH" (also what fault switches
# match against: a fault for methods=["GET"] leaves watches alone), at the
# moment the stream starts, and updated in place while it runs.  This
# block keeps its imports here so that it merges as one piece.

import collections  # noqa: E402
import random  # noqa: E402
import select  # noqa: E402
import urllib.parse  # noqa: E402

WATCH_FAULT_KINDS = ("watch_cut", "watch_silent", "watch_gone",
                     "watch_too_large")
FAULT_KINDS = FAULT_KINDS + WATCH_FAULT_KINDS
WATCH_HISTORY = 100             # events kept for watches from an old RV
WATCH_BOOKMARK_S = 60.0         # kube-apiserver: roughly every minute
WATCH_PRETIMEOUT_S = 2.0        # and one 2 s before the stream's deadline
WATCH_MIN_REQUEST_TIMEOUT = 1800  # no timeoutSeconds: [1, 2) x this
WATCH_SLICE_S = 0.2             # how often a stream looks for a gone client
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
LEASE_FIELDS = ("metadata.name", "metadata.namespace")


def watch_requested(path, query):
    """True for a watch on a namespace's lease collection, or on every
    namespace's (the only watches fakeapi serves); such requests are
    logged as method "WATCH"."""
    if "watch" not in query:
        return False
    if path != LEASE_ALL:
        if not path.startswith(LEASE_PREFIX):
            return False
        parts = path[len(LEASE_PREFIX):].split("/")
        if len(parts) != 2 or not parts[0] or parts[1] != "leases":
            return False
    return query_bool(urllib.parse.parse_qs(query, keep_blank_values=True),
                      "watch")


def query_bool(q, key):
    """A boolean query parameter as the apiserver converts it: absent is
    false, the first value "0" or "false" (any case) is false, anything
    else (even "" or "maybe") is true."""
    v = q.get(key)
    if not v:
        return False
    return not (v[0] == "0" or v[0].lower() == "false")


def forbidden(name, verb="watch", user="system:serviceaccount:default:leaderd",
              ns="default"):
    """The 403 Status of an RBAC denial on leases."""
    what = 'leases.coordination.k8s.io "%s"' % name if name else \
        "leases.coordination.k8s.io"
    msg = ('%s is forbidden: User "%s" cannot %s resource "leases" in API '
           'group "coordination.k8s.io" in the namespace "%s"'
           % (what, user, verb, ns))
    det = lease_details(name) if name else {"group": GROUP, "kind": "leases"}
    return status_body(403, msg, "Forbidden", det)


def too_old(rv, oldest):
    return status_body(410, "too old resource version: %s (%d)" % (rv, oldest),
                       "Expired")


def _parse_selector(s, fields):
    """[(key, op, value)] for "k=v,k==v,k!=v"; fields: the allowed keys
    (None: any, as for labels).  Raises ValueError with the server's
    message."""
    out = []
    for term in (s or "").split(","):
        term = term.strip()
        if not term:
            continue
        m = re.match(r"^([^!=\s]+)\s*(==|!=|=)\s*(.*)$", term)
        if not m:
            raise ValueError("invalid selector: '%s'; can't understand '%s'"
                             % (s, term))
        k, op, v = m.group(1), m.group(2), m.group(3).strip()
        if fields is not None and k not in fields:
            raise ValueError('"%s" is not a known field selector: only '
                             '"metadata.name", "metadata.namespace"' % k)
        out.append((k, "!=" if op == "!=" else "=", v))
    return out


def _selected(obj, fsel, lsel):
    meta = obj.get("metadata", {})
    for k, op, v in fsel:
        have = meta.get(k.split(".", 1)[1], "")
        if (have == v) != (op == "="):
            return False
    labels = meta.get("labels") or {}
    for k, op, v in lsel:
        if (labels.get(k) == v) != (op == "="):
            return False
    return True


def _bookmark(rv, annotations=None):
    """A BOOKMARK event's object as 1.36 sends it ("spec": {} included)."""
    meta = {"resourceVersion": str(rv)}
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"kind": "Lease", "apiVersion": LEASE_API, "metadata": meta,
            "spec": {}}


def _client_gone(sock):
    """True when the client closed its end (or the socket broke).  Bytes
    it sent meanwhile (a TLS close_notify) are read and dropped."""
    try:
        r, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    if not r:
        return False
    try:
        d = socket.socket.recv(sock, 1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        return False
    except OSError:
        return True
    if not d:
        return True
    old = sock.gettimeout()
    try:
        sock.settimeout(0.1)
        return sock.recv(4096) == b""
    except (socket.timeout, ssl.SSLWantReadError):
        return False
    except OSError:
        return True
    finally:
        try:
            sock.settimeout(old)
        except OSError:
            pass


class _ChunkWriter:
    """How Go's net/http writes a chunked answer: a 2048-byte buffer in
    front of the chunk encoder.  flush() sends what is buffered as one
    chunk; a full buffer goes out as a chunk of its own (so a chunk can
    end inside an event); a write larger than the buffer into an empty
    buffer is one chunk.  The apiserver flushes when no further event is
    ready: events that happen one by one arrive one chunk each, a
    backlog (a replay from an old RV, the initial ADDED events and their
    bookmark) shares chunks."""

    SIZE = 2048

    def __init__(self, wfile):
        self.wfile = wfile
        self.buf = b""

    def write(self, data):
        while len(data) > self.SIZE - len(self.buf):
            if not self.buf:
                self._chunk(data)
                return
            n = self.SIZE - len(self.buf)
            self._chunk(self.buf + data[:n])
            self.buf, data = b"", data[n:]
        self.buf += data

    def flush(self):
        if self.buf:
            self._chunk(self.buf)
            self.buf = b""

    def _chunk(self, b):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))


class _WatchStream:
    """One open watch: its log entry and the switches that act on it."""

    def __init__(self, token, entry):
        self.token = token
        self.entry = entry      # the request log entry (updated live)
        self.cut = False        # close now, without the terminating chunk
        self.end = False        # end now, cleanly (as on timeout)
        self.held = None        # an event held back (watch_disorder)


class _WatchHub:
    """The event history every watch reads from, and the open streams.
    Guarded by cond; publish() is called with FakeAPI._lock held."""

    def __init__(self, floor):
        self.cond = threading.Condition()
        self.events = collections.deque(maxlen=WATCH_HISTORY)
        self.floor = floor      # a watch from an RV below this gets 410
        self.seq = 0            # bumped on every change streams wait for
        self.streams = []
        self.bookmark_s = WATCH_BOOKMARK_S
        self.pretimeout_s = WATCH_PRETIMEOUT_S
        self.lag = {}           # token (None: all) -> seconds
        self.stalled = set()    # tokens (None: all) whose streams go quiet

    def publish(self, etype, obj, rv):
        ev = {"rv": rv, "type": etype, "t": time.monotonic(),
              "ns": obj["metadata"].get("namespace", ""),
              "name": obj["metadata"].get("name", ""),
              "object": obj}
        with self.cond:
            dropped = len(self.events) == self.events.maxlen
            self.events.append(ev)
            if dropped:
                self.floor = self.events[0]["rv"] - 1
            self.seq += 1
            self.cond.notify_all()

    def kick(self):
        with self.cond:
            self.seq += 1
            self.cond.notify_all()

    def lag_of(self, token):
        return max(self.lag.get(token, 0.0), self.lag.get(None, 0.0))

    def is_stalled(self, token):
        return token in self.stalled or None in self.stalled


class _WatchMixin:
    """The Lease watch of FakeAPI (see the block comment above)."""

    _watch_hub = None

    def _hub(self):
        with self._lock:
            if self._watch_hub is None:
                self._watch_hub = _WatchHub(self._rv)
            return self._watch_hub

    def _watch_publish(self, method, obj, created):
        """Called by _record (lock held) for every write; Leases only."""
        if obj.get("kind") != "Lease":
            return
        if self._watch_hub is None:
            # Everything after the RV before this write is retained.
            self._watch_hub = _WatchHub(self._rv - 1)
        hub = self._watch_hub
        if method == "DELETE":
            etype = "DELETED"
        else:
            etype = "ADDED" if created else "MODIFIED"
        ev = copy.deepcopy(obj)
        # The object of a DELETED event carries the deletion's RV.
        ev["metadata"]["resourceVersion"] = str(self._rv)
        hub.publish(etype, ev, self._rv)

    # -- public ----------------------------------------------------------

    def watch_settings(self, bookmark_interval=None, pretimeout=Ellipsis,
                       history=None):
        """bookmark_interval: seconds between BOOKMARK events (default 60,
        as the real server); pretimeout: seconds before a stream's deadline
        at which one more bookmark is sent (default 2, None: none);
        history: events kept (default 100; older RVs get 410)."""
        hub = self._hub()
        with hub.cond:
            if bookmark_interval is not None:
                hub.bookmark_s = float(bookmark_interval)
            if pretimeout is not Ellipsis:
                hub.pretimeout_s = pretimeout
            if history is not None:
                if history < 1:
                    raise ValueError("history must be at least 1")
                dropped = len(hub.events) > history
                hub.events = collections.deque(hub.events, maxlen=history)
                if dropped:
                    hub.floor = max(hub.floor, hub.events[0]["rv"] - 1)
            hub.seq += 1
            hub.cond.notify_all()

    def watch_fault(self, kind, token=None, count=None, after=0, hold_ms=None):
        """A fault for the next watch requests (a Fault; clear_fault()
        switches it off).  kind: "cut" (after `after` event lines, bookmarks
        included, close without the terminating chunk), "silent" (headers, then nothing
        until the client goes, the fault is cleared (a close) or hold_ms),
        "gone" (200 and a 410 Expired ERROR event, the real answer to an
        expired resourceVersion), "forbidden" (403 with the RBAC Status),
        "too_large" (200, then after hold_ms (default 3000, the cacher's
        wait) one ERROR event with the 504 "Too large resource version"
        Status, then a clean end: a watch from a version ahead of this
        apiserver's cache).
        Other faults (delay, status, drop, blackhole) apply to watches as
        to any request when their methods include "WATCH" or are None."""
        if kind == "forbidden":
            return self.fault("status", token=token, methods=["WATCH"],
                              count=count, status=403)
        if kind not in ("cut", "silent", "gone", "too_large"):
            raise ValueError("unknown watch fault %r" % kind)
        if kind == "too_large" and hold_ms is None:
            hold_ms = TOO_LARGE_WAIT_S * 1000
        f = self.fault("watch_" + kind, token=token, methods=["WATCH"],
                       count=count, hold_ms=hold_ms)
        f.after = after
        return f

    def watch_compact(self):
        """Forget the event history: every watch from an RV below the
        current one gets 410 Expired (as after an etcd compaction)."""
        hub = self._hub()
        with self._lock, hub.cond:
            hub.events.clear()
            hub.floor = self._rv
            hub.seq += 1

    def watch_lag(self, seconds, token=None):
        """Deliver events `seconds` after they happen (token None: on
        every stream); applies to open streams at once.  0 ends it."""
        hub = self._hub()
        with hub.cond:
            if seconds:
                hub.lag[token] = float(seconds)
            else:
                hub.lag.pop(token, None)
        hub.kick()

    def watch_stall(self, on=True, token=None):
        """Open and new streams of token (None: all) deliver nothing, no
        events and no bookmarks, and never end by themselves, until
        watch_stall(False, token); then they go on where they were."""
        hub = self._hub()
        with hub.cond:
            if on:
                hub.stalled.add(token)
            else:
                hub.stalled.discard(token)
        hub.kick()

    def watch_cut_open(self, token=Ellipsis):
        """Close the open streams (of token) at once, without the
        terminating chunk.  Returns how many."""
        return self._watch_mark(token, "cut")

    def watch_end_open(self, token=Ellipsis):
        """End the open streams (of token) cleanly, as at their timeout.
        Returns how many."""
        return self._watch_mark(token, "end")

    def _watch_mark(self, token, what):
        hub = self._hub()
        with hub.cond:
            ss = [s for s in hub.streams
                  if token is Ellipsis or s.token == token]
            for s in ss:
                setattr(s, what, True)
            hub.seq += 1
            hub.cond.notify_all()
        return len(ss)

    def watches(self, token=Ellipsis, open_only=True):
        """Copies of the log entries of watch requests (of token); with
        open_only, those whose stream is still open."""
        return [e for e in self.requests(token=token, method="WATCH")
                if not open_only or e.get("streaming")]

    def request_counts(self, token=Ellipsis, since=None, until=None):
        """{method: number of requests} of token (None: without a token)
        received in [since, until); watches count as "WATCH"."""
        out = {}
        for e in self.requests(token=token, since=since):
            if until is None or e["t_recv"] < until:
                out[e["method"]] = out.get(e["method"], 0) + 1
        return out

    def watch_history(self):
        """The retained events: dicts with rv, type, t, ns, name, object."""
        hub = self._hub()
        with hub.cond:
            return copy.deepcopy(list(hub.events))

    # -- serving ---------------------------------------------------------

    def _serve_watch(self, h, entry, path, query, token):
        """Answer one watch request on handler h (fault switches, auth,
        parameters, then the stream).  entry is its request log entry."""
        ns = None if path == LEASE_ALL else \
            path[len(LEASE_PREFIX):].split("/")[0]
        fault, answered = self._open_faults(h, entry, token, "WATCH", path,
                                            ("apply_then_close",))
        if answered:
            return
        if token is None or token not in self.tokens:
            entry["code"] = 401
            h._send(401, UNAUTHORIZED)
            return
        q = urllib.parse.parse_qs(query, keep_blank_values=True)

        def arg(k, default=""):
            v = q.get(k)
            return v[0] if v else default
        try:
            fsel = _parse_selector(arg("fieldSelector"), LEASE_FIELDS)
            lsel = _parse_selector(arg("labelSelector"), None)
        except ValueError as e:
            entry["code"] = 400
            h._send(400, bad_request(str(e)))
            return
        name = next((v for k, op, v in fsel
                     if k == "metadata.name" and op == "="), "")
        if fault is not None and fault.kind == "status":
            code = fault.status
            hdrs = {}
            if fault.retry_after is not None:
                hdrs["Retry-After"] = str(fault.retry_after)
            if code == 403 and fault.message is None:
                body = forbidden(name, ns=ns)
            else:
                body = status_body(code, fault.message or
                                   "fakeapi: injected %d" % code)
            entry["code"] = code
            h._send(code, body, hdrs)
            return
        rv = arg("resourceVersion")
        entry["rv"] = rv
        ts = arg("timeoutSeconds")
        bookmarks = query_bool(q, "allowWatchBookmarks")
        err = None
        if rv and not rv.isdigit():
            # kube-apiserver 1.36 answers this with a 500 without reason.
            entry["code"] = 500
            h._send(500, {"kind": "Status", "apiVersion": "v1",
                          "metadata": {}, "status": "Failure",
                          "message": 'resourceVersion: Invalid value: "%s": '
                          'strconv.ParseUint: parsing "%s": invalid syntax'
                          % (rv, rv), "code": 500})
            return
        if ts and not re.fullmatch(r"[-+]?\d+", ts):
            err = 'strconv.ParseInt: parsing "%s": invalid syntax' % ts
        elif arg("resourceVersionMatch") or arg("sendInitialEvents"):
            err = "fakeapi: resourceVersionMatch and sendInitialEvents " \
                "are not supported"
        if err is not None:
            entry["code"] = 400
            h._send(400, bad_request(err))
            return
        timeout = int(ts) if ts else 0
        if timeout <= 0:
            timeout = WATCH_MIN_REQUEST_TIMEOUT * (1 + random.random())
        hub = self._hub()
        expired, initial = None, []
        with self._lock:
            if fault is not None and fault.kind == "watch_gone":
                expired = too_old(rv or self._rv, hub.floor)
            elif fault is not None and fault.kind == "watch_too_large":
                ahead = int(rv) if rv and rv != "0" else self._rv + 1
                expired = too_large(ahead, min(ahead - 1, self._rv))
                self._past_state()["counts"]["too_large"] += 1
            elif rv in ("", "0"):
                for (ons, _), o in sorted(self._leases.items()):
                    if ns in (None, ons) and _selected(o, fsel, lsel):
                        initial.append(("ADDED", copy.deepcopy(o)))
                last = self._rv
                if bookmarks:
                    # 1.36 marks the end of the initial state so.
                    initial.append(("BOOKMARK", _bookmark(
                        last, {INITIAL_EVENTS_END: "true"})))
            elif int(rv) < hub.floor:
                expired = too_old(rv, hub.floor)
            else:
                last = self._past_replay_from(token, rv, hub)
        if fault is not None and fault.kind == "watch_too_large":
            # The cacher waits for its cache first, then answers.
            fault.cleared.wait((fault.hold_ms or 0) / 1000.0)
        stream = _WatchStream(token, entry)
        entry["code"] = 200
        entry["events"] = 0
        entry["end"] = None
        entry["streaming"] = True
        self._log_request(entry)
        with hub.cond:
            hub.streams.append(stream)
        try:
            h.send_response(200)
            h.send_header("Audit-Id", str(uuid.uuid4()))
            h.send_header("Cache-Control", "no-cache, private")
            h.send_header("Content-Type", "application/json")
            h.send_header("Transfer-Encoding", "chunked")
            h.end_headers()
            h.wfile.flush()
            end = self._stream(h, hub, stream, fault, ns, fsel, lsel,
                               bookmarks, timeout, expired, initial,
                               None if expired else last)
        except (OSError, ssl.SSLError, ValueError):
            end = "client"
        finally:
            with hub.cond:
                hub.streams.remove(stream)
        entry["end"] = end
        entry["streaming"] = False
        # Done before the last chunk goes out: a client that has read
        # the end of the stream finds the log entry complete.
        entry["t_done"] = time.monotonic()
        if end in ("timeout", "expired", "ended"):
            try:
                h.wfile.write(b"0\r\n\r\n")
            except (OSError, ssl.SSLError, ValueError):
                h.close_connection = True
        else:
            h.close_connection = True

    def _stream(self, h, hub, stream, fault, ns, fsel, lsel, bookmarks,
                timeout, expired, initial, last):
        """Write events until the stream ends; returns why: timeout,
        expired, ended (end_open), cut, silent (fault cleared or held
        long enough), client (gone), stop (the server stops)."""
        entry = stream.entry
        sock = h.connection
        out = _ChunkWriter(h.wfile)
        t0 = time.monotonic()
        deadline = t0 + timeout

        def send(etype, obj):
            """Buffer one event; True when a cut fault says stop now (what
            is buffered is flushed first)."""
            line = json.dumps({"type": etype, "object": obj},
                              separators=(",", ":")).encode() + b"\n"
            out.write(line)
            entry["events"] += 1
            if fault is not None and fault.kind == "watch_cut" and \
                    entry["events"] >= fault.after:
                out.flush()
                return True
            return False

        if fault is not None and fault.kind == "watch_cut" and \
                fault.after <= 0:
            return "cut"
        if expired is not None:
            cut = send("ERROR", expired)
            out.flush()
            return "cut" if cut else "expired"
        if fault is not None and fault.kind == "watch_silent":
            hold = BLACKHOLE_MAX_S
            if fault.hold_ms is not None:
                hold = min(hold, fault.hold_ms / 1000.0)
            end = t0 + hold
            while time.monotonic() < end:
                if self._stopping.is_set():
                    return "stop"
                if fault.cleared.is_set():
                    return "silent"
                if _client_gone(sock):
                    return "client"
                fault.cleared.wait(WATCH_SLICE_S)
            return "silent"
        for etype, o in initial:
            if send(etype, o):
                return "cut"
        out.flush()

        def next_bookmark(now):
            t = now + hub.bookmark_s
            if hub.pretimeout_s is not None and \
                    deadline - hub.pretimeout_s > now:
                t = min(t, deadline - hub.pretimeout_s)
            return t
        t_bm = next_bookmark(t0)
        while True:
            now = time.monotonic()
            if self._stopping.is_set():
                return "stop"
            if stream.cut:
                return "cut"
            if stream.end:
                return "ended"
            stalled = hub.is_stalled(stream.token)
            wake = deadline
            # Under both locks: the events and the global RV agree (a
            # write bumps the RV and publishes under FakeAPI._lock).
            with self._lock, hub.cond:
                seq = hub.seq
                floor = hub.floor
                cur_rv = self._rv
                pending = [e for e in hub.events if e["rv"] > last]
            if stalled:
                pending = []
            elif last < floor:
                # Fell out of the window (a lagging stream): the real
                # cacher closes such a watcher; the client re-lists.
                return "ended"
            lag = hub.lag_of(stream.token)
            for e in pending:
                if e["t"] + lag > now:
                    wake = min(wake, e["t"] + lag)
                    break
                last = e["rv"]
                if ns in (None, e["ns"]) and \
                        _selected(e["object"], fsel, lsel):
                    for etype, o in self._past_mangle(stream, e):
                        if send(etype, o):
                            return "cut"
            out.flush()
            if bookmarks and not stalled:
                if now >= t_bm:
                    later = [e["rv"] for e in pending if e["rv"] > last]
                    cur = later[0] - 1 if later else max(last, cur_rv)
                    last = cur
                    if send("BOOKMARK", _bookmark(cur)):
                        return "cut"
                    out.flush()
                    t_bm = next_bookmark(now)
                wake = min(wake, t_bm)
            if now >= deadline and not stalled:
                return "timeout"
            if _client_gone(sock):
                return "client"
            with hub.cond:
                if hub.seq == seq:
                    hub.cond.wait(max(0.0, min(wake - time.monotonic(),
                                               WATCH_SLICE_S)))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr, api):
        self.api = api
        if ":" in addr[0]:
            self.address_family = socket.AF_INET6
        super().__init__(addr, _Handler)

    def finish_request(self, request, client_address):
        # Runs in the connection's own thread: the TLS handshake happens
        # here, so a slow client never blocks accept().
        api = self.api
        sock = request
        try:
            # Go's net/http sets TCP_NODELAY on every connection, and so
            # does this server: an answer goes out as headers, then body,
            # and with Nagle on the body would wait for the client's
            # delayed ACK (40 ms on Linux) -- a delay kube-apiserver
            # never adds, which made every handover here 40 ms slower.
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if api._ssl_ctx is not None:
                sock.settimeout(10)
                try:
                    sock = api._ssl_ctx.wrap_socket(sock, server_side=True)
                except (ssl.SSLError, OSError) as e:
                    api._handshake(None, str(e))
                    return
                api._handshake(sock, None)
            sock.settimeout(api.idle_timeout)
            api._track(sock, True)
            try:
                self.RequestHandlerClass(sock, client_address, self)
            finally:
                api._track(sock, False)
        except (OSError, ssl.SSLError):
            pass
        finally:
            if sock is not request:
                try:
                    sock.close()
                except OSError:
                    pass

    def handle_error(self, request, client_address):
        if self.api.verbose:
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fakeapi/1"
    sys_version = ""
    _entry = None       # the request log entry of the request in hand


    def date_time_string(self, timestamp=None):
        # The Date header, shifted by date_offset_s (_ReviewMixin).
        off = getattr(self.server.api, "date_offset_s", 0)
        return super().date_time_string(
            (timestamp if timestamp is not None else time.time()) + off)

    def log_message(self, fmt, *args):
        if self.server.api.verbose:
            sys.stderr.write("fakeapi: %s %s\n" % (self.address_string(),
                                                   fmt % args))

    def do_GET(self):
        self._handle()

    def do_POST(self):
        self._handle()

    def do_PUT(self):
        self._handle()

    def do_DELETE(self):
        self._handle()

    def do_PATCH(self):
        self._handle()

    def _read_body(self):
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            chunks, total = [], 0
            while True:
                line = self.rfile.readline(1024)
                if not line:
                    raise ConnectionError("eof in chunked body")
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                total += size
                if total > BODY_MAX:
                    return None
                chunks.append(self.rfile.read(size))
                self.rfile.readline(16)
            return b"".join(chunks)
        n = int(self.headers.get("Content-Length") or 0)
        if n > BODY_MAX:
            return None
        return self.rfile.read(n) if n > 0 else b""

    def _cert_user(self):
        """"cert:CN" for a client that presented a certificate the
        server's client_ca verified (the API server's x509 authenticator
        takes the user name from the CN), else None."""
        getpeercert = getattr(self.connection, "getpeercert", None)
        cert = getpeercert() if getpeercert is not None else None
        for rdn in (cert or {}).get("subject", ()):
            for k, v in rdn:
                if k == "commonName":
                    return "cert:" + v
        return None

    def _peer(self):
        """The client's "address:port", which names its connection."""
        a = self.client_address
        if isinstance(a, tuple) and len(a) >= 2:
            return "%s:%s" % (a[0], a[1])
        return str(a)

    def _handle(self):
        api = self.server.api
        t_recv = time.monotonic()
        method = self.command
        path, _, query = self.path.partition("?")
        if method == "GET" and watch_requested(path, query):
            method = "WATCH"
        auth = self.headers.get("Authorization") or ""
        token = auth[7:].strip() if auth[:7].lower() == "bearer " else None
        if token is None:
            token = self._cert_user()
        entry = {"t_recv": t_recv, "t_done": None, "method": method,
                 "path": path, "query": query, "token": token, "code": None,
                 "fault": None, "peer": self._peer(),
                 "user_agent": self.headers.get("User-Agent") or ""}
        try:
            body = self._read_body()
        except (ValueError, ConnectionError, OSError):
            self.close_connection = True
            return
        self._entry = entry
        try:
            self._handle2(api, entry, method, path, query, token, body)
        finally:
            self._finish_entry()

    def _finish_entry(self, code=None):
        """Complete the current request's log entry (with code, if
        given) and log it, once: the first call takes it.  A watch logs
        itself when its stream opens."""
        entry, self._entry = self._entry, None
        if entry is None:
            return
        if code is not None:
            entry["code"] = code
        if entry["t_done"] is None:
            entry["t_done"] = time.monotonic()
        if "streaming" not in entry:
            self.server.api._log_request(entry)

    def _handle2(self, api, entry, method, path, query, token, body):
        if method == "WATCH":
            api._serve_watch(self, entry, path, query, token)
            return
        fault, answered = api._open_faults(self, entry, token, method, path,
                                           ())
        if answered:
            return
        if fault is not None:
            if fault.kind == "status":
                code = fault.status
                msg = fault.message or ("fakeapi: injected %d" % code)
                hdrs = {}
                if fault.retry_after is not None:
                    hdrs["Retry-After"] = str(fault.retry_after)
                entry["code"] = code
                self._send(code, status_body(code, msg), hdrs)
                return
        if body is None:
            entry["code"] = 413
            self._send(413, status_body(413, "Request entity too large"))
            self.close_connection = True
            return
        if token is None or token not in api.tokens:
            entry["code"] = 401
            self._send(401, UNAUTHORIZED)
            return
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        entry["ctype"] = ctype.lower()
        if method == "PATCH" and path.startswith(POD_PREFIX) and \
                "/pods/" in path and ctype.lower() not in (
                "application/merge-patch+json",
                "application/strategic-merge-patch+json"):
            entry["code"] = 415
            self._send(415, status_body(
                415, "the body of the request was in an unknown format - "
                "accepted media types include: application/merge-patch+json",
                "UnsupportedMediaType"))
            return
        if method in ("POST", "PUT") and ctype.lower() != "application/json":
            entry["code"] = 415
            self._send(415, status_body(
                415, "the body of the request was in an unknown format - "
                "accepted media types include: application/json, "
                "application/yaml, application/vnd.kubernetes.protobuf",
                "UnsupportedMediaType"))
            return
        code, obj, hdrs = api._route(method, path, query, body, token, entry)
        entry["code"] = code
        if fault is not None and fault.kind == "apply_then_close":
            self.close_connection = True
            return
        if fault is not None and fault.kind == "answer_late":
            fault.cleared.wait((fault.hold_ms or 0) / 1000.0)
        if fault is not None and fault.kind == "apply_then_status" and \
                code < 300:
            # Committed, then answered as a failure: etcd applied it, the
            # apiserver's deadline ran out first (a 504 Timeout, "the
            # request may still be processing") or a 500.
            entry["applied"] = code
            code = fault.status
            obj = status_body(code, fault.message or (
                "Timeout: request did not complete within requested "
                "timeout - context deadline exceeded" if code == 504 else
                "fakeapi: applied, then answered %d" % code))
            hdrs = {}
        self._send(code, obj, hdrs)

    def _send(self, code, obj, headers=None):
        # Logged before the answer goes out: a client that has its
        # answer finds the request in the log.
        self._finish_entry(code)
        data = json.dumps(obj, separators=(",", ":")).encode() + b"\n"
        self.send_response(code)
        self.send_header("Audit-Id", str(uuid.uuid4()))
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Content-Type", "application/json")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

# -- core/v1 Endpoints and ConfigMaps (the legacy leader-election locks) ----
#
# The objects client-go's EndpointsLock and ConfigMapLock keep their record
# on (annotation control-plane.alpha.kubernetes.io/leader), with the same
# resourceVersion, uid, 404 and 409 semantics as the Leases above, and the
# registry strategies of the real resources: PUT without resourceVersion
# is an unconditional update, PUT to a missing Endpoints creates it, to a
# missing ConfigMap is a 404.  Endpoints answers carry the deprecation
# Warning header of Kubernetes 1.33+ (core_warning = None turns it off).
# Writes are kept in their own history, core_history().

CORE_PREFIX = "/api/v1/namespaces/"
CORE_KINDS = {"endpoints": "Endpoints", "configmaps": "ConfigMap",
              "endpointslices": "EndpointSlice"}
CORE_CREATE_ON_UPDATE = {"endpoints": True, "configmaps": False,
                         "endpointslices": False}
# discovery.k8s.io/v1 EndpointSlices share the core objects' store.
SLICE_PREFIX = "/apis/discovery.k8s.io/v1/namespaces/"
CORE_API = {"endpointslices": "discovery.k8s.io/v1"}


def object_ips(obj):
    """The addresses an Endpoints or EndpointSlice object names."""
    if obj.get("kind") == "EndpointSlice":
        return [a for ep in obj.get("endpoints") or []
                for a in ep.get("addresses") or []]
    return [a.get("ip") for ss in obj.get("subsets") or []
            for a in ss.get("addresses") or []]
ENDPOINTS_WARNING = ('299 - "v1 Endpoints is deprecated in v1.33+; use '
                     'discovery.k8s.io/v1 EndpointSlice"')
LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"


class _CoreObjects:
    """Endpoints and ConfigMaps, mixed into FakeAPI."""

    core_warning = ENDPOINTS_WARNING

    def _core_store(self):
        if not hasattr(self, "_core"):
            self._core = {}          # (resource, ns, name) -> object
            self._core_hist = []
        return self._core

    def _core_hdrs(self, resource):
        if resource == "endpoints" and self.core_warning:
            return {"Warning": self.core_warning}
        return {}

    @staticmethod
    def _core_status(code, resource, name, message, reason):
        return status_body(code, message, reason,
                           {"name": name, "kind": resource})

    def _core_record(self, method, resource, ns, name, token, obj, admin):
        self._core_store()
        ann = (obj.get("metadata") or {}).get("annotations") or {}
        self._core_hist.append({
            "t": time.monotonic(), "method": method, "resource": resource,
            "ns": ns, "name": name, "token": token, "admin": admin,
            "annotation": ann.get(LEADER_ANNOTATION),
            "ips": object_ips(obj),
            "rv": obj["metadata"]["resourceVersion"],
            "uid": obj["metadata"]["uid"]})

    def _core_new(self, resource, ns, name, body):
        self._rv += 1
        meta = dict(body.get("metadata") or {})
        for k in ("uid", "resourceVersion", "creationTimestamp",
                  "managedFields", "generateName"):
            meta.pop(k, None)
        meta.update({"name": name, "namespace": ns, "uid": str(uuid.uuid4()),
                     "resourceVersion": str(self._rv),
                     "creationTimestamp": now_rfc3339()})
        obj = {"kind": CORE_KINDS[resource],
               "apiVersion": CORE_API.get(resource, "v1"),
               "metadata": _ordered(meta, META_ORDER)}
        for k, v in body.items():
            if k not in ("kind", "apiVersion", "metadata"):
                obj[k] = copy.deepcopy(v)
        self._core_store()[(resource, ns, name)] = obj
        return obj

    def _core_decode(self, resource, body):
        """The request body as an object, or an error answer."""
        kind = CORE_KINDS[resource]
        version = CORE_API.get(resource, "v1")
        try:
            obj = json.loads(body)
        except (ValueError, UnicodeDecodeError) as e:
            return None, (400, bad_request("couldn't get version/kind; "
                                           "json parse error: %s" % e), {})
        if not isinstance(obj, dict) or \
                obj.get("kind", kind) != kind or \
                obj.get("apiVersion", version) != version:
            return None, (400, bad_request("%s in version \"%s\" cannot be "
                                           "handled as a %s"
                                           % (kind, version, kind)), {})
        meta = obj.get("metadata") or {}
        ann = meta.get("annotations") if isinstance(meta, dict) else None
        if not isinstance(meta, dict) or (ann is not None and (
                not isinstance(ann, dict) or
                not all(isinstance(v, str) for v in ann.values()))):
            return None, (400, bad_request("%s in version \"v1\" cannot be "
                                           "handled as a %s: bad metadata"
                                           % (kind, kind)), {})
        return obj, None

    def _core_route(self, method, path, body, token, entry):
        """(code, object, headers) for a core/v1 endpoints or configmaps
        path, or None for any other path."""
        if path.startswith(SLICE_PREFIX):
            parts = path[len(SLICE_PREFIX):].split("/")
            if len(parts) < 2 or parts[1] != "endpointslices":
                return None
        elif path.startswith(CORE_PREFIX):
            parts = path[len(CORE_PREFIX):].split("/")
            if len(parts) < 2 or parts[1] == "endpointslices":
                return None
        else:
            return None
        if len(parts) not in (2, 3) or parts[1] not in CORE_KINDS or \
                not parts[0] or (len(parts) == 3 and not parts[2]):
            return None
        resource, ns = parts[1], parts[0]
        name = parts[2] if len(parts) == 3 else None
        hdrs = self._core_hdrs(resource)
        notfound = (404, self._core_status(
            404, resource, name, '%s "%s" not found' % (resource, name),
            "NotFound"), hdrs)
        with self._lock:
            store = self._core_store()
            if name is None:
                if method != "POST":
                    return 405, status_body(405, "the server does not allow "
                                            "this method on the requested "
                                            "resource"), hdrs
                obj, err = self._core_decode(resource, body)
                if err:
                    return err
                name = (obj.get("metadata") or {}).get("name") or ""
                if not DNS1123_SUBDOMAIN_RE.match(name):
                    return 422, self._core_status(
                        422, resource, name, "%s \"%s\" is invalid: "
                        "metadata.name" % (CORE_KINDS[resource], name),
                        "Invalid"), hdrs
                if (resource, ns, name) in store:
                    return 409, self._core_status(
                        409, resource, name, '%s "%s" already exists'
                        % (resource, name), "AlreadyExists"), hdrs
                new = self._core_new(resource, ns, name, obj)
                self._core_record("POST", resource, ns, name, token, new,
                                  False)
                return 201, copy.deepcopy(new), hdrs
            old = store.get((resource, ns, name))
            if method == "GET":
                return (200, copy.deepcopy(old), hdrs) if old else notfound
            if method == "DELETE":
                if old is None:
                    return notfound
                del store[(resource, ns, name)]
                self._rv += 1
                return 200, {"kind": "Status", "apiVersion": "v1",
                             "metadata": {}, "status": "Success"}, hdrs
            if method != "PUT":
                return 405, status_body(405, "the server does not allow "
                                        "this method on the requested "
                                        "resource"), hdrs
            obj, err = self._core_decode(resource, body)
            if err:
                return err
            meta = obj.get("metadata") or {}
            if (meta.get("name") or "") != name:
                return 400, bad_request("the name of the object (%s) does "
                                        "not match the name on the URL (%s)"
                                        % (meta.get("name") or "", name)), \
                    hdrs
            uid, rv = meta.get("uid") or "", meta.get("resourceVersion") or ""
            olduid = old["metadata"]["uid"] if old else ""
            if uid and uid != olduid:
                return 409, self._core_status(
                    409, resource, name, 'Operation cannot be fulfilled on '
                    '%s "%s": Precondition failed: UID in precondition: %s, '
                    'UID in object meta: %s' % (resource, name, uid, olduid),
                    "Conflict"), hdrs
            if old is None:
                if not CORE_CREATE_ON_UPDATE[resource]:
                    return notfound
                new = self._core_new(resource, ns, name, obj)
                self._core_record("PUT", resource, ns, name, token, new,
                                  False)
                return 201, copy.deepcopy(new), hdrs
            if rv and rv != old["metadata"]["resourceVersion"]:
                return 409, self._core_status(
                    409, resource, name, 'Operation cannot be fulfilled on '
                    '%s "%s": %s' % (resource, name, OPTIMISTIC_LOCK_MSG),
                    "Conflict"), hdrs
            new = self._core_replace(resource, ns, name, old, obj)
            self._core_record("PUT", resource, ns, name, token, new, False)
            return 200, copy.deepcopy(new), hdrs

    def _core_replace(self, resource, ns, name, old, obj):
        self._rv += 1
        meta = dict(obj.get("metadata") or {})
        om = old["metadata"]
        for k in ("name", "namespace", "uid", "creationTimestamp"):
            meta[k] = om[k]
        meta["resourceVersion"] = str(self._rv)
        new = {"kind": CORE_KINDS[resource],
               "apiVersion": CORE_API.get(resource, "v1"),
               "metadata": _ordered(meta, META_ORDER)}
        for k, v in obj.items():
            if k not in ("kind", "apiVersion", "metadata"):
                new[k] = copy.deepcopy(v)
        self._core_store()[(resource, ns, name)] = new
        return new

    # The admin side, as kubectl would do it.

    def get_object(self, resource, ns, name):
        with self._lock:
            obj = self._core_store().get((resource, ns, name))
            return copy.deepcopy(obj) if obj is not None else None

    def create_object(self, resource, ns, name, annotations=None,
                      extra=None):
        """Create an Endpoints or ConfigMap directly; annotations are
        stored as given (raw strings).  Returns the object."""
        with self._lock:
            if (resource, ns, name) in self._core_store():
                raise KeyError("%s %s/%s exists" % (resource, ns, name))
            body = dict(extra or {})
            body["metadata"] = {"name": name}
            if annotations is not None:
                body["metadata"]["annotations"] = dict(annotations)
            obj = self._core_new(resource, ns, name, body)
            self._core_record("POST", resource, ns, name, None, obj, True)
            return copy.deepcopy(obj)

    def modify_object(self, resource, ns, name, fn):
        """Apply fn(obj) to the stored object as an admin write (new
        resourceVersion).  Returns the new object."""
        with self._lock:
            old = self._core_store()[(resource, ns, name)]
            obj = copy.deepcopy(old)
            fn(obj)
            new = self._core_replace(resource, ns, name, old, obj)
            self._core_record("PUT", resource, ns, name, None, new, True)
            return copy.deepcopy(new)

    def delete_object(self, resource, ns, name):
        with self._lock:
            if self._core_store().pop((resource, ns, name), None) is None:
                return False
            self._rv += 1
            return True

    def core_history(self, resource=None, ns=None, name=None):
        """The writes to Endpoints, ConfigMaps and EndpointSlices: dicts
        with t, method, resource, ns, name, token, admin, annotation (the
        raw record string or None), ips (the addresses an Endpoints or
        EndpointSlice names), rv, uid."""
        with self._lock:
            self._core_store()
            return [dict(h) for h in self._core_hist
                    if (resource is None or h["resource"] == resource)
                    and (ns is None or h["ns"] == ns)
                    and (name is None or h["name"] == name)]

# -- end of the core/v1 objects ---------------------------------------------



# -- Readers that see the past ---------------------------------------------
#
# The switches of an HA control plane whose apiservers serve reads from
# lagging watch caches (kubernetes#59848, #97294; KEP-6404 would serve
# every GET from the cache), all off by default:
#   read_lag(s)       a named Lease GET answered from a snapshot up to s
#                     seconds old (the newest version written at or
#                     before then; 404 if the Lease did not exist yet);
#   list_lag(s)       a Lease list at resourceVersion=0 answered so (its
#                     items and its resourceVersion), as another
#                     apiserver's cache answers it;
#   watch_replay(n)   the next watches resumed from a resourceVersion
#                     start n retained events earlier ("resumed on
#                     another apiserver", whose cache is behind): older
#                     versions come first, then the stream goes on;
#   watch_disorder()  events of the watches duplicated, skipped, or held
#                     back and sent after the next one (reordered);
#   watch_fault("too_large")  200, then one ERROR event carrying the
#                     Status of a resourceVersion ahead of the cache
#                     (504 Timeout "Too large resource version", as the
#                     cacher's newErrWatcher sends it after waiting up
#                     to 3 s for the cache), then a clean end.
# Each switch takes token (None: every client) and returns nothing; 0 or
# None switches it off.  past_counts() says what they did.


PAST_VERSIONS = 256             # versions kept per Lease for stale reads
TOO_LARGE_WAIT_S = 3.0          # the cacher's blockTimeout


def too_large(rv, current):
    """The Status of a watch from a resourceVersion ahead of the cache
    (apiserver storage.NewTooLargeResourceVersionError on
    errors.NewTimeoutError, retry after 1 s)."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure",
            "message": "Timeout: Too large resource version: %s, current: %d"
            % (rv, current),
            "reason": "Timeout",
            "details": {"causes": [{"reason": "ResourceVersionTooLarge",
                                    "message": "Too large resource version"}],
                        "retryAfterSeconds": 1},
            "code": 504}


class _PastMixin:
    """Readers that see the past (see the block comment above)."""

    _past = None

    def _past_state(self):
        with self._lock:
            if self._past is None:
                self._past = {"versions": {}, "rvs": collections.deque(
                                  maxlen=16 * PAST_VERSIONS), "read_lag": {},
                              "list_lag": {}, "replay": {}, "disorder": {},
                              "counts": collections.Counter(),
                              "rng": random.Random(1)}
            return self._past

    def _past_record(self, method, ns, name, obj):
        """Called by _record (lock held): keep the Lease's version."""
        st = self._past_state()
        now = time.monotonic()
        vs = st["versions"].setdefault((ns, name), collections.deque(
            maxlen=PAST_VERSIONS))
        vs.append((now, None if method == "DELETE" else copy.deepcopy(obj)))
        st["rvs"].append((now, self._rv))

    @staticmethod
    def _past_of(d, token):
        v = d.get(token)
        return v if v is not None else d.get(None)

    def _past_snapshot(self, ns, name, t):
        """(known, obj): the Lease as it stood at time t; obj None if it
        did not exist then.  known is False if nothing that old is kept
        for it (then the present serves)."""
        vs = self._past_state()["versions"].get((ns, name))
        if not vs:
            return False, None
        for at, obj in reversed(vs):
            if at <= t:
                return True, obj
        if len(vs) < PAST_VERSIONS:
            return True, None       # from before its creation
        return False, None

    def _past_get(self, ns, name, token, obj):
        """A named GET's object (lock held): obj, or an older one."""
        st = self._past_state()
        lag = self._past_of(st["read_lag"], token)
        if not lag:
            return obj
        seconds, chance = lag
        if st["rng"].random() >= chance:
            return obj
        known, old = self._past_snapshot(ns, name,
                                         time.monotonic() - seconds)
        if not known:
            return obj
        if (old is None) != (obj is None) or (old is not None and old[
                "metadata"]["resourceVersion"] != obj["metadata"][
                "resourceVersion"]):
            st["counts"]["stale_get"] += 1
        return old

    def _past_list(self, ns, token, lsel):
        """(items, rv) of a resourceVersion=0 list from a lagging cache
        (lock held), or None to answer from the present."""
        st = self._past_state()
        seconds = self._past_of(st["list_lag"], token)
        if not seconds:
            return None
        t = time.monotonic() - seconds
        items = []
        for (vns, vname) in sorted(st["versions"]):
            if vns != ns:
                continue
            known, obj = self._past_snapshot(vns, vname, t)
            if not known:
                obj = self._leases.get((vns, vname))
            if obj is not None and _selected(obj, [], lsel):
                items.append(copy.deepcopy(obj))
        rv = max([r for at, r in st["rvs"] if at <= t] or [0])
        rv = max([rv] + [int(o["metadata"]["resourceVersion"])
                         for o in items])
        if rv < self._rv:
            st["counts"]["stale_list"] += 1
        return items, rv

    def _past_replay_from(self, token, rv, hub):
        """The version a resumed watch really starts after (another
        apiserver's older point), or rv."""
        st = self._past_state()
        with self._lock:
            r = self._past_of(st["replay"], token)
            if not r or not rv or not rv.isdigit():
                return int(rv) if rv and rv.isdigit() else None
            back, count = r
            if count is not None:
                if count <= 0:
                    return int(rv)
                st["replay"][token if token in st["replay"] else None] = \
                    (back, count - 1)
        with hub.cond:
            older = [e["rv"] for e in hub.events if e["rv"] <= int(rv)]
        if not older:
            return int(rv)
        start = older[max(0, len(older) - back)] - 1
        start = max(start, hub.floor)
        st["counts"]["replayed"] += sum(1 for x in older if x > start)
        return start

    def _past_mangle(self, stream, e):
        """The events a stream sends for event e under watch_disorder:
        [], [e], [e, e], or [e, an event held back before it]."""
        st = self._past_state()
        d = self._past_of(st["disorder"], stream.token)
        held = getattr(stream, "held", None)
        out = [(e["type"], e["object"])]
        if d:
            dup, skip, reorder = d
            r = st["rng"].random()
            if r < skip:
                st["counts"]["skip"] += 1
                return []
            if r < skip + reorder and held is None:
                st["counts"]["reorder"] += 1
                stream.held = out[0]
                return []
            if st["rng"].random() < dup:
                st["counts"]["dup"] += 1
                out.append(out[0])
        if held is not None:
            stream.held = None
            out.append(held)
        return out

    # -- public ----------------------------------------------------------

    def read_lag(self, seconds, token=None, chance=1.0):
        """Answer a named Lease GET (of token; None: all) from a snapshot
        `seconds` old, for a share `chance` of them (a load balancer
        over a fresh and a lagging apiserver).  0 switches it off."""
        st = self._past_state()
        with self._lock:
            if seconds:
                st["read_lag"][token] = (float(seconds), float(chance))
            else:
                st["read_lag"].pop(token, None)

    def list_lag(self, seconds, token=None):
        """Answer a Lease list at resourceVersion=0 (of token) from a
        snapshot `seconds` old.  0 switches it off."""
        st = self._past_state()
        with self._lock:
            if seconds:
                st["list_lag"][token] = float(seconds)
            else:
                st["list_lag"].pop(token, None)

    def watch_replay(self, back, token=None, count=None):
        """The next `count` (None: every) watches (of token) resumed from
        a resourceVersion first replay the last `back` retained events
        at or before it.  0 switches it off."""
        st = self._past_state()
        with self._lock:
            if back:
                st["replay"][token] = (int(back), count)
            else:
                st["replay"].pop(token, None)

    def watch_disorder(self, dup=0.0, skip=0.0, reorder=0.0, token=None,
                       seed=1):
        """Each watch event (of token) is sent twice with probability
        dup, never with skip, or held back and sent after the next event
        with reorder.  All 0 switches it off."""
        st = self._past_state()
        with self._lock:
            if dup or skip or reorder:
                st["disorder"][token] = (float(dup), float(skip),
                                         float(reorder))
                st["rng"].seed(seed)
            else:
                st["disorder"].pop(token, None)
        self._hub().kick()

    def past_counts(self):
        """What the switches did: stale_get, stale_list, replayed, dup,
        skip, reorder, too_large."""
        return dict(self._past_state()["counts"])


# -- access reviews (authorization.k8s.io/v1) and SelfSubjectReview ----
#
# What the doctor asks: SelfSubjectAccessReview for the token's own user
# (api.token_user), SubjectAccessReview for any user.  Every verb is
# allowed but those a test denies with api.deny(verb, resource, ...);
# the rules answer the reviews only (a request itself is refused with a
# fault).  api.reviews() lists what was asked.  reviews_served = False
# answers 404, as a server without the API.  api.date_offset_s shifts the
# Date header of every answer (a server whose clock differs).

REVIEW_PREFIX = "/apis/authorization.k8s.io/v1/"
REVIEW_KINDS = {"selfsubjectaccessreviews": "SelfSubjectAccessReview",
                "subjectaccessreviews": "SubjectAccessReview"}
SSR_PATH = "/apis/authentication.k8s.io/v1/selfsubjectreviews"


class _ReviewMixin:
    def _review_state(self):
        if not hasattr(self, "_denied"):
            self._denied = []       # (verb, resource, ns, name, user)
            self._asked = []        # (kind, user, attributes)
            self._token_users = {}
            self.reviews_served = getattr(self, "reviews_served", True)
            self.date_offset_s = getattr(self, "date_offset_s", 0)
        return self

    def deny(self, verb, resource, ns=None, name=None, user=None):
        """Answer allowed: false to reviews of verb on resource (in ns, on
        name, for user; None: any)."""
        with self._lock:
            self._review_state()._denied.append(
                (verb, resource, ns, name, user))

    def set_token_user(self, token, user):
        """The user a token authenticates as (default:
        system:serviceaccount:default:<token>)."""
        with self._lock:
            self._review_state()._token_users[token] = user

    def token_user(self, token):
        with self._lock:
            return self._review_state()._token_users.get(
                token, "system:serviceaccount:default:%s" % token)

    def reviews(self):
        """Every review asked: (kind, user, resourceAttributes)."""
        with self._lock:
            return list(self._review_state()._asked)

    def _review_route(self, method, path, body, token):
        """(code, obj, headers) for a review path, None for any other."""
        if path == SSR_PATH:
            kind = "SelfSubjectReview"
        elif path.startswith(REVIEW_PREFIX) and \
                path[len(REVIEW_PREFIX):] in REVIEW_KINDS:
            kind = REVIEW_KINDS[path[len(REVIEW_PREFIX):]]
        else:
            return None
        with self._lock:
            st = self._review_state()
            if not st.reviews_served:
                return 404, status_body(404, "the server could not find "
                                        "the requested resource",
                                        "NotFound", {}), {}
            if method != "POST":
                return 405, status_body(405, "the server does not allow "
                                        "this method on the requested "
                                        "resource"), {}
            try:
                obj = json.loads(body or b"{}")
            except (ValueError, UnicodeDecodeError) as e:
                return 400, bad_request("error decoding body: %s" % e), {}
            me = self.token_user(token)
            if kind == "SelfSubjectReview":
                obj["status"] = {"userInfo": {"username": me, "groups": [
                    "system:serviceaccounts", "system:authenticated"]}}
                return 201, obj, {}
            spec = obj.get("spec") or {}
            ra = spec.get("resourceAttributes") or {}
            user = me if kind == "SelfSubjectAccessReview" else \
                spec.get("user", "")
            st._asked.append((kind, user, dict(ra)))
            allowed = True
            for verb, res, ns, name, who in st._denied:
                if verb == ra.get("verb") and res == ra.get("resource") \
                        and (ns is None or ns == ra.get("namespace", "")) \
                        and (name is None or name == ra.get("name", "")) \
                        and (who is None or who == user):
                    allowed = False
            obj["status"] = {"allowed": allowed}
            if allowed:
                obj["status"]["reason"] = "fakeapi: allowed"
            return 201, obj, {}


class FakeAPI(_WatchMixin, _CoreObjects, _PastMixin, _ReviewMixin):
    """The test API server.  All public methods are thread-safe."""

    def __init__(self, tokens=(), tls=True, host="127.0.0.1", port=0,
                 certdir=None, verbose=False, idle_timeout=30.0,
                 rv_start=1000, client_ca=None, tls_min="TLSv1_2",
                 tls_max=None, seclevel=None, key_type="ec"):
        self.host = host
        # The keys of the CA and the server certificate (make_certs):
        # "ec" (P-256, as kube-apiserver's test certificates) or
        # "rsa:BITS" (kubeadm's and the managed clusters' RSA-2048).
        self.key_type = key_type
        # OpenSSL's security level for the server's own context: 0 lets
        # it serve a SHA-1-signed or 1024-bit RSA certificate, which the
        # client under test must refuse.  None: OpenSSL's default.
        self.seclevel = seclevel
        self.client_ca = client_ca
        self.tls_min = tls_min
        self.tls_max = tls_max
        self.handshakes = []    # (t, TLS version or None, error or None)
        self.port = port
        self.tls = tls
        self.verbose = verbose
        self.idle_timeout = idle_timeout
        self._tokens = set(tokens)
        self._lock = threading.RLock()
        self._leases = {}       # (ns, name) -> stored object (dict)
        self._rv = rv_start
        self._history = []
        self._requests = []
        self._events = []
        self._pods = {}         # (ns, name) -> stored Pod (dict)
        self._pod_history = []  # (t monotonic, ns, name, labels, token)
        self._faults = []
        self._conns = set()
        self._stopping = threading.Event()
        self._server = None
        self._thread = None
        self._ssl_ctx = None
        self._own_dir = certdir is None
        self.dir = certdir or tempfile.mkdtemp(prefix="fakeapi-")
        self.ca_file = None
        self.cert_file = None
        self.key_file = None

    # -- lifecycle ---------------------------------------------------

    def start(self):
        if self.tls:
            self.ca_file, self.cert_file, self.key_file = make_certs(
                self.dir, self.key_type)
            self._ssl_ctx = self._context(self.cert_file, self.key_file)
        self._server = _Server((self.host, self.port), self)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
            name="fakeapi", daemon=True)
        self._thread.start()
        return self

    def _context(self, cert_file, key_file):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = getattr(ssl.TLSVersion, self.tls_min)
        if self.tls_max is not None:
            ctx.maximum_version = getattr(ssl.TLSVersion, self.tls_max)
        if self.seclevel is not None:
            ctx.set_ciphers("DEFAULT:@SECLEVEL=%d" % self.seclevel)
        ctx.load_cert_chain(cert_file, key_file)
        if self.client_ca is not None:
            # As kube-apiserver's --client-ca-file: a certificate is
            # asked for, checked if given, and not required (a token
            # will do).
            ctx.verify_mode = ssl.CERT_OPTIONAL
            ctx.load_verify_locations(self.client_ca)
        return ctx

    def set_server_cert(self, cert_file, key_file):
        """Serve cert_file from the next handshake on; connections open
        now keep the certificate they were made with."""
        ctx = self._context(cert_file, key_file)
        with self._lock:
            self.cert_file, self.key_file = cert_file, key_file
            self._ssl_ctx = ctx

    def close_connections(self):
        """Close every open client connection (as a restarted or
        rebalanced API server does); the clients reconnect."""
        with self._lock:
            conns = list(self._conns)
        for s in conns:
            try:
                socket.socket.shutdown(s, socket.SHUT_RDWR)
            except OSError:
                pass
        return len(conns)

    def _handshake(self, sock, error):
        with self._lock:
            self.handshakes.append((time.monotonic(),
                                    sock.version() if sock else None, error))

    def stop(self):
        """Stop serving, close every connection, release held requests."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        with self._lock:
            conns = list(self._conns)
        for s in conns:
            try:
                socket.socket.shutdown(s, socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(5)
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def url(self):
        host = "[%s]" % self.host if ":" in self.host else self.host
        return "%s://%s:%d" % ("https" if self.tls else "http", host,
                               self.port)

    def _track(self, sock, add):
        with self._lock:
            if add:
                self._conns.add(sock)
            else:
                self._conns.discard(sock)

    def open_connections(self):
        with self._lock:
            return len(self._conns)

    # -- tokens --------------------------------------------------------

    @property
    def tokens(self):
        with self._lock:
            return set(self._tokens)

    def add_token(self, token):
        with self._lock:
            self._tokens.add(token)

    def revoke_token(self, token):
        with self._lock:
            self._tokens.discard(token)

    # -- faults --------------------------------------------------------

    def fault(self, kind, token=None, methods=None, count=None, delay_ms=0,
              status=503, retry_after=None, hold_ms=None, path_prefix=None,
              message=None, path=None):
        """Switch a fault on and return it.

        kind: "delay" (wait delay_ms, then handle normally; combines with
        one other fault), "status" (answer a Status with code `status`,
        Retry-After: retry_after if given), "drop" (read the request,
        close without answering or applying), "apply_then_close" (handle
        the request, apply it, close without answering), "blackhole"
        (never answer; the connection is closed when the fault is
        cleared, after hold_ms if given, or on stop), "answer_late"
        (handle the request and apply it at once, answer hold_ms later or
        when the fault is cleared), "apply_then_status" (apply a write,
        then answer it with a Status of code `status`, as a 504 Timeout
        whose write etcd committed; the request log keeps the code sent
        and "applied").
        token: only requests with this bearer token (None: all).
        methods: only these methods.  count: only the next `count`
        matching requests (None: until cleared).  path_prefix: only
        paths starting with it.  path: only this path (no query; e.g. a
        namespace's collection, its lists).  Faults are checked in the
        order added.
        """
        f = Fault(kind, token=token, methods=methods, count=count,
                  delay_ms=delay_ms, status=status, retry_after=retry_after,
                  hold_ms=hold_ms, path_prefix=path_prefix, message=message,
                  path=path)
        with self._lock:
            self._faults.append(f)
        return f

    def clear_fault(self, f):
        with self._lock:
            if f in self._faults:
                self._faults.remove(f)
        f.cleared.set()

    def clear_faults(self, token=Ellipsis):
        """Clear every fault, or only those targeting `token`."""
        with self._lock:
            gone = [f for f in self._faults
                    if token is Ellipsis or f.token == token]
            self._faults = [f for f in self._faults if f not in gone]
        for f in gone:
            f.cleared.set()

    def faults(self):
        with self._lock:
            return list(self._faults)

    def _take_faults(self, token, method, path):
        with self._lock:
            delay, action = 0, None
            for f in list(self._faults):
                if not f.matches(token, method, path):
                    continue
                if f.kind == "delay":
                    delay += f.delay_ms
                elif action is None:
                    action = f
                else:
                    continue
                f.hits += 1
                if f.count is not None:
                    f.count -= 1
                    if f.count <= 0:
                        # Used up: no longer matches, but a held
                        # (blackholed) request stays held until cleared.
                        self._faults.remove(f)
            return delay, action

    def _open_faults(self, h, entry, token, method, path, closing):
        """The faults that act before a request is answered: a delay, a
        drop (and any kind in closing), or a blackhole held until it is
        cleared.  Returns (fault, answered): answered is True when the
        connection was closed and nothing more is to be sent; fault is
        the action left for the caller (a status, a watch fault...)."""
        delay_ms, fault = self._take_faults(token, method, path)
        if delay_ms:
            entry["fault"] = "delay"
            if self._stopping.wait(delay_ms / 1000.0):
                h.close_connection = True
                return fault, True
        if fault is None:
            return None, False
        entry["fault"] = fault.kind
        if fault.kind == "drop" or fault.kind in closing:
            h.close_connection = True
            return fault, True
        if fault.kind == "blackhole":
            hold = BLACKHOLE_MAX_S
            if fault.hold_ms is not None:
                hold = min(hold, fault.hold_ms / 1000.0)
            end = time.monotonic() + hold
            while (not fault.cleared.is_set() and
                   not self._stopping.is_set() and
                   time.monotonic() < end):
                fault.cleared.wait(0.05)
            h.close_connection = True
            return fault, True
        return fault, False

    # -- logs ----------------------------------------------------------

    def _log_request(self, entry):
        with self._lock:
            self._requests.append(entry)

    def requests(self, token=Ellipsis, method=None, since=None):
        """Copies of the request log entries (dicts with t_recv, t_done,
        method, path, token, code (None: no answer), fault, peer: the
        client's address:port, one per connection)."""
        with self._lock:
            out = []
            for e in self._requests:
                if token is not Ellipsis and e["token"] != token:
                    continue
                if method is not None and e["method"] != method:
                    continue
                if since is not None and e["t_recv"] < since:
                    continue
                out.append(dict(e))
            return out

    def history(self, ns=None, name=None, token=Ellipsis, method=None):
        """Copies of the successful writes: dicts with t (monotonic time
        the write was applied), t_recv (when its request arrived: an upper
        bound for the client's send time), method (POST, PUT, DELETE), ns,
        name, spec (for DELETE: the last one), rv, uid, token (None for
        the admin calls below), admin, created, unanswered (the answer was
        never sent: apply_then_close)."""
        with self._lock:
            return [copy.deepcopy(h) for h in self._history
                    if (ns is None or h["ns"] == ns)
                    and (name is None or h["name"] == name)
                    and (token is Ellipsis or h["token"] == token)
                    and (method is None or h["method"] == method)]

    def events(self):
        with self._lock:
            return copy.deepcopy(self._events)

    # -- direct access to the store (the "admin") ------------------------

    def get_lease(self, ns, name):
        with self._lock:
            obj = self._leases.get((ns, name))
            return copy.deepcopy(obj) if obj is not None else None

    def delete_lease(self, ns, name):
        with self._lock:
            obj = self._leases.pop((ns, name), None)
            if obj is None:
                return False
            self._rv += 1
            self._record("DELETE", ns, name, None, time.monotonic(), obj,
                         False, admin=True)
            return True

    def modify_lease(self, ns, name, fn):
        """Apply fn(obj) to the stored object as an admin write (new
        resourceVersion, history entry with admin=True).  fn may edit
        metadata.labels/annotations and spec.  Returns the new object."""
        with self._lock:
            obj = self._leases.get((ns, name))
            if obj is None:
                raise KeyError("%s/%s" % (ns, name))
            obj = copy.deepcopy(obj)
            fn(obj)
            self._rv += 1
            obj["metadata"]["resourceVersion"] = str(self._rv)
            obj["spec"] = _ordered({k: v for k, v in obj["spec"].items()
                                    if v is not None}, SPEC_ORDER)
            self._leases[(ns, name)] = obj
            self._record("PUT", ns, name, None, time.monotonic(), obj, False,
                         admin=True)
            return copy.deepcopy(obj)

    def create_lease(self, ns, name, spec, labels=None, annotations=None):
        """Create a lease directly, as another client would."""
        with self._lock:
            if (ns, name) in self._leases:
                raise KeyError("%s/%s exists" % (ns, name))
            meta = {"name": name, "namespace": ns}
            if labels:
                meta["labels"] = dict(labels)
            if annotations:
                meta["annotations"] = dict(annotations)
            obj = self._store_new(ns, name, meta, dict(spec), "admin")
            self._record("POST", ns, name, None, time.monotonic(), obj, True,
                         admin=True)
            return copy.deepcopy(obj)

    # -- the API -------------------------------------------------------

    def _record(self, method, ns, name, token, t_recv, obj, created,
                unanswered=False, admin=False):
        self._history.append({
            "t": time.monotonic(), "t_recv": t_recv, "method": method,
            "ns": ns, "name": name, "token": token,
            "spec": copy.deepcopy(obj.get("spec", {})),
            "rv": obj.get("metadata", {}).get("resourceVersion"),
            "uid": obj.get("metadata", {}).get("uid"),
            "created": created, "unanswered": unanswered, "admin": admin})
        self._past_record(method, ns, name, obj)
        self._watch_publish(method, obj, created)

    def _managed(self, manager, operation, spec, old=None):
        fields = {"f:spec": {"f:" + k: {} for k in spec}}
        entry = {"manager": manager, "operation": operation,
                 "apiVersion": LEASE_API, "time": now_rfc3339(),
                 "fieldsType": "FieldsV1", "fieldsV1": fields}
        out = [e for e in (old or []) if e.get("manager") != manager]
        out.append(entry)
        return out

    def _store_new(self, ns, name, meta, spec, manager):
        self._rv += 1
        m = {k: copy.deepcopy(v) for k, v in meta.items()
             if k in META_ORDER and k not in ("managedFields",)}
        m["name"] = name
        m["namespace"] = ns
        m["uid"] = str(uuid.uuid4())
        m["resourceVersion"] = str(self._rv)
        m["creationTimestamp"] = now_rfc3339()
        m.pop("generateName", None)
        m["managedFields"] = self._managed(manager, "Update", spec)
        obj = {"kind": "Lease", "apiVersion": LEASE_API,
               "metadata": _ordered(m, META_ORDER),
               "spec": _ordered(spec, SPEC_ORDER)}
        self._leases[(ns, name)] = obj
        return obj

    def _store_update(self, ns, name, m, spec, manager):
        """The stored Lease ns/name replaced by metadata m (changed in
        place) and spec, as a PUT or a PATCH stores it: its name,
        namespace, uid and creationTimestamp kept, a new resourceVersion,
        manager's Update entry in managedFields."""
        self._rv += 1
        om = self._leases[(ns, name)]["metadata"]
        for k in ("name", "namespace", "uid", "creationTimestamp"):
            m[k] = om[k]
        m["resourceVersion"] = str(self._rv)
        m["managedFields"] = self._managed(manager, "Update", spec,
                                           om.get("managedFields"))
        obj = {"kind": "Lease", "apiVersion": LEASE_API,
               "metadata": _ordered(m, META_ORDER),
               "spec": _ordered(spec, SPEC_ORDER)}
        self._leases[(ns, name)] = obj
        return obj

    # -- LeaseCandidates (coordination.k8s.io/v1beta1) ------------------
    #
    # Served only once enable_candidates() is called: a default server
    # answers 404 on them, as kube-apiserver does with the
    # CoordinatedLeaderElection gate off.  No election controller: a test
    # plays it (modify_lease naming a candidate, ping_candidate).

    def enable_candidates(self):
        with self._lock:
            self._cands_on = True

    def candidates(self, ns=None):
        with self._lock:
            return {n: copy.deepcopy(o) for (cns, n), o in
                    getattr(self, "_cands", {}).items()
                    if ns is None or cns == ns}

    def ping_candidate(self, ns, name):
        """Set spec.pingTime to now, as the controller asks for a renew."""
        with self._lock:
            o = self._cands[(ns, name)]
            self._rv += 1
            o["spec"]["pingTime"] = now_microtime()
            o["metadata"]["resourceVersion"] = str(self._rv)
            return copy.deepcopy(o)

    def candidate_history(self):
        with self._lock:
            return list(getattr(self, "_cand_history", []))

    def plant_candidate(self, ns, name, lease_name, binary_version="1.0.0",
                        emulation_version=None,
                        strategy="OldestEmulationVersion", renew_time=None,
                        ping_time=None, created=None):
        """Store a LeaseCandidate as a co-tenant's create (and updates)
        would leave it, with no request: renew_time (None: now) and
        ping_time (None: absent) as MicroTime strings, created an RFC 3339
        creationTimestamp (None: now).  Only what the API server would
        take is planted; the caller keeps to its rules."""
        spec = {"leaseName": lease_name, "binaryVersion": binary_version,
                "strategy": strategy,
                "renewTime": renew_time or now_microtime()}
        if emulation_version is not None:
            spec["emulationVersion"] = emulation_version
        if ping_time is not None:
            spec["pingTime"] = ping_time
        with self._lock:
            cands = self.__dict__.setdefault("_cands", {})
            self._rv += 1
            obj = {"kind": "LeaseCandidate", "apiVersion": CAND_API,
                   "metadata": {"name": name, "namespace": ns,
                                "uid": str(uuid.uuid4()),
                                "resourceVersion": str(self._rv),
                                "creationTimestamp":
                                created or now_rfc3339()},
                   "spec": spec}
            cands[(ns, name)] = obj
            return copy.deepcopy(obj)

    def _cand_route(self, method, path, body):
        parts = path[len(CAND_PREFIX):].split("/")
        if not getattr(self, "_cands_on", False) or \
                len(parts) not in (2, 3) or parts[1] != "leasecandidates":
            return 404, status_body(404, "the server could not find the "
                                    "requested resource", "NotFound", {}), {}
        cands = self.__dict__.setdefault("_cands", {})
        hist = self.__dict__.setdefault("_cand_history", [])
        ns, name = parts[0], parts[2] if len(parts) == 3 else None

        def nf(n):
            return status_body(404, 'leasecandidates.coordination.k8s.io '
                               '"%s" not found' % n, "NotFound",
                               {"name": n, "group": GROUP,
                                "kind": "leasecandidates"})
        with self._lock:
            if name is None and method == "GET":
                return 200, {"kind": "LeaseCandidateList",
                             "apiVersion": CAND_API,
                             "metadata": {"resourceVersion": str(self._rv)},
                             "items": [copy.deepcopy(o) for (n, _), o in
                                       sorted(cands.items()) if n == ns]}, {}
            if method in ("POST", "PUT"):
                try:
                    obj = json.loads(body)
                except ValueError as e:
                    return 400, bad_request(str(e)), {}
                meta = obj.get("metadata") or {}
                spec = obj.get("spec") or {}
                n = meta.get("name") or ""
                if not spec.get("leaseName") or \
                        not spec.get("binaryVersion") or \
                        not spec.get("strategy"):
                    return 422, invalid(n, [("spec", "{}", "leaseName, binaryVersion and strategy are required")], kind="LeaseCandidate"), {}
            if method == "POST" and name is None:
                if (ns, n) in cands:
                    return 409, status_body(
                        409, 'leasecandidates.coordination.k8s.io "%s" '
                        'already exists' % n, "AlreadyExists", {}), {}
                self._rv += 1
                meta = {"name": n, "namespace": ns,
                        "uid": str(uuid.uuid4()),
                        "resourceVersion": str(self._rv),
                        "creationTimestamp": now_rfc3339()}
                obj = {"kind": "LeaseCandidate", "apiVersion": CAND_API,
                       "metadata": meta, "spec": spec}
                cands[(ns, n)] = obj
                hist.append((time.monotonic(), "POST", n,
                             copy.deepcopy(spec)))
                return 201, copy.deepcopy(obj), {}
            if name is None:
                return 405, status_body(405, "method not allowed"), {}
            cur = cands.get((ns, name))
            if cur is None:
                return 404, nf(name), {}
            if method == "GET":
                return 200, copy.deepcopy(cur), {}
            if method == "DELETE":
                del cands[(ns, name)]
                self._rv += 1
                hist.append((time.monotonic(), "DELETE", name, None))
                return 200, {"kind": "Status", "apiVersion": "v1",
                             "status": "Success"}, {}
            if method == "PUT":
                if meta.get("resourceVersion") != \
                        cur["metadata"]["resourceVersion"]:
                    return 409, status_body(
                        409, "the object has been modified", "Conflict",
                        {}), {}
                self._rv += 1
                cur = copy.deepcopy(cur)
                cur["spec"] = spec
                cur["metadata"]["resourceVersion"] = str(self._rv)
                cands[(ns, name)] = cur
                hist.append((time.monotonic(), "PUT", name,
                             copy.deepcopy(spec)))
                return 200, copy.deepcopy(cur), {}
            return 405, status_body(405, "method not allowed"), {}

    def _route(self, method, path, query, body, token, entry):
        """Returns (code, response object, extra headers)."""
        review = self._review_route(method, path, body, token)
        if review is not None:
            return review
        if path == CAND_ALL:
            return self._cand_all(method)
        if path == LEASE_ALL:
            return self._lease_all(method, query)
        if path.startswith(CAND_PREFIX):
            return self._cand_route(method, path, body)
        if path.startswith(POD_PREFIX):
            parts = path[len(POD_PREFIX):].split("/")
            if len(parts) == 2 and parts[1] == "pods" and parts[0] and \
                    method == "GET":
                return self._pod_list(parts[0], query)
            if len(parts) == 3 and parts[1] == "pods" and parts[0] and \
                    parts[2]:
                return self._pod(method, parts[0], parts[2], body, token,
                                 entry)
        for pfx in EVENT_PREFIXES:
            if path.startswith(pfx):
                parts = path[len(pfx):].split("/")
                if len(parts) == 2 and parts[1] == "events" and parts[0]:
                    if method == "GET" and pfx == EVENT_PREFIXES[0]:
                        return self._event_list(parts[0], query)
                    if method != "POST":
                        return 405, status_body(405, "the server does not "
                                                "allow this method on the "
                                                "requested resource"), {}
                    return self._event(parts[0], body)
        core = self._core_route(method, path, body, token, entry)
        if core is not None:
            return core
        if not path.startswith(LEASE_PREFIX):
            return 404, status_body(404, "the server could not find the "
                                    "requested resource", "NotFound", {}), {}
        parts = path[len(LEASE_PREFIX):].split("/")
        if len(parts) not in (2, 3) or parts[1] != "leases" or not parts[0] \
                or (len(parts) == 3 and not parts[2]):
            return 404, status_body(404, "the server could not find the "
                                    "requested resource", "NotFound", {}), {}
        ns = parts[0]
        name = parts[2] if len(parts) == 3 else None
        ua = entry.get("user_agent") or "unknown"
        manager = ua.split("/")[0] or "unknown"
        with self._lock:
            if name is None:
                if method == "GET":     # a watch went to _serve_watch
                    q = urllib.parse.parse_qs(query, keep_blank_values=True)
                    try:
                        lsel = _parse_selector(
                            (q.get("labelSelector") or [""])[0], None)
                    except ValueError as e:
                        return 400, bad_request(str(e)), {}
                    items = [copy.deepcopy(o) for (n, _), o in
                             sorted(self._leases.items()) if n == ns
                             and _selected(o, [], lsel)]
                    list_rv = self._rv
                    past = (q.get("resourceVersion") or [""])[0] == "0" \
                        and self._past_list(ns, token, lsel)
                    if past:
                        items, list_rv = past
                    for o in items:
                        o.pop("kind", None)
                        o.pop("apiVersion", None)
                    return self._list_page(q, items, list_rv)
                if method == "POST":
                    return self._create(ns, body, token, entry, manager)
                return 405, status_body(405, "the server does not allow this "
                                        "method on the requested resource"), {}
            if method == "GET":
                obj = self._past_get(ns, name, token,
                                     self._leases.get((ns, name)))
                if obj is None:
                    return 404, not_found(name), {}
                return 200, copy.deepcopy(obj), {}
            if method == "PUT":
                return self._update(ns, name, body, token, entry, manager)
            if method == "PATCH":
                return self._patch(ns, name, body, token, entry, manager)
            if method == "DELETE":
                obj = self._leases.get((ns, name))
                if obj is None:
                    return 404, not_found(name), {}
                # DeleteOptions.preconditions.resourceVersion, as the
                # real server checks it.
                try:
                    opts = json.loads(body) if body else {}
                except (ValueError, TypeError):
                    opts = {}
                want = ((opts or {}).get("preconditions") or {}).get(
                    "resourceVersion")
                if want and want != obj["metadata"]["resourceVersion"]:
                    return 409, conflict(name, "the ResourceVersion in the "
                                         "precondition (%s) does not match "
                                         "the ResourceVersion in record (%s)"
                                         ". The object might have been "
                                         "modified" % (want, obj["metadata"]
                                                       ["resourceVersion"])
                                         ), {}
                del self._leases[(ns, name)]
                self._rv += 1
                self._record("DELETE", ns, name, token, entry["t_recv"], obj,
                             False, entry.get("fault") == "apply_then_close")
                det = lease_details(name)
                det["uid"] = obj["metadata"]["uid"]
                return 200, {"kind": "Status", "apiVersion": "v1",
                             "metadata": {}, "status": "Success",
                             "details": det}, {}
            return 405, status_body(405, "the server does not allow this "
                                    "method on the requested resource"), {}

    # A list's pages (limit, continue), as kube-apiserver serves them:
    # items by name, a continue token while more are left, and a page
    # after it from that token.  resourceVersion=0 is served from the
    # watch cache, which ignores limit and answers every item at once
    # (kube-apiserver before its cache kept snapshots) unless
    # list_cache_pages is set.  No snapshot: a later page shows the items
    # after the token's name as they are now, at the token's version.
    list_cache_pages = False

    def _list_page(self, q, items, list_rv=None, key=None):
        """One page of items (limit/continue); list_rv: the version the
        list is as of (a list from the past gives an older one); key: an
        item's place in the order (its name; "ns/name" across
        namespaces)."""
        key = key or (lambda o: o["metadata"]["name"])
        def arg(k):
            return (q.get(k) or [""])[0]
        rv, start = str(self._rv if list_rv is None else list_rv), None
        if arg("continue"):
            if arg("resourceVersion"):
                return 400, bad_request("specifying resource version is "
                                        "not allowed when using "
                                        "continue"), {}
            try:
                tok = json.loads(base64.urlsafe_b64decode(
                    arg("continue").encode()))
                rv, start = str(int(tok["rv"])), str(tok["start"])
            except (ValueError, KeyError, TypeError):
                return 400, bad_request("continue key is not valid"), {}
            items = [o for o in items if key(o) > start]
        meta = {"resourceVersion": rv}
        try:
            limit = int(arg("limit") or 0)
        except ValueError:
            return 400, bad_request("limit: not an integer"), {}
        if limit > 0 and len(items) > limit and (
                arg("resourceVersion") != "0" or self.list_cache_pages):
            items = items[:limit]
            meta["continue"] = base64.urlsafe_b64encode(json.dumps(
                {"rv": int(rv), "start": key(items[-1])}
            ).encode()).decode()
        return 200, {"kind": "LeaseList", "apiVersion": LEASE_API,
                     "metadata": meta, "items": items}, {}

    def _lease_all(self, method, query):
        """GET /apis/coordination.k8s.io/v1/leases: every namespace's
        Leases, by namespace then name (etcd's key order)."""
        if method != "GET":
            return 405, status_body(405, "the server does not allow this "
                                    "method on the requested resource"), {}
        q = urllib.parse.parse_qs(query, keep_blank_values=True)
        try:
            lsel = _parse_selector((q.get("labelSelector") or [""])[0],
                                   None)
            fsel = _parse_selector((q.get("fieldSelector") or [""])[0],
                                   ("metadata.name", "metadata.namespace"))
        except ValueError as e:
            return 400, bad_request(str(e)), {}
        with self._lock:
            items = [copy.deepcopy(o) for _, o in sorted(self._leases.items())
                     if _selected(o, fsel, lsel)]
            for o in items:
                o.pop("kind", None)
                o.pop("apiVersion", None)
            return self._list_page(q, items, key=lambda o: "%s/%s" % (
                o["metadata"]["namespace"], o["metadata"]["name"]))

    def _cand_all(self, method):
        """GET /apis/coordination.k8s.io/v1beta1/leasecandidates."""
        if not getattr(self, "_cands_on", False):
            return 404, status_body(404, "the server could not find the "
                                    "requested resource", "NotFound", {}), {}
        if method != "GET":
            return 405, status_body(405, "method not allowed"), {}
        with self._lock:
            return 200, {"kind": "LeaseCandidateList",
                         "apiVersion": CAND_API,
                         "metadata": {"resourceVersion": str(self._rv)},
                         "items": [copy.deepcopy(o) for _, o in sorted(
                             getattr(self, "_cands", {}).items())]}, {}

    def _patch(self, ns, name, body, token, entry, manager):
        """A JSON merge patch (application/merge-patch+json) of the Lease
        ns/name, as kubectl patch --type merge sends it."""
        ctype = entry.get("ctype") or ""
        if ctype != "application/merge-patch+json":
            return 415, status_body(
                415, "the body of the request was in an unknown format - "
                "accepted media types include: application/json-patch+json, "
                "application/merge-patch+json, application/apply-patch+yaml",
                "UnsupportedMediaType"), {}
        old = self._leases.get((ns, name))
        if old is None:
            return 404, not_found(name), {}
        try:
            patch = json.loads(body)
        except (ValueError, TypeError) as e:
            return 400, bad_request(str(e)), {}
        obj = _merge_patch(copy.deepcopy(old), patch)
        spec = obj.get("spec") or {}
        causes = _validate(name, spec)
        if causes:
            return 422, invalid(name, causes), {}
        obj = self._store_update(ns, name, obj["metadata"], spec, manager)
        self._record("PATCH", ns, name, token, entry["t_recv"], obj, False)
        return 200, copy.deepcopy(obj), {}

    def _create(self, ns, body, token, entry, manager):
        try:
            _, meta, spec = _decode_lease(body)
        except _DecodeError as e:
            return 400, bad_request(str(e)), {}
        bns = meta.get("namespace") or ""
        if bns and bns != ns:
            return 400, bad_request("the namespace of the provided object "
                                    "does not match the namespace sent on "
                                    "the request"), {}
        name = meta.get("name") or ""
        if not name:
            return 422, status_body(
                422, 'Lease.coordination.k8s.io "" is invalid: metadata.name: '
                'Required value: name or generateName is required', "Invalid",
                {"group": GROUP, "kind": "Lease", "causes": [
                    {"reason": "FieldValueRequired",
                     "message": "Required value: name or generateName is "
                     "required", "field": "metadata.name"}]}), {}
        causes = _validate(name, spec)
        if causes:
            return 422, invalid(name, causes), {}
        if (ns, name) in self._leases:
            return 409, already_exists(name), {}
        obj = self._store_new(ns, name, meta, spec, manager)
        self._record("POST", ns, name, token, entry["t_recv"], obj, True,
                     entry.get("fault") == "apply_then_close")
        return 201, copy.deepcopy(obj), {}

    def _update(self, ns, name, body, token, entry, manager):
        try:
            _, meta, spec = _decode_lease(body)
        except _DecodeError as e:
            return 400, bad_request(str(e)), {}
        bname = meta.get("name") or ""
        if bname != name:
            return 400, bad_request("the name of the object (%s) does not "
                                    "match the name on the URL (%s)"
                                    % (bname, name)), {}
        bns = meta.get("namespace") or ""
        if bns and bns != ns:
            return 400, bad_request("the namespace of the provided object "
                                    "does not match the namespace sent on "
                                    "the request"), {}
        uid = meta.get("uid") or ""
        rv = meta.get("resourceVersion") or ""
        if rv and not rv.isdigit():
            return 400, bad_request('metadata.resourceVersion: Invalid value: '
                                    '"%s": must be a valid resource version'
                                    % rv), {}
        old = self._leases.get((ns, name))
        # The uid precondition is checked against the stored object (an
        # empty one when missing), as GuaranteedUpdate does.
        olduid = old["metadata"]["uid"] if old is not None else ""
        if uid and uid != olduid:
            return 409, conflict(name, "Precondition failed: UID in "
                                 "precondition: %s, UID in object meta: %s"
                                 % (uid, olduid)), {}
        if old is None:
            # AllowCreateOnUpdate: metadata is wiped as on create.
            causes = _validate(name, spec)
            if causes:
                return 422, invalid(name, causes), {}
            m = dict(meta)
            m.pop("uid", None)
            m.pop("resourceVersion", None)
            m.pop("creationTimestamp", None)
            obj = self._store_new(ns, name, m, spec, manager)
            self._record("PUT", ns, name, token, entry["t_recv"], obj, True,
                         entry.get("fault") == "apply_then_close")
            return 201, copy.deepcopy(obj), {}
        if not rv:
            return 422, invalid(name, [("metadata.resourceVersion", "0",
                                        "must be specified for an update")],
                                kind="leases"), {}
        if rv != old["metadata"]["resourceVersion"]:
            return 409, conflict(name), {}
        causes = _validate(name, spec)
        if causes:
            return 422, invalid(name, causes), {}
        m = {k: copy.deepcopy(v) for k, v in meta.items()
             if k in META_ORDER and k != "managedFields"}
        obj = self._store_update(ns, name, m, spec, manager)
        self._record("PUT", ns, name, token, entry["t_recv"], obj, False,
                     entry.get("fault") == "apply_then_close")
        return 200, copy.deepcopy(obj), {}

    def _event_list(self, ns, query):
        """GET a namespace's core/v1 Events, a fieldSelector on
        involvedObject.kind and .name (the doctor's recent holders)."""
        q = urllib.parse.parse_qs(query, keep_blank_values=True)
        want = {}
        for term in (q.get("fieldSelector") or [""])[0].split(","):
            k, eq, v = term.partition("=")
            if eq:
                want[k.strip()] = v.strip()
        with self._lock:
            items = []
            for ev in self._events:
                if ev.get("metadata", {}).get("namespace") != ns:
                    continue
                io = ev.get("involvedObject") or {}
                if all(io.get(k.split(".", 1)[1]) == v for k, v in
                       want.items() if k.startswith("involvedObject.")):
                    items.append(copy.deepcopy(ev))
            return 200, {"kind": "EventList", "apiVersion": "v1",
                         "metadata": {"resourceVersion": str(self._rv)},
                         "items": items}, {}

    def _event(self, ns, body):
        try:
            ev = json.loads(body)
        except (ValueError, UnicodeDecodeError) as e:
            return 400, bad_request("couldn't get version/kind; json parse "
                                    "error: %s" % e), {}
        if not isinstance(ev, dict):
            return 400, bad_request("couldn't get version/kind; json parse "
                                    "error: not an object"), {}
        with self._lock:
            self._rv += 1
            meta = ev.setdefault("metadata", {})
            if not isinstance(meta, dict):
                return 400, bad_request("Event in version \"v1\" cannot be "
                                        "handled as a Event"), {}
            meta.setdefault("namespace", ns)
            meta["uid"] = str(uuid.uuid4())
            meta["resourceVersion"] = str(self._rv)
            meta["creationTimestamp"] = now_rfc3339()
            ev.setdefault("kind", "Event")
            ev.setdefault("apiVersion", "v1")
            self._events.append(copy.deepcopy(ev))
        return 201, ev, {}

    # -- pods (the leader label) -------------------------------------

    def create_pod(self, ns, name, labels=None, service_account=None):
        """A Pod object for the label tests (no containers run), of
        service_account (spec.serviceAccountName) when given."""
        with self._lock:
            self._rv += 1
            meta = {"name": name, "namespace": ns, "uid": str(uuid.uuid4()),
                    "resourceVersion": str(self._rv),
                    "creationTimestamp": now_rfc3339()}
            if labels:
                meta["labels"] = dict(labels)
            self._pods[(ns, name)] = {"kind": "Pod", "apiVersion": "v1",
                                      "metadata": meta,
                                      "spec": {"serviceAccountName":
                                               service_account}
                                      if service_account else {},
                                      "status": {"phase": "Running"}}
            self._pod_history.append((time.monotonic(), ns, name,
                                      dict(labels or {}), None))

    def delete_pod(self, ns, name):
        with self._lock:
            self._pods.pop((ns, name), None)

    def get_pod(self, ns, name):
        with self._lock:
            o = self._pods.get((ns, name))
            return copy.deepcopy(o) if o is not None else None

    def pod_labels(self, ns, name):
        o = self.get_pod(ns, name)
        return None if o is None else o["metadata"].get("labels", {})

    def set_pod_labels(self, ns, name, labels):
        """Overwrite a pod's labels, as someone editing it by hand."""
        with self._lock:
            o = self._pods[(ns, name)]
            self._rv += 1
            o["metadata"]["labels"] = dict(labels)
            o["metadata"]["resourceVersion"] = str(self._rv)
            self._pod_history.append((time.monotonic(), ns, name,
                                      dict(labels), None))

    def pod_history(self, ns=None, name=None):
        """Every change of pod labels: (t monotonic, ns, name, labels after,
        token of the writer or None)."""
        with self._lock:
            return [copy.deepcopy(h) for h in self._pod_history
                    if (ns is None or h[1] == ns) and
                    (name is None or h[2] == name)]

    def _pod_list(self, ns, query):
        """GET a namespace's pods, by labelSelector."""
        q = urllib.parse.parse_qs(query, keep_blank_values=True)
        try:
            lsel = _parse_selector((q.get("labelSelector") or [""])[0], None)
        except ValueError as e:
            return 400, bad_request(str(e)), {}
        with self._lock:
            items = [copy.deepcopy(o) for (n, _), o in
                     sorted(self._pods.items())
                     if n == ns and _selected(o, [], lsel)]
            return 200, {"kind": "PodList", "apiVersion": "v1",
                         "metadata": {"resourceVersion": str(self._rv)},
                         "items": items}, {}

    def _pod(self, method, ns, name, body, token, entry):
        with self._lock:
            obj = self._pods.get((ns, name))
            if obj is None:
                return 404, status_body(404, 'pods "%s" not found' % name,
                                        "NotFound", {"name": name,
                                                     "kind": "pods"}), {}
            if method == "GET":
                return 200, copy.deepcopy(obj), {}
            if method != "PATCH":
                return 405, status_body(405, "the server does not allow "
                                        "this method on the requested "
                                        "resource"), {}
            try:
                patch = json.loads(body)
            except (ValueError, UnicodeDecodeError) as e:
                return 400, bad_request("error decoding patch: %s" % e), {}
            if not isinstance(patch, dict):
                return 400, bad_request("error decoding patch: not an "
                                        "object"), {}
            new = _merge_patch(copy.deepcopy(obj), patch)
            if not isinstance(new.get("metadata"), dict) or \
                    new["metadata"].get("name") != name:
                return 422, invalid(name, [("metadata.name", '"%s"' % name,
                                            "field is immutable")], "Pod"), {}
            old_labels = obj["metadata"].get("labels", {})
            new_labels = new["metadata"].get("labels", {})
            if new != obj:
                self._rv += 1
                new["metadata"]["resourceVersion"] = str(self._rv)
                self._pods[(ns, name)] = new
            if new_labels != old_labels:
                self._pod_history.append((entry["t_recv"], ns, name,
                                          dict(new_labels), token))
            return 200, copy.deepcopy(self._pods[(ns, name)]), {}

    # -- clients ---------------------------------------------------------

    def write_kubeconfig(self, path, token=None, token_file=None,
                         user="leaderd", namespace="default", ca=True,
                         server=None, ca_file=None):
        """Write a kubeconfig for this server: certificate-authority is the
        generated CA file (for TLS; ca_file overrides it, ca=False leaves
        it out), the user has `token` or `token_file` (tokenFile); server
        overrides the URL.  Returns path."""
        q = json.dumps
        lines = ["apiVersion: v1", "kind: Config", "clusters:",
                 "- name: fakeapi", "  cluster:",
                 "    server: %s" % q(server or self.url)]
        if self.tls and ca:
            lines.append("    certificate-authority: %s"
                         % q(ca_file or self.ca_file))
        lines += ["users:", "- name: %s" % q(user), "  user:"]
        if token_file is not None:
            lines.append("    tokenFile: %s" % q(token_file))
        elif token is not None:
            lines.append("    token: %s" % q(token))
        else:
            lines[-1] = "  user: {}"
        lines += ["contexts:", "- name: fakeapi", "  context:",
                  "    cluster: fakeapi", "    user: %s" % q(user)]
        if namespace:
            lines.append("    namespace: %s" % q(namespace))
        lines += ["current-context: fakeapi", ""]
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(lines))
        os.replace(tmp, path)
        return path


def _newkey(key_type):
    """openssl req's -newkey arguments for key_type: "ec" (P-256) or
    "rsa:BITS"."""
    if key_type == "ec":
        return ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
    if key_type.startswith("rsa:") and key_type[4:].isdigit():
        return ["-newkey", key_type]
    raise ValueError("key_type %r: ec or rsa:BITS" % key_type)


def make_certs(d, key_type="ec"):
    """A CA and a server certificate for 127.0.0.1 and localhost, made
    with the openssl tool in directory d (reused if already there, and
    of the same key_type), both with keys of key_type: "ec" (P-256) or
    "rsa:BITS".  Returns (ca_file, cert_file, key_file)."""
    ca, cakey = os.path.join(d, "ca.crt"), os.path.join(d, "ca.key")
    crt, key = os.path.join(d, "server.crt"), os.path.join(d, "server.key")
    kind = os.path.join(d, "key-type")
    new = _newkey(key_type)
    if all(os.path.exists(p) for p in (ca, crt, key)):
        made = "ec"
        if os.path.exists(kind):
            with open(kind) as f:
                made = f.read().strip()
        if made != key_type:
            raise ValueError("%s holds %s certificates, not %s" % (
                d, made, key_type))
        return ca, crt, key
    os.makedirs(d, exist_ok=True)
    with open(kind, "w") as f:
        f.write(key_type + "\n")
    csr, ext = os.path.join(d, "server.csr"), os.path.join(d, "server.ext")
    with open(ext, "w") as f:
        f.write("basicConstraints=critical,CA:FALSE\n"
                "keyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\n"
                "subjectAltName=IP:127.0.0.1,DNS:localhost\n")

    def run(*args):
        p = subprocess.run(["openssl"] + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        if p.returncode != 0:
            raise RuntimeError("openssl %s failed: %s"
                               % (args[0], p.stderr.decode(errors="replace")))

    run("req", "-x509", *new, "-nodes", "-keyout", cakey, "-out", ca,
        "-days", "7", "-subj", "/CN=fakeapi test CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    run("req", "-new", *new, "-nodes", "-keyout", key, "-out", csr,
        "-subj", "/CN=localhost")
    run("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", cakey,
        "-CAcreateserial", "-out", crt, "-days", "7", "-sha256",
        "-extfile", ext)
    for p in (cakey, key):
        os.chmod(p, 0o600)
    return ca, crt, key


def issue_cert(d, name, san=None, cn="localhost", client=False, key_type="ec",
               digest="sha256"):
    """A key and a certificate signed by the CA make_certs(d) made:
    d/NAME.crt, d/NAME.key, with subjectAltName san (e.g.
    "IP:::1,DNS:localhost"; None: no SAN extension), a server
    certificate or, with client=True, a client one.  key_type: "ec"
    (P-256) or "rsa:BITS"; digest: the CA's signature hash ("sha256",
    "sha1", ...).  Returns (crt, key)."""
    ca, cakey = os.path.join(d, "ca.crt"), os.path.join(d, "ca.key")
    crt, key = os.path.join(d, name + ".crt"), os.path.join(d, name + ".key")
    csr, ext = os.path.join(d, name + ".csr"), os.path.join(d, name + ".ext")
    with open(ext, "w") as f:
        f.write("basicConstraints=critical,CA:FALSE\n"
                "keyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=%s\n"
                % ("clientAuth" if client else "serverAuth"))
        if san is not None:
            f.write("subjectAltName=%s\n" % san)
    _openssl("req", "-new", *_newkey(key_type), "-nodes", "-keyout", key, "-out", csr,
             "-subj", "/CN=%s" % cn)
    _openssl("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", cakey,
             "-CAcreateserial", "-out", crt, "-days", "7", "-" + digest,
             "-extfile", ext)
    os.chmod(key, 0o600)
    return crt, key


def _openssl(*args):
    p = subprocess.run(["openssl"] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    if p.returncode != 0:
        raise RuntimeError("openssl %s failed: %s"
                           % (args[0], p.stderr.decode(errors="replace")))


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="A test Kubernetes API server with the Lease endpoints.")
    ap.add_argument("--port", type=int, default=0,
                    help="TCP port on 127.0.0.1 (default: any free port)")
    ap.add_argument("--http", action="store_true",
                    help="plain HTTP instead of HTTPS")
    ap.add_argument("--token", action="append", default=[],
                    help="accepted bearer token (repeatable; default "
                    "'fakeapi-token')")
    ap.add_argument("--dir", default=None,
                    help="directory for certificates and the kubeconfig "
                    "(default: a new temporary directory)")
    ap.add_argument("--key-type", default="ec",
                    help="keys of the CA and the server certificate: ec "
                    "(P-256, the default) or rsa:BITS, e.g. rsa:2048")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="log every request on stderr")
    args = ap.parse_args(argv)
    tokens = args.token or ["fakeapi-token"]
    d = args.dir or tempfile.mkdtemp(prefix="fakeapi-")
    api = FakeAPI(tokens=tokens, tls=not args.http, port=args.port,
                  certdir=d, verbose=args.verbose,
                  key_type=args.key_type).start()
    kc = api.write_kubeconfig(os.path.join(d, "kubeconfig"), token=tokens[0])
    print("fakeapi listening on %s" % api.url, flush=True)
    print("kubeconfig: %s" % kc, flush=True)
    stop = threading.Event()
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, lambda *_: stop.set())
    while not stop.wait(0.5):
        pass
    api.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
