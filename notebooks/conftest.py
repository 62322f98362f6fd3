"""nbval over the tutorials: point it at this folder's sanitize file, wherever pytest
was started from (`--nbval-lax --nbval-current-env` come from pyproject's addopts)."""
from __future__ import annotations

from pathlib import Path

SANITIZE = Path(__file__).with_name("nbval_sanitize.cfg")


def pytest_configure(config):
    opt = config.option
    if hasattr(opt, "nbval_sanitize_with") and not opt.nbval_sanitize_with:
        opt.nbval_sanitize_with = str(SANITIZE)
