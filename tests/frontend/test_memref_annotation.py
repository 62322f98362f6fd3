"""`pl.MemRef` in a tile annotation: a declared allocation (with runtime-indexed slots) or
an (addr, size, offset) one parses; the simulator gives every tile its own storage, so
two co-live tiles on the two slots keep their own values."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoTypeError

M, K, N, TN = 32, 32, 128, 32
NT = N // TN


@pl.jit
def slot_pingpong(a: pl.Tensor[[M, K], pl.FP32], a2: pl.Tensor[[M, K], pl.FP32],
                  b: pl.Tensor[[K, N], pl.FP32], out1: pl.Out[pl.Tensor[[M, N], pl.FP32]],
                  out2: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    for _ in pl.spmd(1, name_hint="slots"):
        la: pl.Tile[[M, K], pl.FP32, pl.Mem.Mat] = pl.load(a, [0, 0], [M, K],
                                                           target_memory=pl.Mem.Mat)
        la2: pl.Tile[[M, K], pl.FP32, pl.Mem.Mat] = pl.load(a2, [0, 0], [M, K],
                                                            target_memory=pl.Mem.Mat)
        for i in pl.range(NT):
            lb: pl.Tile[[K, TN], pl.FP32, pl.Mem.Mat] = pl.load(b, [0, i * TN], [K, TN],
                                                                target_memory=pl.Mem.Mat)
            cur: pl.Tile[[M, TN], pl.FP32, pl.MemRef("l0c", slots=2)[i % 2], pl.Mem.Acc] = \
                pl.tile.matmul(la, lb)
            other: pl.Tile[[M, TN], pl.FP32, pl.MemRef("l0c", slots=2)[(i + 1) % 2],
                           pl.Mem.Acc] = pl.tile.matmul(la2, lb)
            pl.store(cur, [0, i * TN], out1)
            pl.store(other, [0, i * TN], out2)


@pl.jit
def slot_out_of_range(a: pl.Tensor[[M, K], pl.FP32], out: pl.Out[pl.Tensor[[M, K], pl.FP32]]):
    for _ in pl.spmd(1, name_hint="bad_slot"):
        t: pl.Tile[[M, K], pl.FP32, pl.MemRef("ub", slots=2)[2], pl.Mem.Vec] = pl.load(  # MARK
            a, [0, 0], [M, K])
        pl.store(t, [0, 0], out)


def test_runtime_indexed_slots_keep_their_own_tiles():
    rng = np.random.default_rng(0)
    a, a2 = (rng.standard_normal((M, K)).astype(np.float32) for _ in range(2))
    b = rng.standard_normal((K, N)).astype(np.float32)
    out1, out2 = np.zeros((M, N), np.float32), np.zeros((M, N), np.float32)
    slot_pingpong(a, a2, b, out1, out2)
    np.testing.assert_allclose(out1, a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out2, a2 @ b, rtol=1e-5, atol=1e-5)


def test_a_constant_slot_out_of_range_is_a_located_type_error():
    with pytest.raises(PyptoTypeError, match=r"slot 2 is out of range for pl\.MemRef") as e:
        slot_out_of_range(np.zeros((M, K), np.float32), np.zeros((M, K), np.float32))
    text = Path(__file__).read_text().splitlines()
    line = next(i for i, s in enumerate(text, 1) if "# MARK" in s)
    assert f"test_memref_annotation.py:{line}:" in str(e.value)


def test_memref_spellings():
    assert pl.MemRef("l0c", slots=2)[1].slot == 1
    assert pl.MemRef(0x1000, 512, 0).declared is False
    with pytest.raises(TypeError, match="slots must be a positive int"):
        pl.MemRef("x", slots=0)
    with pytest.raises(TypeError, match="only a declared"):
        pl.MemRef(0x1000, 512, 0)[0]
    with pytest.raises(TypeError, match="takes a declaration name"):
        pl.MemRef("a", "b")
