"""The kit's own tests (test_fakeapi.py, test_peerpod.py): the session's
certificates from fixtures.py and the same per-test alarm as the
integration suite."""

import os

import pytest

import harness
from fixtures import certdir  # noqa: F401

TEST_TIME_LIMIT = int(os.environ.get("ITEST_TIME_LIMIT", "60"))


@pytest.fixture(autouse=True)
def time_limit():
    """Fail a test that runs longer than TEST_TIME_LIMIT seconds."""
    with harness.time_limit(TEST_TIME_LIMIT):
        yield
