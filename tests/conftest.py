import os
import socket
import sys

os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

import pytest  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """Run in a scratch folder, so logs/ lands there."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
