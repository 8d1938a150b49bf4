"""Helpers shared by the deployment tests (manifests and Dockerfile).

Nothing here is skipped quietly: a missing tool or binary fails the test
that needs it, with a message that says what to install or build.
"""

import os
import pathlib
import shutil

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def leaderd_path():
    """The leaderd binary under test: $LEADERD, else ../../leaderd."""
    return pathlib.Path(os.environ.get("LEADERD", ROOT / "leaderd"))


def need_tool(name, hint):
    """The path of tool name, or fail the test saying how to get it."""
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} not found on PATH: {hint}")
    return path
