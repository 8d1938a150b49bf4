"""Fixtures for the deployment tests; helpers are in deploy_helpers.py."""

import os

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
