"""sort32 / mrgsort ordering and bit layout; gather and scatter in every form."""
from __future__ import annotations

import numpy as np
import pytest

from pypto.ir import dtypes
from pypto.ir.types import TupleType
from pypto.ops.registry import OpError
from tests.ops.helpers import (
    FP16,
    FP32,
    INT16,
    INT32,
    UINT32,
    attr,
    impl,
    lit,
    rule,
    scalar,
    tensor,
    tile,
)


def _ref_pairs(values, idx):
    """Stable descending order by value: (value, idx) pairs as raw uint32 words."""
    order = sorted(range(len(values)), key=lambda k: (-float(values[k]), k))
    words = []
    for k in order:
        words.append(np.float32(values[k]).view(np.uint32))
        words.append(np.uint32(idx[k]))
    return np.array(words, np.uint32)


def test_sort32_blocks_descending_with_index_bits():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 64)).astype(np.float32)
    idx = np.tile(np.arange(64, dtype=np.uint32), (3, 1)) + 1000
    out = impl("sort32", x, idx)
    assert out.dtype == np.float32 and out.shape == (3, 128)
    bits = out.view(np.uint32)
    for r in range(3):
        for b in range(2):
            seg = slice(32 * b, 32 * b + 32)
            want = _ref_pairs(x[r, seg], idx[r, seg])
            np.testing.assert_array_equal(bits[r, 64 * b:64 * b + 64], want)


def test_sort32_ties_are_stable():
    x = np.zeros((1, 32), np.float32)
    x[0, [3, 7, 20]] = 5.0
    idx = np.arange(32, dtype=np.uint32)[None]
    out = impl("sort32", x, idx)
    got_idx = out.view(np.uint32)[0, 1::2]
    assert list(got_idx[:3]) == [3, 7, 20]
    assert list(got_idx[3:]) == [k for k in range(32) if k not in (3, 7, 20)]


def test_sort32_nan_sorts_last():
    x = np.arange(32, dtype=np.float32)[None].copy()
    x[0, 5] = np.nan
    out = impl("sort32", x, np.arange(32, dtype=np.uint32)[None])
    assert np.isnan(out[0, -2]) and out.view(np.uint32)[0, -1] == 5


def test_sort32_then_mrgsort_format1_full_row():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 512)).astype(np.float32)
    x[0, 100] = x[0, 300]  # a tie across blocks keeps input order
    idx = np.arange(512, dtype=np.uint32)[None]
    s = impl("sort32", x, idx)
    s = impl("mrgsort", s, block_len=64)  # 4 runs of 64 lanes -> 256-lane runs
    first = _ref_pairs(x[0, :128], idx[0, :128])
    np.testing.assert_array_equal(s.view(np.uint32)[0, :256], first)
    s = impl("mrgsort", s, block_len=256)  # -> 1024 lanes: whole row
    np.testing.assert_array_equal(s.view(np.uint32)[0], _ref_pairs(x[0], idx[0]))
    # topk idiom: gather odd lanes as INT32
    top = s[:, :32]
    vals = impl("gather", top, mask_pattern=1)
    ids = impl("gather", top, mask_pattern=2, output_dtype=INT32)
    order = np.argsort(-x[0], kind="stable")[:16]
    np.testing.assert_array_equal(vals[0], x[0, order])
    assert ids.dtype == np.int32
    np.testing.assert_array_equal(ids[0], order)


def test_mrgsort_format1_partial_group():
    # 8 runs of 64 lanes -> two 4-way groups; 6 runs -> a 4-group and a 2-group
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 192)).astype(np.float32)
    idx = np.arange(192, dtype=np.uint32)[None]
    s = impl("mrgsort", impl("sort32", x, idx), block_len=64)
    np.testing.assert_array_equal(s.view(np.uint32)[0, :256], _ref_pairs(x[0, :128], idx[0, :128]))
    np.testing.assert_array_equal(s.view(np.uint32)[0, 256:], _ref_pairs(x[0, 128:], idx[0, 128:]))


def test_mrgsort_format2_two_and_four_lists():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 128)).astype(np.float32)
    x[0, 40] = x[0, 5]  # tie between list 0 and list 1: list 0 first
    idx = np.arange(128, dtype=np.uint32)[None]
    runs = [impl("sort32", x[:, 32 * k:32 * k + 32], idx[:, 32 * k:32 * k + 32]) for k in range(4)]
    two = impl("mrgsort", runs[0], runs[1])
    np.testing.assert_array_equal(two.view(np.uint32)[0], _ref_pairs(x[0, :64], idx[0, :64]))
    tmp = np.zeros((1, 256), np.float32)
    four = impl("mrgsort", runs[0], runs[1], runs[2], runs[3], tmp)
    np.testing.assert_array_equal(four.view(np.uint32)[0], _ref_pairs(x[0], idx[0]))


def test_mrgsort_exhausted_stops_at_first_empty_list():
    a = impl("sort32", np.arange(32, dtype=np.float32)[None] + 100,
             np.arange(32, dtype=np.uint32)[None])
    b = impl("sort32", np.arange(32, dtype=np.float32)[None],
             np.arange(32, 64, dtype=np.uint32)[None])
    out = impl("mrgsort", a, b, exhausted=True)
    # every element of a is larger: a runs out after 32 pairs, nothing more is emitted
    np.testing.assert_array_equal(out[0, :64], a[0])
    assert not out[0, 64:].any()


def test_sort_rules():
    t = rule("sort32", tensor([1, 64]), tensor([1, 64], UINT32))
    assert t.shape == (1, 128) and t.dtype == FP32
    k = rule("sort32", tile([2, 32], FP16), tile([2, 32], UINT32))
    assert k.shape == (2, 64) and k.dtype == FP16
    with pytest.raises(OpError, match="FP16 or FP32"):
        rule("sort32", tensor([1, 32], INT32), tensor([1, 32], UINT32))
    with pytest.raises(OpError, match="multiple of 32"):
        rule("sort32", tensor([1, 40]), tensor([1, 40], UINT32))
    with pytest.raises(OpError, match="UINT32") as e:
        rule("sort32", tensor([1, 32]), tensor([1, 32], FP32))
    assert e.value.arg == "idx"
    assert rule("mrgsort", tensor([1, 256]), block_len=lit(64)).shape == (1, 256)
    assert rule("mrgsort", tensor([1, 256]), block_len=scalar(dtypes.INDEX)).shape == (1, 256)
    with pytest.raises(OpError, match="multiple of 64"):
        rule("mrgsort", tensor([1, 256]), block_len=lit(32))
    assert rule("mrgsort", tensor([1, 256]), tensor([1, 128])).shape == (1, 384)
    with pytest.raises(OpError, match="needs a scratch tile 'tmp'"):
        rule("mrgsort", tile([1, 256]), tile([1, 256]))
    assert rule("mrgsort", tile([1, 64]), tile([1, 64]), tmp=tile([1, 128])).shape == (1, 128)
    with pytest.raises(OpError, match="takes no 'tmp'"):
        rule("mrgsort", tensor([1, 64]), tensor([1, 64]), tmp=tile([1, 128]))
    with pytest.raises(OpError, match="mutually exclusive"):
        rule("mrgsort", tensor([1, 64]), tensor([1, 64]), block_len=lit(64))
    with pytest.raises(OpError, match="one dtype"):
        rule("mrgsort", tensor([1, 64]), tensor([1, 64], FP16))


# --- gather ------------------------------------------------------------------------------------


def test_gather_index_form_per_row():
    x = np.arange(24, dtype=np.float32).reshape(3, 8)
    idx = np.array([[7, 0], [1, 1], [3, 6]], np.int32)
    got = impl("gather", x, -1, idx)
    np.testing.assert_array_equal(got, [[x[0, 7], x[0, 0]], [x[1, 1], x[1, 1]], [x[2, 3], x[2, 6]]])
    # fewer index rows than input rows gathers from the leading rows
    np.testing.assert_array_equal(impl("gather", x, -1, idx[:1]), [[7.0, 0.0]])
    with pytest.raises(IndexError):
        impl("gather", x, -1, np.array([[8]], np.int32))


def test_gather_index_form_along_any_axis_is_torch_gather():
    x = np.arange(2 * 8 * 8, dtype=np.float32).reshape(2, 8, 8)
    rng = np.random.default_rng(1)
    idx = rng.integers(0, 8, (2, 3, 8)).astype(np.int32)
    np.testing.assert_array_equal(impl("gather", x, 1, idx), np.take_along_axis(x, idx, 1))
    y = x.reshape(8, 2, 8)
    idx0 = rng.integers(0, 8, (3, 2, 8)).astype(np.int32)
    np.testing.assert_array_equal(impl("gather", y, -3, idx0), np.take_along_axis(y, idx0, 0))


def test_gather_mask_patterns_and_reinterpret():
    x = np.arange(16, dtype=np.float32).reshape(2, 8)
    expect = {1: x[:, 0::2], 2: x[:, 1::2], 3: x[:, 0::4], 4: x[:, 1::4], 5: x[:, 2::4],
              6: x[:, 3::4], 7: x}
    for p, want in expect.items():
        np.testing.assert_array_equal(impl("gather", x, mask_pattern=p), want)
        np.testing.assert_array_equal(impl("tile.gather_mask", x, p), want)
    bits = impl("gather", x, mask_pattern=2, output_dtype=dtypes.UINT32)
    assert bits.dtype == np.uint32
    np.testing.assert_array_equal(bits, x[:, 1::2].view(np.uint32))


def test_gather_compare_form():
    x = np.array([[1, 5, 3, 7], [9, 0, 9, 2]], np.float32)
    dst, cdst = impl("gather", x, kvalue=3.0, cmp_mode="ge", out_cols=3, offset=10)
    np.testing.assert_array_equal(dst, [[11, 12, 13], [10, 12, 0]])
    np.testing.assert_array_equal(cdst, [[3, 2]])
    assert dst.dtype == np.int32 and cdst.dtype == np.int32
    d2, c2 = impl("tile.gather_compare", x, 9.0, None, cmp_mode=0, out_cols=2,
                  count_dtype=dtypes.UINT32)
    np.testing.assert_array_equal(d2, [[0, 0], [0, 2]])
    assert c2.dtype == np.uint32


def test_tile_gather_is_flat():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([[11, 0], [4, 5]], np.int32)
    np.testing.assert_array_equal(impl("tile.gather", x, idx, None), x.reshape(-1)[idx])


def test_gather_bf16_rejected_int16_index_for_fp16():
    t = rule("gather", tensor([4, 8], FP16), dim=lit(-1), index=tensor([4, 2], INT16))
    assert t.shape == (4, 2) and t.dtype == FP16
    with pytest.raises(OpError, match="INT32"):
        rule("gather", tensor([4, 8], FP32), dim=lit(-1), index=tensor([4, 2], INT16))
    with pytest.raises(OpError, match="FP16, FP32, INT16 and INT32"):
        rule("gather", tensor([4, 8], dtypes.BF16), dim=lit(-1), index=tensor([4, 2], INT32))


def test_gather_rules():
    t = rule("gather", tensor([1, 64]), mask_pattern=attr(2), output_dtype=attr(INT32))
    assert t.shape == (1, 32) and t.dtype == INT32
    with pytest.raises(OpError, match=r"same width|width"):
        rule("gather", tensor([1, 64]), mask_pattern=attr(2), output_dtype=attr(INT16))
    with pytest.raises(OpError, match="divisible by 4"):
        rule("gather", tensor([1, 6]), mask_pattern=attr(3))
    with pytest.raises(OpError, match="exactly one form"):
        rule("gather", tensor([1, 8]), dim=lit(-1), index=tensor([1, 8], INT32),
             mask_pattern=attr(1))
    # any axis, as torch.gather (the real toolchain's rank-3 dim=1 / dim=-3 tests)
    assert rule("gather", tensor([2, 8, 8]), dim=lit(1), index=tensor([2, 3, 8], INT32)
                ).shape == (2, 3, 8)
    with pytest.raises(OpError, match="out of range"):
        rule("gather", tensor([4, 8]), dim=lit(2), index=tensor([4, 8], INT32))
    with pytest.raises(OpError, match="exceeds"):
        rule("gather", tensor([4, 8]), dim=lit(0), index=tensor([4, 9], INT32))
    with pytest.raises(OpError, match="exceeds"):
        rule("gather", tensor([4, 8]), dim=lit(-1), index=tensor([5, 8], INT32))
    r = rule("gather", tensor([4, 8]), kvalue=lit(1.0), cmp_mode=attr("gt"), out_cols=lit(4))
    assert isinstance(r, TupleType) and r.items[0].shape == (4, 4) and r.items[1].shape == (1, 4)
    with pytest.raises(OpError, match="kind"):
        rule("gather", tensor([4, 8]), kvalue=lit(1), cmp_mode=attr("gt"), out_cols=lit(4))


# --- scatter -----------------------------------------------------------------------------------


def test_scatter_index_and_mask_forms():
    base = np.zeros((2, 6), np.float32)
    src = np.array([[1, 2], [3, 4]], np.float32)
    idx = np.array([[5, 0], [2, 2]], np.int32)
    out = impl("scatter", base, -1, idx, src)
    want = base.copy()
    want[0, 5], want[0, 0], want[1, 2] = 1, 2, 4
    np.testing.assert_array_equal(out, want)
    assert not base.any()  # functional
    even = np.array([[1, 2, 3]], np.float32)
    dst = np.full((1, 6), -1, np.float32)
    got = impl("scatter", even, mask_pattern=1, dst=dst)
    np.testing.assert_array_equal(got, [[1, -1, 2, -1, 3, -1]])
    got = impl("scatter", even, mask_pattern=2, dst=got)
    np.testing.assert_array_equal(got, [[1, 1, 2, 2, 3, 3]])


def test_scatter_rules():
    t = rule("scatter", tensor([2, 8]), mask_pattern=attr(1), dst=tensor([2, 16]))
    assert t.shape == (2, 16)
    with pytest.raises(OpError, match=r"dst.cols"):
        rule("scatter", tensor([2, 8]), mask_pattern=attr(1), dst=tensor([2, 8]))
    with pytest.raises(OpError, match=r"must be pl.INT16"):
        rule("scatter", tensor([2, 8], FP16), lit(-1), tensor([2, 2], INT32), tensor([2, 2], FP16))


def test_tile_scatter_mscatter_scatter_update_in_place():
    dst = np.zeros((2, 3), np.float32)
    out = impl("tile.scatter", dst, np.array([[7, 8]], np.float32), np.array([[5, 0]], np.int32))
    assert out is dst and dst[1, 2] == 7 and dst[0, 0] == 8
    gm = np.zeros(10, np.int32)
    impl("mscatter", np.array([[1, 2]], np.int32), np.array([[9, 3]], np.int32), gm)
    assert gm[9] == 1 and gm[3] == 2
    table = np.zeros((5, 2), np.float32)
    impl("scatter_update", table, -2, np.array([[4, 1]], np.int32),
         np.array([[1, 1], [2, 2]], np.float32))
    np.testing.assert_array_equal(table[[4, 1]], [[1, 1], [2, 2]])
    m = np.zeros((1, 4), np.float32)
    impl("tile.scatter_mask", m, np.array([[5, 6]], np.float32), 2)
    np.testing.assert_array_equal(m, [[0, 5, 0, 6]])


def test_gatherb_mgather_gather_row_paged_gather():
    src = np.arange(32, dtype=np.float32).reshape(4, 8)  # 32-byte rows
    offs = np.array([[64], [0], [32], [96], [0], [0], [0], [0]], np.uint32)
    out = impl("gatherb", src, offs)
    np.testing.assert_array_equal(out[:4], src[[2, 0, 1, 3]])
    mem = np.arange(20, dtype=np.float32).reshape(5, 4)
    np.testing.assert_array_equal(impl("mgather", mem, np.array([[4], [0]], np.int32)),
                                  mem[[4, 0]])
    np.testing.assert_array_equal(
        impl("mgather", mem, np.array([[19, 25]], np.int32), "elem", gather_oob="zero"),
        [[19, 0]])
    np.testing.assert_array_equal(
        impl("mgather", mem, np.array([[-1]], np.int32), gather_oob="wrap"), mem[[4]])
    l1 = np.zeros((4, 4), np.float32)
    impl("gather_row", l1, mem, [1, 0], [3, 1], [1, 3])
    np.testing.assert_array_equal(l1[1], [13, 14, 15, 0])
    impl("gather_row", l1, mem, [0, 3], [0, 0], [1, 4], True)
    np.testing.assert_array_equal(l1[:, 3], mem[0])
    pool = np.arange(32, dtype=np.float32).reshape(8, 4)  # 4 blocks of 2 rows
    table = np.array([3, 0, 2, 1], np.int32)
    got = impl("paged_gather", pool, np.array([0, 3, 5], np.int32), table, 2, 2, 4, col_off=1)
    phys = [3 * 2 + 0, 0 * 2 + 1, 2 * 2 + 1]
    np.testing.assert_array_equal(got[:3], pool[phys, 1:3])
    assert not got[3].any()
