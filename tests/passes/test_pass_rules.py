"""Rules that need the unit analysis: pl.split, pl.cross_core_slot, written inputs."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

import pypto.language as pl
from pypto.errors import PyptoWarning

SRC = Path(__file__).read_text().splitlines()


def _where(marker: str, token: str) -> tuple[int, int]:
    """(line, column) of `token` on the unique source line containing `marker`."""
    lines = [i for i, text in enumerate(SRC, 1) if "# " + marker in text]
    assert len(lines) == 1, marker
    return lines[0], SRC[lines[0] - 1].index(token) + 1


@pl.jit
def split_vector(x: pl.Tensor[[128, 64], pl.FP32], y: pl.Out[pl.Tensor[[128, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="vec_only",
               optimizations=[pl.split(pl.SplitMode.LEFT_RIGHT)]):  # MARK-split
        y[0:128, 0:64] = pl.exp(x[0:128, 0:64])
    return y


@pl.jit
def split_cube(a: pl.Tensor[[64, 64], pl.FP16], b: pl.Tensor[[64, 64], pl.FP16],
               c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm",
               optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):  # MARK-cube
        c[0:64, 0:64] = pl.matmul(a, b, out_dtype=pl.FP32)
    return c


@pl.jit
def split_mixed(a: pl.Tensor[[64, 64], pl.FP16], b: pl.Tensor[[64, 64], pl.FP16],
                c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm_relu",
               optimizations=[pl.split(pl.SplitMode.UP_DOWN)]):
        c[0:64, 0:64] = pl.relu(pl.matmul(a, b, out_dtype=pl.FP32))
    return c


@pl.jit
def slot_vector(x: pl.Tensor[[128, 64], pl.FP32], y: pl.Out[pl.Tensor[[128, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="vec_slots",
               optimizations=[pl.cross_core_slot(slot_num=4)]):  # MARK-slot
        y[0:128, 0:64] = pl.exp(x[0:128, 0:64])
    return y


@pl.jit
def written_input(x: pl.Tensor[[64, 64], pl.FP32],
                  y: pl.Tensor[[64, 64], pl.FP32]):  # MARK-input
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="writer"):
        y[0:64, 0:64] = pl.exp(x[0:64, 0:64])
    return y


@pl.jit
def updated_input(x: pl.Tensor[[64, 64], pl.FP32]):  # MARK-inout
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="updater"):
        x[0:64, 0:64] = pl.add(x[0:64, 0:64], 1.0)
    return x


def _split_warnings(kernel):
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        compiled = kernel.compile()
    return compiled, [w for w in compiled.warnings if "pl.split" in w.message]


def test_split_on_pure_vector_region_is_accepted_with_a_warning():
    # the real compiler accepts it (its own tests split pure-vector regions); the L2 guide
    # says such a region has nothing to ping-pong
    compiled, (w,) = _split_warnings(split_vector)
    assert compiled.regions[0].split == "LEFT_RIGHT"
    assert w.message == ("pl.split(pl.SplitMode.LEFT_RIGHT) on region 'vec_only': a "
                         "pure-vector region has nothing to ping-pong (pl.split applies only "
                         "to a mixed cube + vector region, so the cube and vector units "
                         "ping-pong on the two halves)")
    assert (w.span.line, w.span.col) == _where("MARK-split", "pl.split")
    assert w.span.file == __file__
    assert "drop pl.split(...)" in w.hint
    x = np.linspace(-2, 2, 128 * 64, dtype=np.float32).reshape(128, 64)
    y = np.zeros_like(x)
    split_vector(x, y)  # and runs: the split changes nothing in what it computes
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)


def test_split_on_pure_cube_region_is_accepted_with_a_warning():
    _, (w,) = _split_warnings(split_cube)
    assert "a pure-cube region has nothing to ping-pong" in w.message
    assert (w.span.line, w.span.col) == _where("MARK-cube", "pl.split")


def test_split_on_mixed_region_is_fine():
    compiled = split_mixed.compile()
    assert compiled.regions[0].classification == "mixed"
    assert compiled.regions[0].split == "UP_DOWN"


def test_cross_core_slot_without_pipe_is_reported_ignored():
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        compiled = slot_vector.compile()
    ws = [w for w in compiled.warnings if "cross_core_slot" in w.message]
    assert len(ws) == 1
    w = ws[0]
    assert isinstance(w, PyptoWarning)
    assert w.message == ("pl.cross_core_slot(slot_num=4) is ignored: region 'vec_slots' has no "
                         "cross-core traffic (it is vector, no tile moves between cube and "
                         "vector)")
    assert (w.span.line, w.span.col) == _where("MARK-slot", "pl.cross_core_slot")
    assert w.hint.startswith("remove pl.cross_core_slot(...)")


def test_written_plain_tensor_parameter_warns():
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        compiled = written_input.compile()
    ws = [w for w in compiled.warnings if "host will read zeros" in w.message]
    assert len(ws) == 1
    w = ws[0]
    assert w.message == ("entry tensor 'y' is written by the kernel but declared as an input "
                         "(pl.Tensor): the host will read zeros")
    assert (w.span.line, w.span.col) == _where("MARK-input", "y: pl.Tensor")
    assert w.hint == "declare it pl.Out[pl.Tensor[...]] so the result is copied back"
    # x is only read: no warning for it
    assert not [w for w in compiled.warnings if "'x'" in w.message]


def test_read_and_written_plain_tensor_suggests_inout():
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        compiled = updated_input.compile()
    ws = [w for w in compiled.warnings if "host will read zeros" in w.message]
    assert len(ws) == 1 and "'x'" in ws[0].message
    assert ws[0].hint == "declare it pl.InOut[pl.Tensor[...]] so the result is copied back"
    assert (ws[0].span.line, ws[0].span.col) == _where("MARK-inout", "x: pl.Tensor")
