"""Fixtures for the deployment tests; helpers are in deploy_helpers.py."""

import os
import pathlib

import pytest

from deploy_helpers import leaderd_path


@pytest.fixture(scope="session")
def leaderd():
    path = leaderd_path()
    if not path.is_file() or not os.access(path, os.X_OK):
        pytest.fail(f"leaderd binary not found at {path}: build it with "
            "`make leaderd` in the repository root, or set LEADERD to "
            "its path")
    return path


@pytest.fixture(scope="session")
def licenses():
    """The licence directory of the binary under test ($LEADERD_LICENSES,
    as `make deploy-test` and `make image-test` pass it): what
    mkrootfs.sh puts in the image's /licenses."""
    path = os.environ.get("LEADERD_LICENSES")
    if not path:
        pytest.fail("LEADERD_LICENSES is not set: run these tests with "
            "`make deploy-test` or `make image-test`, or set it to the "
            "static build's licence directory (build/static/musl/licenses)")
    p = pathlib.Path(path)
    if not (p / "COMPONENTS").is_file():
        pytest.fail(f"{p}/COMPONENTS: no such file (make image-bin)")
    return p
