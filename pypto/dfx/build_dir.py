"""The build directory of a run, laid out as pypto's `ir.compile` and runner lay it out:

    build_output/<Program>_<YYYYmmdd_HHMMSS>/    ($PYPTO_PROG_BUILD_DIR instead of
        data/in/, data/out/                       build_output/, as pypto reads it)
        passes_dump/00_frontend.py, NN_after_<Pass>.py
        dfx_outputs/                              one card
        dfx_outputs/rank<r>/d<k>/                 a multi-card run: rank r's k-th
                                                  dispatch (pypto's distributed runner)

pypto creates the directory when it compiles; here it is made when the first file is
written into it (a run that writes nothing leaves no directory behind).
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path


def default_root(program: str, now: float | None = None) -> Path:
    """`build_output/<program>_<timestamp>` (under $PYPTO_PROG_BUILD_DIR when set)."""
    base = os.environ.get("PYPTO_PROG_BUILD_DIR") or "build_output"
    stamp = time.strftime("%Y%m%d_%H%M%S", time.localtime(now))
    return Path(base) / f"{program}_{stamp}"


@dataclass(frozen=True)
class BuildDir:
    """The directories of one run's build."""

    root: Path

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def passes_dump(self) -> Path:
        return self.root / "passes_dump"

    def dfx(self, rank: int | None = None, dispatch: int = 0) -> Path:
        """`dfx_outputs/` of a one-card run, `dfx_outputs/rank<r>/d<k>/` of rank r's k-th
        dispatch in a multi-card run."""
        base = self.root / "dfx_outputs"
        return base if rank is None else base / f"rank{rank}" / f"d{dispatch}"


__all__ = ["BuildDir", "default_root"]
