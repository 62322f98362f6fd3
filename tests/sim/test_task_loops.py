"""Each task records the values of the orchestration loops around its launch (the
workbench names an element's writer by them): batched `pl.parallel` nests, sequential
loops and the two nested."""
from __future__ import annotations

import numpy as np

import pypto.language as pl
import pypto.sim as sim


def _kernel():
    """A fresh kernel each call (the simulator keeps its executables per kernel)."""

    @pl.jit
    def nested(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
        for i in pl.range(2):
            for j in pl.parallel(0, 64, 32):
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="q"):
                    y[i * 32 : i * 32 + 32, j : j + 32] = pl.exp(
                        x[i * 32 : i * 32 + 32, j : j + 32])
        return y

    return nested


def _loops(batch: bool, monkeypatch) -> list:
    monkeypatch.setenv("PYPTO_SIM_BATCH", "1" if batch else "0")
    x = np.full((64, 64), 0.5, np.float32)
    y = np.zeros_like(x)
    r = sim.simulate(_kernel(), x, y, trace=True)
    assert np.allclose(y, np.exp(x))
    return [t.loops for t in r.trace.tasks if t.kind != "entry"]


def test_tasks_record_their_loop_values_batched_or_not(monkeypatch):
    want = [(("i", 0), ("j", 0)), (("i", 0), ("j", 32)), (("i", 1), ("j", 0)),
            (("i", 1), ("j", 32))]
    assert _loops(True, monkeypatch) == want
    assert _loops(False, monkeypatch) == want
