"""pytest fixtures shared by the suites that run leaderd against the
test API server (test/integration, test/faults, test/hygiene and the
kit's own test_fakeapi.py): each conftest imports the ones it uses, and
pytest picks them up there.

Python 3.11 standard library and pytest only."""

import os
import re
import tempfile
import uuid

import pytest

import fakeapi


@pytest.fixture(scope="session")
def certdir(tmp_path_factory):
    """One CA and server certificate for the whole session."""
    d = str(tmp_path_factory.mktemp("certs"))
    fakeapi.make_certs(d)
    return d


@pytest.fixture
def api(certdir):
    """A fresh test API server per test, over TLS."""
    a = fakeapi.FakeAPI(certdir=certdir).start()
    yield a
    a.stop()


@pytest.fixture
def lock_name(request):
    """A lock name unique to the test (a DNS-1123 subdomain)."""
    base = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")
    return "%s-%s" % (base[:40].strip("-"), uuid.uuid4().hex[:6])


@pytest.fixture
def sockdir():
    """A short directory for unix sockets (sun_path is 108 bytes)."""
    d = tempfile.mkdtemp(prefix="ld-", dir="/tmp")
    yield d
    for f in os.listdir(d):
        try:
            os.unlink(os.path.join(d, f))
        except OSError:
            pass
    os.rmdir(d)
