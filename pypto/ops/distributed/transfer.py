"""One-sided transfers between ranks: a rank reads (`remote_load`, `get`) or writes
(`remote_store`, `put`) a box of a peer's window with no action by the peer. None of
them synchronises: pair them with `pld.system.notify` / `wait`.
"""
from __future__ import annotations

from typing import Any

from pypto.ir.distributed import DistributedTensorType
from pypto.ir.options import AtomicType
from pypto.ir.types import NONE, MemorySpace, TensorType, TileType
from pypto.ops.distributed.rules import (
    atomic_arg,
    box_fits,
    chunk_args,
    int_scalar_arg,
    offsets_arg,
    region_args,
    same_dtype,
    window_arg,
)
from pypto.ops.distributed.runtime import comm
from pypto.ops.facts import Role
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import _describe, dims_arg, py_value, shaped, tile, type_of


def _remote_load(target, peer, offsets, shape, valid_shape=None):
    """Copy the box `target[offsets : offsets + shape]` of rank `peer`'s window into a
    new local tile (`valid_shape` narrows what is read, as for `pl.load`)."""
    t = window_arg(target, "target")
    int_scalar_arg(peer, "peer")
    offs = offsets_arg(offsets, t, "offsets")
    dims = dims_arg(shape, "shape")
    if len(dims) != t.rank:
        raise OpError(f"'shape' needs one extent per axis of the rank-{t.rank} window, "
                      f"got {len(dims)}", arg="shape")
    valid = None
    if valid_shape is not None:
        valid = dims_arg(valid_shape, "valid_shape")
        if len(valid) != t.rank:
            raise OpError(f"'valid_shape' needs {t.rank} entries, got {len(valid)}",
                          arg="valid_shape")
    box_fits(valid if valid is not None else dims, offs, t, "offsets")
    return tile(dims, t.dtype, MemorySpace.Vec, valid)


defop("pld.tile.remote_load", unit=Unit.MTE, role=Role.COMM, wants_ctx=True,
      impl=lambda target, peer, offsets, shape, valid_shape=None, *, ctx:
      comm(ctx).remote_load(ctx, target, peer, offsets, shape, valid_shape),
      names=("pld.tile.remote_load", "pld.remote_load"))(_remote_load)


def _check_store(src, target, offsets, src_arg: str = "src") -> None:
    t = window_arg(target, "target")
    s = shaped(src, src_arg)
    same_dtype(s, t, src_arg)
    if t.rank < 2:
        raise OpError(f"the target window must have rank >= 2, got {t}", arg="target")
    offs = offsets_arg(offsets, t, "offsets")
    written = s.valid_shape if s.valid_shape is not None else s.shape
    if len(written) == t.rank:
        box_fits(tuple(written), offs, t, "offsets", "pushed box")


def _remote_store_impl(name: str):
    """The simulator's step of the remote_store spelled `name` (faults and the race
    report name the op the kernel wrote)."""
    def impl(src, target, peer, offsets, atomic, *, ctx):
        return comm(ctx).remote_store(ctx, src, target, peer, offsets, atomic, name)
    return impl


def _tile_remote_store(src_tile, target, peer, offsets, *, atomic=0):
    """Write a local tile (its valid region) into rank `peer`'s window at `offsets`;
    `atomic=pld.AtomicType.Add` adds into the peer's elements instead of overwriting."""
    if not isinstance(type_of(src_tile), TileType):
        raise OpError(f"pushes a tile, got {_describe(src_tile)}", arg="src_tile",
                      hint="in tensor-level code call pld.tensor.remote_store (or the "
                           "pld.remote_store short form)")
    int_scalar_arg(peer, "peer")
    _check_store(src_tile, target, offsets, "src_tile")
    atomic_arg(atomic)
    return NONE


defop("pld.tile.remote_store", unit=Unit.MTE, role=Role.COMM, wants_ctx=True,
      impl=_remote_store_impl("pld.tile.remote_store"),
      names=("pld.tile.remote_store",))(_tile_remote_store)


def _tensor_remote_store(src, target, peer, offsets, *, atomic=0):
    """Tensor-level twin of `pld.tile.remote_store`: push a computed tensor value into
    rank `peer`'s window at `offsets` (no global-memory round trip)."""
    s = type_of(src)
    if not isinstance(s, TensorType) or isinstance(s, DistributedTensorType):
        raise OpError(f"pushes a tensor-level value, got {_describe(src)}", arg="src",
                      hint="a tile goes through pld.tile.remote_store; a window-to-window "
                           "copy is pld.tensor.put's job")
    int_scalar_arg(peer, "peer")
    _check_store(src, target, offsets)
    atomic_arg(atomic)
    return NONE


defop("pld.tensor.remote_store", unit=Unit.MTE, role=Role.COMM, wants_ctx=True,
      impl=_remote_store_impl("pld.tensor.remote_store"),
      names=("pld.tensor.remote_store",))(_tensor_remote_store)


def _remote_store(src, target, peer, offsets, *, atomic=0):
    """`pld.remote_store`: the tile form for a tile `src`, the tensor form otherwise."""
    s = type_of(src)
    if isinstance(s, DistributedTensorType) or not isinstance(s, (TileType, TensorType)):
        raise OpError(f"pushes a tile or a tensor-level value, got {_describe(src)}",
                      arg="src", hint="a window-to-window copy is pld.tensor.put's job")
    int_scalar_arg(peer, "peer")
    _check_store(src, target, offsets)
    atomic_arg(atomic)
    return NONE


defop("pld.remote_store", unit=Unit.MTE, role=Role.COMM, wants_ctx=True,
      impl=_remote_store_impl("pld.remote_store"),
      names=("pld.remote_store",))(_remote_store)


def _put(dst, peer, src, dst_offsets=None, src_offsets=None, shape=None, *, atomic=0,
         chunk_rows=0, chunk_cols=0, pipeline=False):
    """Write local global memory `src` (a window or a plain tensor) into rank `peer`'s
    window `dst`: all of it, or the box `shape` from `src_offsets` to `dst_offsets`.
    The copy streams through a staging tile of `chunk_rows x chunk_cols` (0 = the whole
    extent); `pipeline=True` double-buffers it. `atomic=pld.AtomicType.Add` adds."""
    d = window_arg(dst, "dst")
    int_scalar_arg(peer, "peer")
    s = type_of(src)
    if not isinstance(s, TensorType):
        raise OpError(f"'src' must be a tensor in global memory (a window or a plain "
                      f"pl.Tensor), got {_describe(src)}", arg="src",
                      hint="push a tile with pld.tile.remote_store")
    same_dtype(s, d, "src")
    region_args(dst_offsets, src_offsets, shape, d, s)
    atomic_arg(atomic)
    chunk_args(chunk_rows, chunk_cols, pipeline)
    return NONE


defop("pld.tensor.put", unit=Unit.MTE, role=Role.COMM, wants_ctx=True,
      impl=lambda dst, peer, src, dst_offsets=None, src_offsets=None, shape=None, atomic=0,
      chunk_rows=0, chunk_cols=0, pipeline=False, *, ctx:
      comm(ctx).put(ctx, dst, peer, src, dst_offsets, src_offsets, shape, atomic, chunk_rows,
                    chunk_cols, pipeline),
      names=("pld.tensor.put",))(_put)


def _get(dst, peer, src, dst_offsets=None, src_offsets=None, shape=None, *, chunk_rows=0,
         chunk_cols=0, pipeline=False):
    """Read rank `peer`'s window `src` into local global memory `dst` (a window or a
    plain tensor): all of it, or the box `shape` from `src_offsets` to `dst_offsets`,
    streamed through a staging tile as for `pld.tensor.put`."""
    s = window_arg(src, "src")
    int_scalar_arg(peer, "peer")
    d = type_of(dst)
    if not isinstance(d, TensorType):
        raise OpError(f"'dst' must be a tensor in global memory (a window or a plain "
                      f"pl.Tensor), got {_describe(dst)}", arg="dst",
                      hint="read into a tile with pld.tile.remote_load")
    same_dtype(d, s, "dst")
    region_args(dst_offsets, src_offsets, shape, d, s)
    chunk_args(chunk_rows, chunk_cols, pipeline)
    return NONE


defop("pld.tensor.get", unit=Unit.MTE, role=Role.COMM, wants_ctx=True, writes="dst",
      impl=lambda dst, peer, src, dst_offsets=None, src_offsets=None, shape=None,
      chunk_rows=0, chunk_cols=0, pipeline=False, *, ctx:
      comm(ctx).get(ctx, dst, peer, src, dst_offsets, src_offsets, shape, chunk_rows, chunk_cols,
                    pipeline),
      names=("pld.tensor.get",))(_get)


# --- the tile-level forms: the transfer through explicit VEC staging tiles -------------


def _staging(stage, stage2, src_type, op: str) -> tuple[int, int]:
    """The chunk a staging tile gives a put / get: its [rows, cols] (a 1-D tile: one row).
    `stage2`, the ping-pong twin of the double-buffered lowering, must match it."""
    s = type_of(stage)
    if not isinstance(s, TileType):
        raise OpError(f"'stage' must be a staging tile (pl.tile.create in Vec), got "
                      f"{_describe(stage)}", arg="stage",
                      hint=f"{op} streams the transfer through it; without one, call "
                           f"{op.replace('pld.tile', 'pld.tensor')}")
    if s.memory not in (None, MemorySpace.Vec):
        raise OpError(f"'stage' must live in Vec (the unified buffer), got {s}", arg="stage")
    same_dtype(s, src_type, "stage")
    if s.rank not in (1, 2) or not all(isinstance(d, int) for d in s.shape):
        raise OpError(f"'stage' must be a 1-D or 2-D tile of static shape, got {s}",
                      arg="stage")
    if stage2 is not None:
        s2 = type_of(stage2)
        if not isinstance(s2, TileType) or tuple(s2.shape) != tuple(s.shape) or \
                s2.dtype != s.dtype:
            raise OpError(f"'stage2' (the second, ping-pong staging tile) must be a tile like "
                          f"'stage' ({s}), got {_describe(stage2)}", arg="stage2")
    rows, cols = (1, s.shape[0]) if s.rank == 1 else (s.shape[0], s.shape[1])
    return int(rows), int(cols)


def _region_in_stage2(stage2, dst_offsets, src_offsets, shape) -> tuple:
    """`pld.tile.put(dst, peer, src, stage, [offs], [offs], [shape])`: with one staging
    tile the three region lists come positionally after it, the first in stage2's slot
    (the real wrapper shifts them back the same way)."""
    if stage2 is not None and not isinstance(type_of(stage2), TileType) and \
            isinstance(py_value(stage2), (list, tuple)):
        return None, stage2, dst_offsets, src_offsets
    return stage2, dst_offsets, src_offsets, shape


def _tile_put(dst, peer, src, stage, stage2=None, dst_offsets=None, src_offsets=None,
              shape=None, *, atomic=AtomicType.None_):
    """Tile-level `pld.tensor.put`: write local global memory `src` into rank `peer`'s
    window `dst` through the VEC staging tile `stage` (its shape is the chunk; `stage2`
    double-buffers). The real compiler emits this form from `pld.tensor.put`."""
    stage2, dst_offsets, src_offsets, shape = _region_in_stage2(stage2, dst_offsets,
                                                                src_offsets, shape)
    d = window_arg(dst, "dst")
    int_scalar_arg(peer, "peer")
    s = type_of(src)
    if not isinstance(s, TensorType):
        raise OpError(f"'src' must be a tensor in global memory (a window or a plain "
                      f"pl.Tensor), got {_describe(src)}", arg="src",
                      hint="push a tile with pld.tile.remote_store")
    same_dtype(s, d, "src")
    _staging(stage, stage2, s, "pld.tile.put")
    region_args(dst_offsets, src_offsets, shape, d, s)
    atomic_arg(atomic)
    return NONE


def _tile_put_impl(dst, peer, src, stage, stage2=None, dst_offsets=None, src_offsets=None,
                   shape=None, atomic=0, *, ctx):
    stage2, dst_offsets, src_offsets, shape = _region_in_stage2(stage2, dst_offsets,
                                                                src_offsets, shape)
    rows, cols = _stage_chunk(stage)
    comm(ctx).put(ctx, dst, peer, src, dst_offsets, src_offsets, shape, atomic, rows, cols,
                  stage2 is not None, what="pld.tile.put")


def _stage_chunk(stage: Any) -> tuple[int, int]:
    shape: tuple = tuple(getattr(stage, "shape", (1,)))
    return (1, int(shape[0])) if len(shape) == 1 else (int(shape[-2]), int(shape[-1]))


defop("pld.tile.put", unit=Unit.MTE, role=Role.COMM, wants_ctx=True, impl=_tile_put_impl,
      names=("pld.tile.put",))(_tile_put)


def _tile_get(dst, peer, src, stage, stage2=None, dst_offsets=None, src_offsets=None,
              shape=None):
    """Tile-level `pld.tensor.get`: read rank `peer`'s window `src` into local global
    memory `dst` through the VEC staging tile `stage` (as `pld.tile.put`)."""
    stage2, dst_offsets, src_offsets, shape = _region_in_stage2(stage2, dst_offsets,
                                                                src_offsets, shape)
    s = window_arg(src, "src")
    int_scalar_arg(peer, "peer")
    d = type_of(dst)
    if not isinstance(d, TensorType):
        raise OpError(f"'dst' must be a tensor in global memory (a window or a plain "
                      f"pl.Tensor), got {_describe(dst)}", arg="dst",
                      hint="read into a tile with pld.tile.remote_load")
    same_dtype(d, s, "dst")
    _staging(stage, stage2, s, "pld.tile.get")
    region_args(dst_offsets, src_offsets, shape, d, s)
    return NONE


def _tile_get_impl(dst, peer, src, stage, stage2=None, dst_offsets=None, src_offsets=None,
                   shape=None, *, ctx):
    stage2, dst_offsets, src_offsets, shape = _region_in_stage2(stage2, dst_offsets,
                                                                src_offsets, shape)
    rows, cols = _stage_chunk(stage)
    comm(ctx).get(ctx, dst, peer, src, dst_offsets, src_offsets, shape, rows, cols,
                  stage2 is not None, what="pld.tile.get")


defop("pld.tile.get", unit=Unit.MTE, role=Role.COMM, wants_ctx=True, writes="dst",
      impl=_tile_get_impl, names=("pld.tile.get",))(_tile_get)
