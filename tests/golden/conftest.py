"""Fixtures for the harness tests (helpers live in golden_helpers.py)."""
import pytest

from golden_helpers import FakeCompiled, fake_simulate


@pytest.fixture
def fake_kernel(monkeypatch):
    """Route the harness's simulator call to the stand-in device of golden_helpers."""
    import pypto.golden.runner as runner

    monkeypatch.setattr(runner, "_simulate", fake_simulate)
    return FakeCompiled
