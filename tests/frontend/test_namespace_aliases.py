"""Names the real `pl` offers in two places are the same objects here (a kernel written
with either spelling parses alike)."""
from __future__ import annotations

import numpy as np

import pypto.language as pl


def test_the_real_second_homes_of_names():
    assert pl.system.AUTO is pl.AUTO
    assert pl.tensor.no_dep is pl.no_dep and pl.tensor.dump_tag is pl.dump_tag


@pl.jit.incore
def _double(x: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]):
    return pl.store(pl.mul(pl.load(x, [0, 0], [8, 16]), 2.0), [0, 0], y)


@pl.jit
def marked(x: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]):
    pl.tensor.dump_tag(x)
    y = _double(pl.tensor.no_dep(x), y)
    return y


def test_pl_tensor_markers_parse_as_the_pl_ones():
    x = np.arange(128, dtype=np.float32).reshape(8, 16)
    y = np.zeros_like(x)
    marked(x, y)
    np.testing.assert_array_equal(y, 2 * x)
