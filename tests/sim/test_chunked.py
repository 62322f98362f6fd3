"""A row reduction of an inline elementwise op computed a slice of the batch at a time
(`ufuncs.chunked_reduction`): bit for bit as block by block, whatever the slices."""
from __future__ import annotations

import warnings

import batch_kernels as K
import numpy as np
import pytest

import pypto.sim.batch.rules.reduce as reduce_rule
import pypto.sim.batch.ufuncs as ufuncs
from pypto.sim import SimConfig

warnings.filterwarnings("ignore")


def _inputs():
    rng = np.random.default_rng(12)
    x = rng.standard_normal((520, 1024)).astype(np.float32)
    w = rng.standard_normal((1, 1024)).astype(np.float32)
    return x, w


def _run(config=None):
    x, w = _inputs()
    y, z = np.zeros((520, 1), np.float32), np.zeros((520, 1), np.float32)
    r = K.chunked_sumsq(x, w, y, z, config=config)
    return r, y, z


@pytest.mark.parametrize("over, chunk", [(1 << 20, 1 << 18), (0, 1 << 15), (0, 3 * 32768),
                                         (0, 1), (1 << 30, 1 << 18)])
def test_slices_of_any_size_give_the_same_bits(monkeypatch, over, chunk):
    """Slices of 8, 1, 3 blocks (65 is no multiple of 3), one block, and none at all."""
    monkeypatch.setattr(ufuncs, "CHUNK_OVER", over)
    monkeypatch.setattr(ufuncs, "CHUNK_BYTES", chunk)
    r, y, z = _run()
    assert r.batch_stats == {"batched": 1, "fallback": 0}, dict(r.batch_refusals)
    _, y2, z2 = _run(SimConfig(batch=False))
    assert np.array_equal(y.view(np.uint8), y2.view(np.uint8))
    assert np.array_equal(z.view(np.uint8), z2.view(np.uint8))
    x, w = _inputs()
    assert np.allclose(y, (x * x).sum(axis=1, keepdims=True), rtol=1e-5)
    assert np.array_equal(z, (x * w - x).max(axis=1, keepdims=True))


def test_the_slices_are_taken(monkeypatch):
    """With the threshold passed, the reduction runs once per slice of blocks."""
    calls: list = []
    real = ufuncs.chunked_reduction

    def counting(e, npdt):
        run = real(e, npdt)
        if run is None:
            return None

        def wrapped(args, nb, bs):
            out = run(args, nb, bs)
            calls.append(out is not None)
            return out
        return wrapped

    monkeypatch.setattr(reduce_rule, "chunked_reduction", counting)
    x, w = _inputs()
    y, z = np.zeros((520, 1), np.float32), np.zeros((520, 1), np.float32)
    # (a fresh JIT function of the same kernel: compiled again, with the counter)
    fresh = type(K.chunked_sumsq)(K.chunked_sumsq.fn, K.chunked_sumsq.kind,
                                  K.chunked_sumsq.options)
    fresh(x, w, y, z)
    assert calls == [True, True]  # (2 MiB of products each: sliced)
