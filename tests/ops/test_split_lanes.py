"""pl.split_aiv lanes: a data-parallel region written at full width runs each AIV lane on
its half of every tile (rows for UP_DOWN, columns for LEFT_RIGHT) - the results are the
full-width body's, the per-lane buffers half; a region written per lane crosses with
pl.aiv_shard / pl.aic_gather; a NONE region runs the full body on both lanes."""
from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.errors import InvalidOperationError, PyptoSyntaxError, SimulationError
from pypto.ir.equal import assert_structural_equal
from pypto.ir.nodes import Call
from pypto.ir.printer import print_program
from pypto.ir.transform import walk
from tests.frontend.frontend_helpers import assert_at

R, C = 64, 128


@pl.jit
def up_down(a: pl.Tensor[[R, C], pl.FP32], b: pl.Tensor[[R, C], pl.FP32],
            out: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="lanes"):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            x = pl.load(a, [0, 0], [R, C])
            y = pl.tile.full([R, C], pl.FP32, 2.0)
            z = pl.add(pl.mul(pl.exp(x), y), pl.load(b, [0, 0], [R, C]))
            m = pl.row_max(z, pl.tile.create_tile([R, C], pl.FP32))
            out = pl.store(pl.row_expand_sub(z, m), [0, 0], out)
    return out


@pl.jit
def left_right(a: pl.Tensor[[R, C], pl.FP32], b: pl.Tensor[[R, C], pl.FP32],
               out: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="lanes"):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
            x = pl.load(a, [0, 0], [R, C])
            y = pl.tile.full([R, C], pl.FP32, 2.0)
            z = pl.add(pl.mul(pl.exp(x), y), pl.load(b, [0, 0], [R, C]))
            out = pl.store(z, [0, 0], out)
    return out


@pl.jit
def full_both(a: pl.Tensor[[R, C], pl.FP32], b: pl.Tensor[[R, C], pl.FP32],
              out: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="lanes"):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
            x = pl.load(a, [0, 0], [R, C])
            y = pl.tile.full([R, C], pl.FP32, 2.0)
            z = pl.add(pl.mul(pl.exp(x), y), pl.load(b, [0, 0], [R, C]))
            out = pl.store(z, [0, 0], out)
    return out


def _arrays(seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((R, C)).astype(np.float32)
    b = rng.standard_normal((R, C)).astype(np.float32)
    return a, b


def _region(kernel, *args):
    compiled = kernel.compile(*args)
    fn = next(f for f in compiled.program.functions if f.attr("name_hint") == "lanes")
    return compiled, fn


def test_up_down_lanes_each_compute_half_the_rows_and_agree_with_full_width():
    a, b = _arrays()
    out = np.zeros_like(a)
    up_down(a, b, out)
    z = np.exp(a) * 2 + b
    np.testing.assert_allclose(out, z - z.max(axis=1, keepdims=True), rtol=1e-6)
    _, fn = _region(up_down)
    loads = [n for n in walk(fn.body) if isinstance(n, Call) and n.op == "load"]
    assert loads and all(tuple(n.type.shape) == (R // 2, C) for n in loads)


def test_left_right_lanes_each_compute_half_the_columns():
    a, b = _arrays(1)
    out = np.zeros_like(a)
    left_right(a, b, out)
    np.testing.assert_allclose(out, np.exp(a) * 2 + b, rtol=1e-6)
    _, fn = _region(left_right)
    fulls = [n for n in walk(fn.body) if isinstance(n, Call) and n.op.endswith("full")]
    assert fulls and all(tuple(n.type.shape) == (R, C // 2) for n in fulls)


def test_the_per_lane_buffer_estimate_halves():
    half = _region(left_right)
    whole = _region(full_both)
    peak = {k: c.analyses["buffers"][fn.name].peak.get("Vec", 0)
            for k, (c, fn) in (("half", half), ("whole", whole))}
    assert peak["whole"] > 0 and peak["half"] * 2 == peak["whole"], peak


def test_a_none_region_runs_the_full_body_on_both_lanes():
    a, b = _arrays(2)
    out = np.zeros_like(a)
    full_both(a, b, out)
    np.testing.assert_allclose(out, np.exp(a) * 2 + b, rtol=1e-6)


def test_a_halved_region_round_trips_through_the_text_form():
    prog = up_down.compile().program
    assert_structural_equal(pl.parse(print_program(prog)), prog)


@pl.jit
def shard_and_gather(a: pl.Tensor[[R, C], pl.FP32], w: pl.Tensor[[C, C], pl.FP32],
                     out: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mixed"):
        mm = pl.matmul(pl.load(a, [0, 0], [R, C]), pl.load(w, [0, 0], [C, C]))
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            half = pl.aiv_shard(mm)
            act = pl.exp(pl.mul(half, 0.01))
            back = pl.aic_gather(act)
        out = pl.store(pl.matmul(back, pl.load(w, [0, 0], [C, C])), [0, 0], out)
    return out


def test_aiv_shard_and_aic_gather_cross_by_halves():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((R, C)).astype(np.float32)
    w = (rng.standard_normal((C, C)) * 0.1).astype(np.float32)
    out = np.zeros((R, C), np.float32)
    shard_and_gather(a, w, out)
    want = np.exp((a @ w) * 0.01) @ w
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
    fn = next(f for f in shard_and_gather.compile().program.functions
              if f.attr("name_hint") == "mixed")
    shards = [n for n in walk(fn.body) if isinstance(n, Call) and n.op == "aiv_shard"]
    gathers = [n for n in walk(fn.body) if isinstance(n, Call) and n.op == "aic_gather"]
    assert tuple(shards[0].type.shape) == (R // 2, C)
    assert tuple(gathers[0].type.shape) == (R, C)


@pl.jit
def odd_gather(a: pl.Tensor[[9, C], pl.FP32], out: pl.Out[pl.Tensor[[9, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mixed"):
        x = pl.load(a, [0, 0], [9, C])
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            back = pl.aic_gather(pl.exp(pl.aiv_shard(x)))
        out = pl.store(back, [0, 0], out)
    return out


@pl.jit
def holed_gather(a: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mixed"):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            x = pl.load(a, [lane * (R // 2), 0], [R // 2, C], valid_shape=[R // 2 - 1, C])
            back = pl.aic_gather(x)  # ERR:hole
        out = pl.store(back, [0, 0], out)
    return out


def test_an_odd_shard_gathers_back_to_its_odd_extent():
    a = np.random.default_rng(6).standard_normal((9, C)).astype(np.float32)
    out = np.full((9, C), np.nan, np.float32)
    odd_gather(a, out)  # lane 0's 5 rows and lane 1's 4 abut: 9 valid rows of a 10-row box
    np.testing.assert_allclose(out, np.exp(a), rtol=1e-6)


def test_a_gather_with_a_hole_between_the_lanes_is_a_fault():
    a = np.ones((R, C), np.float32)
    with pytest.raises(SimulationError) as info:
        holed_gather(a, np.zeros_like(a))
    assert "lane 0 holds 31 of its 32 rows and lane 1 holds 31" in info.value.message
    assert_at(info.value, __file__, "hole", "pl.aic_gather")


@pl.jit
def lanes_disagree(a: pl.Tensor[[R, C], pl.FP32], w: pl.Tensor[[C, C], pl.FP32],
                   out: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="none"):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.NONE):
            x = pl.load(a, [0, 0], [R, C])
            y = pl.add(x, pl.cast(lane, pl.FP32))
            back = pl.aic_gather(y)  # ERR:gather
        out = pl.store(pl.matmul(back, pl.load(w, [0, 0], [C, C])), [0, 0], out)
    return out


def test_a_none_gather_of_lane_dependent_values_is_a_fault():
    a = np.ones((R, C), np.float32)
    with pytest.raises(SimulationError) as info:
        lanes_disagree(a, np.ones((C, C), np.float32), np.zeros((R, C), np.float32))
    assert "different values" in info.value.message
    assert_at(info.value, __file__, "gather", "pl.aic_gather")


@pl.jit
def shard_outside(a: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.aiv_shard(pl.load(a, [0, 0], [R, C]))  # ERR:outside
        out = pl.store(x, [0, 0], out)
    return out


@pl.jit
def reduce_split_axis(a: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[1, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            s = pl.col_sum(pl.load(a, [0, 0], [R, C]))  # ERR:reduce
            out = pl.store(s, [0, 0], out)
    return out


@pl.jit
def odd_rows(a: pl.Tensor[[9, C], pl.FP32], out: pl.Out[pl.Tensor[[9, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="lanes"):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            x = pl.load(a, [0, 0], [9, C])
            out = pl.store(pl.add(pl.exp(x), pl.tile.full([9, C], pl.FP32, 1.0)), [0, 0], out)
    return out


@pl.jit
def odd_cols(a: pl.Tensor[[R, 12], pl.FP32], out: pl.Out[pl.Tensor[[R, 7], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="lanes"):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.LEFT_RIGHT):
            x = pl.load(a, [0, 2], [R, 7])  # a 7-column window inside a wider tensor
            out = pl.store(pl.mul(x, 3.0), [0, 0], out)
    return out


def test_an_odd_split_extent_gives_lane_1_one_cell_less():
    # 9 rows: both lanes hold a 5-row box, lane 0 fills 5 rows and lane 1 the other 4
    a = np.random.default_rng(4).standard_normal((9, C)).astype(np.float32)
    out = np.full((9, C), np.nan, np.float32)
    odd_rows(a, out)
    np.testing.assert_allclose(out, np.exp(a) + 1, rtol=1e-6)
    _, fn = _region(odd_rows)
    (load,) = [n for n in walk(fn.body) if isinstance(n, Call) and n.op == "load"]
    assert tuple(load.type.shape) == (5, C)
    # 7 of 12 columns: lane 1 reads columns 6..8 only, never the 9th the box overhangs
    b = np.random.default_rng(5).standard_normal((R, 12)).astype(np.float32)
    out2 = np.full((R, 7), np.nan, np.float32)
    odd_cols(b, out2)
    np.testing.assert_allclose(out2, 3 * b[:, 2:9], rtol=1e-6)


@pl.jit
def element_of_half(a: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            x = pl.load(a, [0, 0], [R, C])
            v = pl.tile.read(x, [0, 0])  # ERR:element
            out = pl.store(pl.mul(x, v), [0, 0], out)
    return out


@pl.jit
def ragged_window(a: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            x = pl.load(a, [0, 0], [R, C], valid_shape=[R - 3, C])  # ERR:ragged
            out = pl.store(x, [0, 0], out)
    return out


@pl.jit
def nested_split(a: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            for inner in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):  # ERR:nested
                out = pl.store(pl.load(a, [0, 0], [R, C]), [0, 0], out)
    return out


@pl.jit
def carried_split(a: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN, init_values=(0,)):  # ERR:kwarg
            out = pl.store(pl.load(a, [0, 0], [R, C]), [0, 0], out)
    return out


@pl.jit
def shard_with_mode(a: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            x = pl.aiv_shard(pl.load(a, [0, 0], [R, C]), mode=pl.SplitMode.UP_DOWN)  # ERR:mode
            out = pl.store(x, [lane * (R // 2), 0], out)
    return out


@pl.jit
def outlined_tensor_shard(a: pl.Tensor[[R, C], pl.FP32],
                          out: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        h = pl.tile.aiv_shard(a, split=1)  # ERR:tileonly
        out = pl.store(h, [0, 0], out)
    return out


@pl.jit.incore
def shard_distributed(data: pld.DistributedTensor[[R, C], pl.FP32],
                      out: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
        h = pl.aiv_shard(data)  # ERR:dist
    return out


@pytest.mark.parametrize("kernel, exc, match, tag, token", [
    (shard_outside, PyptoSyntaxError, "must be used inside a `for aiv_id in pl.split_aiv",
     "outside", "pl.aiv_shard"),
    (reduce_split_axis, InvalidOperationError, "reduces along the split axis", "reduce",
     "pl.col_sum"),
    (element_of_half, InvalidOperationError, "addresses one element of a halved tile",
     "element", "pl.tile.read"),
    (ragged_window, InvalidOperationError, "a window with a valid_shape (a ragged split axis)",
     "ragged", "pl.load"),
    (nested_split, PyptoSyntaxError, "cannot be nested inside another pl.split_aiv region",
     "nested", "pl.split_aiv"),
    (carried_split, PyptoSyntaxError, "pl.split_aiv does not accept 'init_values='", "kwarg",
     "init_values"),
    (shard_with_mode, PyptoSyntaxError, "pl.aiv_shard does not take a mode", "mode",
     "pl.aiv_shard"),
    (outlined_tensor_shard, PyptoSyntaxError, "is the outlined form, which is tile-only",
     "tileonly", "pl.tile.aiv_shard"),
    (shard_distributed, PyptoSyntaxError, "does not take a distributed tensor", "dist",
     "pl.aiv_shard"),
])
def test_lane_misuse_is_located(kernel, exc, match, tag, token):
    with pytest.raises(exc) as info:
        kernel.compile()
    assert match in info.value.message, info.value.message
    assert_at(info.value, __file__, tag, token)
