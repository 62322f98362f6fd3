"""Region analysis: unit classification, cross-core pipe, buffer estimates."""
from __future__ import annotations

import numpy as np

import pypto.language as pl
from pypto.passes.regions import RegionInfo

ROWS, COLS, RT = 512, 256, 64


@pl.jit
def softmax(x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    for r in pl.parallel(0, ROWS, RT):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="softmax_rows"):
            tile_x = x[r:r + RT, :]
            row_max = pl.row_max(tile_x)
            shifted = pl.row_expand_sub(tile_x, row_max)
            e = pl.exp(shifted)
            denom = pl.row_sum(e)
            y[r:r + RT, :] = pl.row_expand_div(e, denom)
    return y


M, N, K, T = 128, 128, 256, 64


@pl.jit
def gemm(a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
         c: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
    for mb in pl.parallel(0, M, T):
        for nb in pl.parallel(0, N, T):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="gemm_tile"):
                acc = pl.matmul(a[mb:mb + T, 0:T], b[0:T, nb:nb + T])
                for kb in pl.range(1, K // T):
                    k0 = kb * T
                    acc = pl.matmul_acc(acc, a[mb:mb + T, k0:k0 + T], b[k0:k0 + T, nb:nb + T])
                c[mb:mb + T, nb:nb + T] = acc
    return c


@pl.jit
def gemm_bias(a: pl.Tensor[[64, 128], pl.BF16], b: pl.Tensor[[128, 64], pl.BF16],
              bias: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm_add",
               optimizations=[pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=4)]):
        acc = pl.matmul(a, b, out_dtype=pl.FP32)
        c[0:64, 0:64] = pl.add(acc, bias[0:64, 0:64])
    return c


@pl.jit
def staged(x: pl.Tensor[[256, 128], pl.FP16], y: pl.Out[pl.Tensor[[256, 128], pl.FP16]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="staged"):
        for i in pl.pipeline(0, 256, 32, stage=2):
            t = x[i:i + 32, :]
            # (an int literal takes the tensor's dtype; a float one is FP32 and would
            # make the product an FP32 tensor, as the real parser types it)
            y[i:i + 32, :] = pl.mul(t, 2)
    return y


def _only(compiled) -> RegionInfo:
    regions = compiled.regions
    assert len(regions) == 1
    return regions[0]


def test_softmax_is_pure_vector_with_hand_computed_ub():
    r = _only(softmax.compile())
    assert r.classification == "vector"
    assert r.kind == "at" and r.name_hint == "softmax_rows" and r.parent == "softmax"
    assert r.pipe is None and r.split is None and r.slot_num == 2
    assert dict(r.ops_per_unit) == {"mte": 2, "vector": 5}
    # [64, 256] FP32 tiles are 65536 B, the [64, 1] row statistics 256 B.
    # Each vector op writes its result over the operand that dies there (tile_x ->
    # shifted -> e -> the row_expand_div result), so the peak is one big tile plus a
    # [64, 1] statistic: e and denom at the last line.
    assert r.ub_bytes == 65536 + 256 == 65792
    assert (r.l1_bytes, r.l0a_bytes, r.l0b_bytes, r.l0c_bytes) == (0, 0, 0, 0)
    assert dict(r.budget)["Vec"] == 188416 and r.over_budget == ()
    assert [(lp.kind, lp.var, lp.trip_count) for lp in r.loop_context] == [("parallel", "r", 8)]


def test_a5_budget():
    r = _only(softmax.compile(platform="a5sim"))
    assert dict(r.budget)["Vec"] == 240 * 1024 and dict(r.budget)["Acc"] == 256 * 1024


def test_gemm_is_pure_cube():
    r = _only(gemm.compile())
    assert r.classification == "cube"
    assert dict(r.side_counts) == {"cube": 7, "shared": 1}  # 4 loads, 2 matmuls, 1 store; k0
    assert r.pipe is None
    # one [64, 64] FP32 accumulator (carried through the K loop) in Acc; two operand
    # tiles in Mat; tensor-level operands are tiled to L0 by the compiler, so Left /
    # Right hold no declared tiles
    assert r.l0c_bytes == 16384 and r.l1_bytes == 2 * 16384
    assert r.l0a_bytes == 0 and r.l0b_bytes == 0 and r.ub_bytes == 0
    assert [(lp.kind, lp.trip_count) for lp in r.loop_context] == [("parallel", 2),
                                                                     ("parallel", 2)]


def test_gemm_with_vector_epilogue_is_mixed():
    compiled = gemm_bias.compile()
    r = _only(compiled)
    assert r.classification == "mixed"
    assert r.split == "UP_DOWN" and r.slot_num == 4
    assert r.pipe is not None and r.pipe.directions == ("C->V",)
    assert [(t.value, t.shape, t.nbytes) for t in r.pipe.tiles] == [("acc", (64, 64), 16384)]
    assert r.pipe.split == "UP_DOWN" and r.pipe.slot_bytes == 16384
    # vector side per AIV lane (split halves): bias tile and popped acc; the add result
    # reuses the dying acc buffer: 2 x 8192
    assert r.ub_bytes == 2 * 8192
    assert "pipe: C->V split=UP_DOWN slots=4" in str(r)


def test_mixed_ring_counts_on_a5():
    r = _only(gemm_bias.compile(platform="a5sim"))
    # + 4 slots of half an acc tile (8192 B) in the consumer's UB
    assert r.ub_bytes == 2 * 8192 + 4 * 8192


def test_pipeline_stage_multiplies_loop_buffers():
    r = _only(staged.compile())
    assert r.classification == "vector"
    # t ([32, 128] FP16 = 8192 B; the mul result reuses it), one copy per stage
    assert r.ub_bytes == 2 * 8192


def test_regioninfo_text_is_deterministic():
    a, b = str(_only(softmax.compile())), str(_only(softmax.compile()))
    assert a == b
    assert a.splitlines()[1] == "  class: vector; ops: mte=2, vector=5"
    assert repr(_only(gemm.compile())).startswith("RegionInfo('gemm_gemm_tile', kind='at', "
                                                  "class='cube', ub=0, l1=32768")


# --- buffer model details (tier-2 pypto-lib kernels the real compiler accepts) ---------


@pl.jit
def nested_chain(x: pl.Tensor[[64, 256], pl.FP32], y: pl.Out[pl.Tensor[[64, 256], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="chain"):
        g = x[0:64, :]
        y[0:64, :] = pl.recip(pl.add(pl.exp(pl.neg(g)), 1.0))
    return y


def test_nested_calls_are_a_chain_not_all_live_at_once():
    # Each nested op is its own statement after flattening: neg's result dies at exp,
    # which writes over it, and so on; one [64, 256] FP32 tile (65536 B) suffices.
    r = _only(nested_chain.compile())
    assert r.ub_bytes == 65536


@pl.jit
def acc_epilogue(a: pl.Tensor[[64, 128], pl.BF16], b: pl.Tensor[[128, 64], pl.BF16],
                 c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc_epi"):
        ta = pl.load(a, [0, 0], [64, 128], target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, [0, 0], [128, 64], target_memory=pl.MemorySpace.Mat)
        s = pl.matmul(ta, tb, out_dtype=pl.FP32)
        s = pl.mul(s, 0.5)
        tmp = pl.create_tile([64, 64], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        m = pl.row_max(s, tmp)
        pl.store(m[0:64, 0:1], [0, 0], c)
        pl.store(s[0:32, :], [32, 0], c)
    return c


def test_vector_results_of_acc_tiles_live_in_ub_and_tile_slices_are_views():
    compiled = acc_epilogue.compile()
    rep = compiled.analyses["buffers"]["acc_epilogue_acc_epi"]
    space = {b.name: b.space for b in rep.buffers}
    # the matmul result is Acc; pl.mul of it and row_max write UB (the compiler moves
    # the operand to Vec); slices of a tile share its buffer (PTO views)
    assert space["s"] == "Acc" and space["s__1"] == "Vec" and space["m"] == "Vec"
    assert rep.peak["Acc"] == 16384
    views = next(b for b in rep.buffers if b.name == "s__1").values
    assert len(views) == 2  # s__1 and its [0:32, :] window
    # peak at row_max: s__1 and the scratch tile (16384 B each); the windows add nothing
    assert rep.peak["Vec"] == 16384 + 16384


def test_live_buffers_at_the_peak_are_reported():
    rep = nested_chain.compile().analyses["buffers"]["nested_chain_chain"]
    assert sum(n for _, n in rep.at["Vec"]) == rep.peak["Vec"]


# --- in-place reuse of staged GM operands (issue 33, item 2) --------------------------


@pl.jit
def doubled_twice(x: pl.Tensor[[128, 128], pl.FP32],
                  scratch: pl.Out[pl.Tensor[[128, 128], pl.FP32]],
                  out: pl.Out[pl.Tensor[[128, 128], pl.FP32]]):
    """Real `examples/intermediate/07_task_graph.py`, in our words: tensor-level adds of a
    whole 64 KiB operand with itself."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stage1"):
        scratch[:] = pl.add(x, x)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stage2"):
        out[:] = pl.add(scratch, scratch)
    return scratch, out


@pl.jit
def add_then_square(a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32],
                    c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]):
    """Real `docs/en/user/02-quickstart.md` / `language/04-scopes.md` blocks, in our words:
    two staged operands, their sum, then its square."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="sq"):
        s = pl.add(a, b)
        c[:] = pl.mul(s, s)
    return c


def test_an_operand_used_twice_is_staged_once_and_the_result_takes_its_place():
    """The real ConvertTensorToTileOps loads each GM operand of a region once, and
    MemoryReuse lets a result share a buffer whose life ends at the op ("inputs are
    consumed before outputs are produced"): pl.add(x, x) over a 64 KiB tensor needs one
    64 KiB tile, not three (which passed the 184 KiB UB of a2a3 before)."""
    compiled = doubled_twice.compile()
    for region in ("doubled_twice_stage1", "doubled_twice_stage2"):
        rep = compiled.analyses["buffers"][region]
        assert rep.peak["Vec"] == 65536, (region, rep.at["Vec"])
        assert sum(n for _, n in rep.at["Vec"]) == rep.peak["Vec"]
    x = np.random.default_rng(1).standard_normal((128, 128)).astype(np.float32)
    scratch, out = np.zeros_like(x), np.zeros_like(x)
    doubled_twice(x, scratch, out)
    np.testing.assert_array_equal(out, (x + x) + (x + x))


def test_two_staged_operands_hold_their_sum():
    rep = add_then_square.compile().analyses["buffers"]["add_then_square_sq"]
    # a and b staged (64 KiB each); s takes a's place; s * s then takes s's
    assert rep.peak["Vec"] == 2 * 65536, rep.at["Vec"]
    a = np.full((128, 128), 2.0, np.float32)
    b = np.full((128, 128), 3.0, np.float32)
    c = np.zeros_like(a)
    add_then_square(a, b, c)
    np.testing.assert_array_equal(c, 25.0)
