"""Creation, views, padding, data movement and generators."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from pypto.ir.types import MemorySpace
from pypto.language.enums import AtomicType, PadValue
from pypto.ops.creation import philox4x32
from pypto.ops.numeric import valid_shape, with_valid
from pypto.ops.registry import OpError
from tests.ops.helpers import (
    BF16,
    FP32,
    INT8,
    INT32,
    UINT32,
    attr,
    impl,
    lit,
    lst,
    rule,
    tensor,
    tile,
)


@pytest.mark.parametrize("pad,dt,fill", [
    (PadValue.zero, np.float32, 0.0),
    (PadValue.min, np.float32, -np.inf),
    (PadValue.max, np.float32, np.inf),
    (PadValue.max, np.float16, np.inf),
    (PadValue.min, np.int8, -128),
    (PadValue.max, np.int32, 2**31 - 1),
    (PadValue.min, ml_dtypes.bfloat16, -np.inf),
    # fp8 e4m3fn has no infinities: its largest / smallest value
    (PadValue.max, ml_dtypes.float8_e4m3fn, 448.0),
    (PadValue.max, np.bool_, True),
])
def test_fillpad_fills_outside_valid_region(pad, dt, fill):
    x = with_valid(np.ones((3, 5), dtype=dt), (2, 3))
    got = impl("fillpad", x, pad)
    want = np.full((3, 5), fill, dtype=np.float64)
    want[:2, :3] = 1
    np.testing.assert_array_equal(np.asarray(got, np.float64), want)
    assert valid_shape(got) == (3, 5)


def test_fillpad_literal_sugar_and_null():
    assert rule("fillpad", tensor([4, 8]), lit(0)).shape == (4, 8)
    assert rule("fillpad", tensor([4, 8]), lit(-math.inf)).shape == (4, 8)
    with pytest.raises(OpError, match="null"):
        rule("fillpad", tensor([4, 8]), attr(PadValue.null))
    with pytest.raises(OpError, match="pad_value"):
        rule("fillpad", tensor([4, 8]), lit(1.0))
    x = with_valid(np.ones((2, 2), np.float32), (1, 1))
    np.testing.assert_array_equal(impl("fillpad", x, -math.inf),
                                  [[1, -np.inf], [-np.inf, -np.inf]])


def test_fillpad_expand_and_inplace():
    x = with_valid(np.arange(6, dtype=np.float32).reshape(2, 3), (2, 2))
    got = impl("fillpad_expand", x, [3, 4], PadValue.zero)
    want = np.zeros((3, 4), np.float32)
    want[:2, :2] = [[0, 1], [3, 4]]
    np.testing.assert_array_equal(got, want)
    buf = np.ones((2, 3), np.float32)
    t = with_valid(buf, (1, 3))
    impl("fillpad_inplace", t, PadValue.zero)
    np.testing.assert_array_equal(buf, [[1, 1, 1], [0, 0, 0]])
    with pytest.raises(OpError, match="shrink"):
        rule("fillpad_expand", tensor([4, 8]), lst(2, 8))


def test_set_validshape_and_slice_valid_regions():
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    v = impl("set_validshape", x, 3, 5)
    assert valid_shape(v) == (3, 5)
    np.testing.assert_array_equal(np.asarray(v), x)
    s = impl("slice", v, [2, 4], [2, 2])
    np.testing.assert_array_equal(s, x[2:4, 2:6])
    assert valid_shape(s) == (1, 3)  # source validity shifted and cut
    s2 = impl("slice", x, [4, 4], [2, 0], [2, 2], clamp=True)
    assert s2.shape == (4, 4) and valid_shape(s2) == (2, 2)
    np.testing.assert_array_equal(s2[:2], x[2:4, :4])
    assert not np.asarray(s2)[2:].any()  # overhang reads as zero


def test_assemble_writes_valid_region_and_atomic_add():
    target = np.zeros((4, 4), np.float32)
    src = with_valid(np.ones((2, 3), np.float32), (1, 2))
    impl("assemble", target, src, [1, 1])
    want = np.zeros((4, 4), np.float32)
    want[1, 1:3] = 1
    np.testing.assert_array_equal(target, want)
    impl("assemble", target, np.full((2, 2), 2.0, np.float32), [1, 1], atomic=AtomicType.Add)
    want[1:3, 1:3] += 2
    np.testing.assert_array_equal(target, want)
    bf = np.zeros((1, 2), ml_dtypes.bfloat16)
    impl("assemble", bf, np.array([[1.0, 256.0]], np.float32), [0, 0], atomic=AtomicType.Add)
    impl("assemble", bf, np.array([[2.0**-9, 1.0]], np.float32), [0, 0], atomic=AtomicType.Add)
    assert bf.dtype == ml_dtypes.bfloat16 and float(bf[0, 1]) == 256.0  # 257 rounds to even
    # a rank-3 source with a leading unit axis assembles into a rank-2 target
    t2 = np.zeros((2, 4), np.float32)
    impl("assemble", t2, np.ones((1, 2, 2), np.float32), [0, 2])
    np.testing.assert_array_equal(t2[:, 2:], 1)
    assert rule("assemble", tensor([2, 4]), tensor([1, 2, 2]), lst(0, 2)).shape == (2, 4)
    with pytest.raises(OpError, match="leading unit axes"):
        rule("assemble", tensor([2, 4]), tensor([2, 2, 2]), lst(0, 0))


def test_load_store_move_roundtrip():
    gm = np.arange(20, dtype=np.float32).reshape(4, 5)
    t = impl("load", gm, [1, 1], [2, 3], valid_shape=[2, 2])
    np.testing.assert_array_equal(t, gm[1:3, 1:4])
    assert valid_shape(t) == (2, 2)
    t[...] = -1
    assert gm[1, 1] == 6  # a load is a copy
    out = np.zeros((4, 5), np.float32)
    impl("store", t, [0, 0], out)
    np.testing.assert_array_equal(out[:2, :2], -1)
    assert not out[:, 2:].any()  # only the valid region is written
    m = impl("move", t, MemorySpace.Mat)
    assert m is not t and np.array_equal(m, t)
    with pytest.raises(OpError, match="Vec or Mat"):
        rule("load", tensor([4, 5]), lst(0, 0), lst(2, 2), target_memory=attr(MemorySpace.Left))


def test_creation_and_shape_ops():
    np.testing.assert_array_equal(impl("full", [2, 3], INT32, 7), np.full((2, 3), 7))
    np.testing.assert_array_equal(impl("tile.full", [1, 2], FP32, 1.5), [[1.5, 1.5]])
    assert impl("create_tensor", [2, 2], BF16).dtype == ml_dtypes.bfloat16
    assert impl("create_tile", [2, 2], INT8).dtype == np.int8
    assert impl("create_l1", [2, 4], BF16).shape == (2, 4)
    np.testing.assert_array_equal(impl("arange", 3, [1, 4], INT32), [[3, 4, 5, 6]])
    np.testing.assert_array_equal(impl("arange", 3, [1, 4], UINT32, True), [[3, 2, 1, 0]])
    np.testing.assert_array_equal(impl("tile.arange", 0, [1, 3], INT32), [[0, 1, 2]])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(impl("reshape", x, [3, 2]), x.reshape(3, 2))
    np.testing.assert_array_equal(impl("transpose", x, 0, 1), x.T)
    np.testing.assert_array_equal(impl("tile.transpose_view", x), x.T)
    np.testing.assert_array_equal(impl("concat", x, x), np.concatenate([x, x], -1))
    assert impl("tensor.dim", x, -1) == 3
    assert impl("read", x, [1, 2]) == 5.0 and impl("read", x, 4) == 4.0
    impl("write", x, [0, 1], 9.0)
    assert x[0, 1] == 9.0


def test_views():
    x = np.array([[1.0, -2.0]], np.float32)
    v = impl("reinterpret_view", x, INT32)
    np.testing.assert_array_equal(v, x.view(np.int32))
    assert rule("reinterpret_view", tensor([4, 8], FP32), attr(BF16)).shape == (4, 16)
    t = rule("reinterpret_view", tensor([4, 8], FP32), attr(INT8), shape=lst(32, 4))
    assert t.shape == (32, 4)
    with pytest.raises(OpError, match="byte size"):
        rule("reinterpret_view", tensor([4, 8], FP32), attr(INT8), shape=lst(4, 8))
    y = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_array_equal(impl("tensor.view", y, [4, 2]), y.reshape(4, 2))
    with pytest.raises(OpError, match="does not hold"):
        rule("tensor.view", tensor([2, 4]), lst(3, 3))
    np.testing.assert_array_equal(impl("tile.extract", y, 0, 1, [2, 2],
                                       target_memory=MemorySpace.Left),
                                  y[:, 1:3])
    ex = rule("tile.extract", tile([16, 16], memory=MemorySpace.Mat), lit(0), lit(0), lst(16, 8),
              target_memory=attr(MemorySpace.Left))
    assert ex.memory is MemorySpace.Left and ex.shape == (16, 8)
    with pytest.raises(OpError, match="lands in"):
        rule("tile.extract", tile([16, 16], memory=MemorySpace.Mat), lit(0), lit(0), lst(16, 8),
             target_memory=attr(MemorySpace.Vec))


def test_tri():
    i, j = np.mgrid[0:4, 0:5]
    np.testing.assert_array_equal(impl("tri", 0, [4, 5]), (j <= i).astype(np.int32))
    np.testing.assert_array_equal(impl("tri", 1, [4, 5], upper=True), (j >= i + 1).astype(np.int32))
    part = impl("tri", 0, [4, 5], [2, 3], FP32)
    want = np.zeros((4, 5), np.float32)
    want[:2, :3] = (j <= i)[:2, :3]
    np.testing.assert_array_equal(part, want)


def test_philox_known_answers():
    # Random123 known-answer vectors for philox4x32-10
    z = philox4x32(np.zeros((1, 4), np.uint32), (0, 0), 10)
    np.testing.assert_array_equal(z[0], [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8])
    f = philox4x32(np.full((1, 4), 0xFFFFFFFF, np.uint32), (0xFFFFFFFF, 0xFFFFFFFF), 10)
    np.testing.assert_array_equal(f[0], [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD])


def test_random_is_deterministic_and_counter_based():
    a = impl("random", 0x1234, 0x5678, 1, 2, 3, 4, [4, 8])
    b = impl("random", 0x1234, 0x5678, 1, 2, 3, 4, [4, 8])
    assert a.dtype == np.uint32 and np.array_equal(a, b)
    c = impl("random", 0x1234, 0x5678, 2, 2, 3, 4, [4, 8])
    # element p is word p % 4 of block p // 4: bumping the counter shifts by one block
    np.testing.assert_array_equal(a.reshape(-1)[4:], c.reshape(-1)[:-4])
    r7 = impl("random", 0x1234, 0x5678, 1, 2, 3, 4, [4, 8], INT32, 7)
    assert r7.dtype == np.int32 and not np.array_equal(r7.view(np.uint32), a)
    t = impl("tile.random", 1, 2, 3, 4, 5, 6, [4, 8], [2, 3])
    assert valid_shape(t) == (2, 3) and not np.asarray(t)[2:].any()
    with pytest.raises(OpError, match="rounds"):
        rule("random", lit(1), lit(2), lit(0), lit(0), lit(0), lit(0), lst(4, 8), rounds=lit(8))
    with pytest.raises(OpError, match="INT32 or UINT32"):
        rule("random", lit(1), lit(2), lit(0), lit(0), lit(0), lit(0), lst(4, 8), attr(FP32))


def test_slice_rules():
    t = rule("slice", tensor([8, 16]), lst(4, 4), lst(0, 12))
    assert t.shape == (4, 4)
    with pytest.raises(OpError, match="runs past"):
        rule("slice", tensor([8, 16]), lst(4, 8), lst(0, 12))
    assert rule("slice", tensor([8, 16]), lst(4, 8), lst(0, 12), clamp=lit(True)).shape == (4, 8)
