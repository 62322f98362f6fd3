"""Creation: global tensors, on-chip tiles, constant and generated contents
(`full`, `arange`, `tri`, counter-based `random`), and L1 tensors."""
from __future__ import annotations

import numpy as np

from pypto.ir import dtypes
from pypto.ir.types import MemorySpace, ScalarType, TensorType
from pypto.ops.facts import Role
from pypto.ops.numeric import with_valid
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import (
    dims_arg,
    dtype_arg,
    int_arg,
    py_value,
    tile,
    type_of,
)

# --- creation -----------------------------------------------------------------------


def _create_tensor(shape, dtype, layout=None, manual_dep=False, init_value=None):
    """A new global tensor (control plane); inside a region, a new on-chip buffer."""
    return TensorType(dims_arg(shape, "shape"), dtype_arg(dtype, "dtype"))


defop("create_tensor", unit=Unit.ORCH, role=Role.ALLOC_TENSOR, shape_param="shape",
      impl=lambda shape, dtype, layout=None, manual_dep=False, init_value=None:
      np.zeros([int(d) for d in shape], dtype=dtype.np),
      names=("pl.create_tensor", "pl.tensor.create", "pl.tensor.create_tensor"))(_create_tensor)


def _create_tile(shape, dtype, target_memory=MemorySpace.Vec, transpose=None, flat_layout=None):
    """A new on-chip tile (contents undefined on hardware)."""
    mem = py_value(target_memory)
    if not isinstance(mem, MemorySpace):
        raise OpError("target_memory must be a pl.MemorySpace", arg="target_memory")
    return tile(dims_arg(shape, "shape"), dtype_arg(dtype, "dtype"), mem)


defop("create_tile", unit=Unit.META, role=Role.ALLOC_TILE, shape_param="shape",
      impl=lambda shape, dtype, target_memory=None, transpose=None, flat_layout=None:
      np.zeros([int(d) for d in shape], dtype=dtype.np),
      names=("pl.create_tile", "pl.tile.create", "pl.tile.create_tile"))(_create_tile)


def _full(shape, dtype, value):
    """A tensor of `shape` filled with `value`."""
    return TensorType(dims_arg(shape, "shape"), dtype_arg(dtype, "dtype"))


defop("full", unit=Unit.VECTOR, shape_param="shape",
      impl=lambda shape, dtype, value: np.full([int(d) for d in shape], value, dtype=dtype.np),
      names=("pl.full", "pl.tensor.full"))(_full)


def _tile_full(shape, dtype, value):
    """A Vec tile of `shape` filled with `value`."""
    return tile(dims_arg(shape, "shape"), dtype_arg(dtype, "dtype"))


defop("tile.full", unit=Unit.VECTOR, shape_param="shape",
      impl=lambda shape, dtype, value: np.full([int(d) for d in shape], value, dtype=dtype.np),
      names=("pl.tile.full",))(_tile_full)


def _arange(start, shape, dtype=dtypes.INT32, descending=False):
    """Integer sequence along the last axis of the first row: `dst[0, k] = start ± k`."""
    return TensorType(dims_arg(shape, "shape"), dtype_arg(dtype, "dtype"))


def _arange_impl(start, shape, dtype=dtypes.INT32, descending=False):
    dims = [int(d) for d in shape]
    out = np.zeros(dims, dtype=dtype.np)
    k = np.arange(dims[-1])
    row = start - k if descending else start + k
    out[(0,) * (len(dims) - 1)] = row.astype(dtype.np)
    return out


defop("arange", unit=Unit.VECTOR, impl=_arange_impl,
      names=("pl.arange", "pl.tensor.arange", "pl.tensor.ci"))(_arange)


def _tile_arange(start, shape, dtype=dtypes.INT32, descending=False):
    """Tile form of `pl.arange`."""
    return tile(dims_arg(shape, "shape"), dtype_arg(dtype, "dtype"))


defop("tile.arange", unit=Unit.VECTOR, impl=_arange_impl,
      names=("pl.tile.arange", "pl.tile.ci"))(_tile_arange)



def _create_l1(shape, dtype, transpose=False):
    """A tensor-typed on-chip L1 (Mat) buffer, the accumulator of `pl.gather_row`."""
    dims = dims_arg(shape, "shape")
    if not all(isinstance(d, int) for d in dims):
        raise OpError("create_l1 needs a static shape", arg="shape")
    return TensorType(dims, dtype_arg(dtype, "dtype"))


defop("create_l1", unit=Unit.META, affinity=Unit.CUBE,
      impl=lambda shape, dtype, transpose=False: np.zeros([int(d) for d in shape],
                                                          dtype=dtype.np),
      names=("pl.create_l1", "pl.tensor.create_l1"))(_create_l1)


# --- generated tiles ----------------------------------------------------------------


def _tri(diagonal, shape, valid_shape=None, dtype=dtypes.INT32, upper=False):
    """Triangular 0/1 tile: 1 where `j <= i + diagonal` (lower) or `j >= i + diagonal`
    (upper); only the valid region is written (the rest is 0)."""
    dims = dims_arg(shape, "shape")
    if len(dims) != 2:
        raise OpError("pl.tri makes a 2-D tile", arg="shape")
    dt = dtype_arg(dtype, "dtype")
    valid = dims_arg(valid_shape, "valid_shape") if valid_shape is not None and \
        py_value(valid_shape) is not None else None
    return tile(dims, dt, MemorySpace.Vec, valid)


def _tri_impl(diagonal, shape, valid_shape=None, dtype=dtypes.INT32, upper=False):
    r, c = (int(d) for d in shape)
    i = np.arange(r)[:, None]
    j = np.arange(c)[None, :]
    m = (j >= i + int(diagonal)) if upper else (j <= i + int(diagonal))
    out = np.zeros((r, c), dtype=dtype.np)
    vr, vc = (r, c) if valid_shape is None else (int(valid_shape[0]), int(valid_shape[1]))
    out[:vr, :vc] = m[:vr, :vc]
    return with_valid(out, None if valid_shape is None else (vr, vc))


defop("tri", unit=Unit.VECTOR, impl=_tri_impl, names=("pl.tri", "pl.tile.tri"))(_tri)


_PHILOX_M = (0xD2511F53, 0xCD9E8D57)
_PHILOX_W = (0x9E3779B9, 0xBB67AE85)
_M32 = np.uint64(0xFFFFFFFF)


def philox4x32(counter: np.ndarray, key: tuple[int, int], rounds: int = 10) -> np.ndarray:
    """Philox-4x32 over an array of 128-bit counters ([..., 4] uint32 words)."""
    c = [counter[..., k].astype(np.uint64) for k in range(4)]
    k0, k1 = np.uint64(key[0] & 0xFFFFFFFF), np.uint64(key[1] & 0xFFFFFFFF)
    for _ in range(int(rounds)):
        p0 = np.uint64(_PHILOX_M[0]) * c[0]
        p1 = np.uint64(_PHILOX_M[1]) * c[2]
        hi0, lo0 = p0 >> np.uint64(32), p0 & _M32
        hi1, lo1 = p1 >> np.uint64(32), p1 & _M32
        c = [(hi1 ^ c[1] ^ k0) & _M32, lo1, (hi0 ^ c[3] ^ k1) & _M32, lo0]
        k0 = (k0 + np.uint64(_PHILOX_W[0])) & _M32
        k1 = (k1 + np.uint64(_PHILOX_W[1])) & _M32
    return np.stack(c, axis=-1).astype(np.uint32)


def _random_rule(key0, key1, counter0, counter1, counter2, counter3, shape, dtype, rounds,
                 valid_shape=None, is_tile=False):
    for n, v in (("key0", key0), ("key1", key1), ("counter0", counter0),
                 ("counter1", counter1), ("counter2", counter2), ("counter3", counter3)):
        t = type_of(v)
        if t is None and not (isinstance(py_value(v), int) and not isinstance(py_value(v), bool)):
            raise OpError(f"'{n}' must be an integer", arg=n)
        if isinstance(t, ScalarType) and not t.dtype.is_int():
            raise OpError(f"'{n}' must be an integer scalar, got {t.dtype!r}", arg=n)
    dims = dims_arg(shape, "shape")
    if not all(isinstance(d, int) for d in dims):
        raise OpError("random needs a static shape", arg="shape")
    dt = dtype_arg(dtype, "dtype")
    if dt not in (dtypes.INT32, dtypes.UINT32):
        raise OpError(f"random produces INT32 or UINT32, not {dt!r}", arg="dtype")
    if int_arg(rounds, "rounds") not in (7, 10):
        raise OpError(f"rounds must be 7 or 10, got {py_value(rounds)}", arg="rounds")
    if is_tile:
        valid = dims_arg(valid_shape, "valid_shape") if valid_shape is not None and \
            py_value(valid_shape) is not None else None
        return tile(dims, dt, MemorySpace.Vec, valid)
    return TensorType(dims, dt)


def _random(key0, key1, counter0, counter1, counter2, counter3, shape, dtype=dtypes.UINT32,
            rounds=10):
    """Counter-based random bits (Philox-4x32, `rounds` 7 or 10): element `p` (row-major)
    is word `p % 4` of Philox(counter + p // 4, key); deterministic in key, counter and
    position. The exact device lane schedule is not modelled."""
    return _random_rule(key0, key1, counter0, counter1, counter2, counter3, shape, dtype,
                        rounds)


def _tile_random(key0, key1, counter0, counter1, counter2, counter3, shape, valid_shape=None,
                 dtype=dtypes.UINT32, rounds=10):
    """Tile form of `pl.random`; only the valid region is filled (the rest is 0)."""
    return _random_rule(key0, key1, counter0, counter1, counter2, counter3, shape, dtype,
                        rounds, valid_shape, True)


def random_bits(key0, key1, c0, c1, c2, c3, shape, dtype, rounds) -> np.ndarray:
    dims = [int(d) for d in shape]
    n = int(np.prod(dims))
    blocks = np.arange((n + 3) // 4, dtype=np.uint64)
    base = [int(c0) & 0xFFFFFFFF, int(c1) & 0xFFFFFFFF, int(c2) & 0xFFFFFFFF,
            int(c3) & 0xFFFFFFFF]
    words = np.zeros((blocks.size, 4), dtype=np.uint64)
    carry = blocks
    for k in range(4):
        total = carry + np.uint64(base[k])
        words[:, k] = total & _M32
        carry = total >> np.uint64(32)
    out = philox4x32(words, (int(key0), int(key1)), rounds).reshape(-1)[:n].reshape(dims)
    return out.view(np.int32) if dtype == dtypes.INT32 else out


def _tile_random_impl(key0, key1, counter0, counter1, counter2, counter3, shape,
                      valid_shape=None, dtype=dtypes.UINT32, rounds=10):
    out = random_bits(key0, key1, counter0, counter1, counter2, counter3, shape, dtype, rounds)
    if valid_shape is None:
        return out
    vr, vc = (int(d) for d in valid_shape)
    keep = np.zeros_like(out)
    keep[:vr, :vc] = out[:vr, :vc]
    return with_valid(keep, (vr, vc))


defop("random", unit=Unit.VECTOR, impl=random_bits,
      names=("pl.random", "pl.tensor.random"))(_random)
defop("tile.random", unit=Unit.VECTOR, impl=_tile_random_impl,
      names=("pl.tile.random",))(_tile_random)
