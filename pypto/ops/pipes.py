"""Cross-core pipes between the cube (AIC) and vector (AIV) members of a core group
(`pl.FunctionType.Group`): buffer reservation, pipe set-up, push / pop / free.

    # AIV side (consumer of C2V)              # AIC side (producer)
    buf = pl.reserve_buffer(name="ring", size=4 * SLOT)
    pl.aiv_initialize_pipe(dir_mask=1,        peer = pl.import_peer_buffer(name="ring",
        slot_size=SLOT, c2v_consumer_buf=buf)     peer_func="vector_side")
                                              pl.aic_initialize_pipe(dir_mask=1,
                                                  slot_size=SLOT, c2v_consumer_buf=peer)
    t = pl.tpop_from_aic(shape=[...], dtype=...)  pl.tpush_to_aiv(tile, split=0)
    ...use t...
    pl.tfree_to_aic(t)

`dir_mask` 1 opens the C2V direction (`tpush_to_aiv` -> `tpop_from_aic` ->
`tfree_to_aic`), 2 the V2C one (`tpush_to_aic` -> `tpop_from_aiv` -> `tfree_to_aiv`),
3 both. `id` tells pipes of one direction apart (default 0); `split` (0 none,
1 rows, 2 columns) says how the two AIV lanes divide each tile. The depth is `slot_num`
(default 8, or 4 per direction when both are open). What the simulator does - the
ordering, the slot depth, waits and the deadlock of a pop that no push will answer -
is in `pypto.sim.machine.group`; ops outside a core group fault.

A popped tile's shape and dtype come from `shape=` / `dtype=`, or from the annotation
of the assignment (`t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv()`),
which the parser turns into them.
"""
from __future__ import annotations

from typing import Any

from pypto.ir import dtypes
from pypto.ir.types import NONE, MemorySpace, ScalarType, TileType
from pypto.ops.facts import Role
from pypto.ops.numeric import plain, with_valid
from pypto.ops.numeric import valid_shape as valid_shape_of
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import dims_arg, dtype_arg, py_value, shaped, type_of

_I32 = ScalarType(dtypes.INT32)
AUTO = -1


def _int(x: Any, arg: str, *, low: int = 0, optional: bool = False) -> int | None:
    v = py_value(x)
    if v is None and optional:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise OpError(f"'{arg}' must be an integer >= {low}, got {v!r}", arg=arg)
    return v


def _split(x: Any) -> int:
    v = py_value(x)
    if isinstance(v, bool) or v not in (0, 1, 2):
        raise OpError(f"split must be 0 (none), 1 (UP_DOWN: rows) or 2 (LEFT_RIGHT: "
                      f"columns), got {v!r}", arg="split")
    return v


def _group(ctx: Any, op: str) -> Any:
    g = ctx.group
    if g is None:
        raise ctx.fault(f"{op} talks to the other side of a core group, but this kernel does "
                        "not run in one", ctx.span,
                        hint="call the AIC and AIV functions from a "
                             "@pl.function(type=pl.FunctionType.Group) function")
    return g


# --- buffers ------------------------------------------------------------------------


def _reserve_buffer(*, name, size, base=AUTO):
    """Reserve `size` bytes of this core's local memory under `name` for a pipe's ring;
    returns its base address (`base=pl.AUTO`: the compiler picks it)."""
    if not isinstance(py_value(name), str) or not py_value(name):
        raise OpError(f"name must be a non-empty string, got {py_value(name)!r}", arg="name")
    _int(size, "size", low=1)
    _int(base, "base", low=AUTO)
    return _I32


def _import_peer_buffer(*, name, peer_func):
    """The base address of the buffer `name` that `peer_func` (the other member of this
    core group) reserved."""
    for v, arg in ((name, "name"), (peer_func, "peer_func")):
        if not isinstance(py_value(v), str) or not py_value(v):
            raise OpError(f"{arg} must be a non-empty string, got {py_value(v)!r}", arg=arg)
    return _I32


defop("system.reserve_buffer", unit=Unit.SCALAR, wants_ctx=True, incore_only=True,
      role=Role.RESERVE_BUFFER,
      impl=lambda name, size, base=AUTO, *, ctx:
      _group(ctx, "pl.reserve_buffer").reserve(name, int(base)),
      names=("pl.reserve_buffer", "pl.system.reserve_buffer"))(_reserve_buffer)
defop("system.import_peer_buffer", unit=Unit.SCALAR, wants_ctx=True, incore_only=True,
      impl=lambda name, peer_func, *, ctx:
      _group(ctx, "pl.import_peer_buffer").import_peer(name, peer_func, ctx),
      names=("pl.import_peer_buffer", "pl.system.import_peer_buffer"))(_import_peer_buffer)


def _init_rule(c2v_consumer_buf, v2c_consumer_buf, dir_mask, slot_size, slot_num,
               local_slot_num, id):
    for b, arg in ((c2v_consumer_buf, "c2v_consumer_buf"), (v2c_consumer_buf,
                                                            "v2c_consumer_buf")):
        t = type_of(b)
        if t is not None and not (isinstance(t, ScalarType) and t.dtype.is_int()):
            raise OpError(f"'{arg}' is a buffer base address (an integer), got {t}", arg=arg)
    m = _int(dir_mask, "dir_mask", low=1)
    if m not in (1, 2, 3):
        raise OpError(f"dir_mask must be 1 (C2V), 2 (V2C) or 3 (both), got {m}", arg="dir_mask")
    _int(slot_size, "slot_size", low=1)
    n = _int(slot_num, "slot_num", low=1, optional=True)
    local = _int(local_slot_num, "local_slot_num", low=1, optional=True)
    if n is not None and local is not None and local > n:
        raise OpError(f"local_slot_num ({local}) must not exceed slot_num ({n})",
                      arg="local_slot_num")
    _int(id, "id", optional=True)
    return NONE


def _aic_initialize_pipe(c2v_consumer_buf=0, v2c_consumer_buf=0, *, dir_mask, slot_size,
                         slot_num=None, local_slot_num=None, id=None):
    """Open the AIC end of the pipes `dir_mask` selects (see the module docstring)."""
    return _init_rule(c2v_consumer_buf, v2c_consumer_buf, dir_mask, slot_size, slot_num,
                      local_slot_num, id)


def _aiv_initialize_pipe(c2v_consumer_buf=0, v2c_consumer_buf=0, *, dir_mask, slot_size,
                         slot_num=None, local_slot_num=None, id=None):
    """Open the AIV end of the pipes `dir_mask` selects (see the module docstring)."""
    return _init_rule(c2v_consumer_buf, v2c_consumer_buf, dir_mask, slot_size, slot_num,
                      local_slot_num, id)


def _init_impl(side: str):
    def init(c2v_consumer_buf=0, v2c_consumer_buf=0, dir_mask=1, slot_size=0, slot_num=None,
             local_slot_num=None, id=None, *, ctx):
        _group(ctx, f"pl.{side}_initialize_pipe").initialize(
            side, (int(c2v_consumer_buf), int(v2c_consumer_buf)), int(dir_mask),
            int(slot_size), slot_num, local_slot_num, int(id or 0), ctx)
    return init


defop("system.aic_initialize_pipe", unit=Unit.SCALAR, wants_ctx=True, incore_only=True,
      impl=_init_impl("aic"),
      names=("pl.aic_initialize_pipe", "pl.system.aic_initialize_pipe"))(_aic_initialize_pipe)
defop("system.aiv_initialize_pipe", unit=Unit.SCALAR, wants_ctx=True, incore_only=True,
      impl=_init_impl("aiv"),
      names=("pl.aiv_initialize_pipe", "pl.system.aiv_initialize_pipe"))(_aiv_initialize_pipe)


# --- push, pop, free ------------------------------------------------------------------


def _push_rule(tile, split, id, op: str):
    t = shaped(tile, "tile")
    if not isinstance(t, TileType):
        raise OpError(f"{op} sends an on-chip tile, got {t}", arg="tile",
                      hint="pl.load it into a tile first")
    s = _split(split)
    if s and t.rank != 2:
        raise OpError(f"{op} with split={s} divides a 2-D tile between the AIV lanes, got {t}",
                      arg="tile")
    _int(id, "id", optional=True)
    return NONE


def _tpush_to_aiv(tile, *, split, lane_stride=None, id=None):
    """Send `tile` from the cube to the vector side (C2V pipe `id`)."""
    _int(lane_stride, "lane_stride", low=1, optional=True)
    return _push_rule(tile, split, id, "pl.tpush_to_aiv")


def _tpush_to_aic(tile, *, split, id=None):
    """Send `tile` from the vector side to the cube (V2C pipe `id`)."""
    return _push_rule(tile, split, id, "pl.tpush_to_aic")


defop("tpush_to_aiv", unit=Unit.MTE, wants_ctx=True, incore_only=True,
      impl=lambda tile, split, lane_stride=None, id=None, *, ctx:
      _group(ctx, "pl.tpush_to_aiv").push("C2V", int(id or 0), tile, int(split),
                                          "pl.tpush_to_aiv", ctx),
      names=("pl.tpush_to_aiv", "pl.tile.tpush_to_aiv",
             "pl.system.tpush_to_aiv"))(_tpush_to_aiv)
defop("tpush_to_aic", unit=Unit.MTE, wants_ctx=True, incore_only=True,
      impl=lambda tile, split, id=None, *, ctx:
      _group(ctx, "pl.tpush_to_aic").push("V2C", int(id or 0), tile, int(split),
                                          "pl.tpush_to_aic", ctx),
      names=("pl.tpush_to_aic", "pl.tile.tpush_to_aic",
             "pl.system.tpush_to_aic"))(_tpush_to_aic)


def _pop_rule(shape, dtype, valid_shape, split, id, memory: MemorySpace, op: str):
    if shape is None or dtype is None:
        raise OpError(f"{op} needs the shape and dtype of the tile it receives", arg="shape",
                      hint="pass shape=[...], dtype=... or annotate the assignment "
                           "(t: pl.Tile[[rows, cols], dtype] = ...)")
    _split(split)
    _int(id, "id", optional=True)
    dims = dims_arg(shape, "shape")
    valid = dims_arg(valid_shape, "valid_shape") if valid_shape is not None else None
    if valid is not None and len(valid) != len(dims):
        raise OpError(f"valid_shape {list(valid)} does not match the rank of shape {list(dims)}",
                      arg="valid_shape")
    return TileType(dims, dtype_arg(dtype, "dtype"), valid, memory)


def _tpop_from_aic(*, shape=None, dtype=None, valid_shape=None, split=0, lane_stride=None,
                   id=None):
    """Receive the next tile of C2V pipe `id` on the vector side (into Vec); with split=1/2
    and two AIV lanes each lane receives its half. `valid_shape` (from the annotation's
    pl.TileView) narrows the part of it the vector side uses."""
    _int(lane_stride, "lane_stride", low=1, optional=True)
    return _pop_rule(shape, dtype, valid_shape, split, id, MemorySpace.Vec, "pl.tpop_from_aic")


def _tpop_from_aiv(*, shape=None, dtype=None, valid_shape=None, split=0, id=None):
    """Receive the next tile of V2C pipe `id` on the cube side (into Mat)."""
    return _pop_rule(shape, dtype, valid_shape, split, id, MemorySpace.Mat, "pl.tpop_from_aiv")


def _popped(data: Any, valid_shape: Any) -> Any:
    """The popped tile, narrowed to the declared valid shape (never past what arrived)."""
    if valid_shape is None:
        return data
    arrived = valid_shape_of(data)
    return with_valid(plain(data), tuple(min(int(v), a) for v, a in zip(valid_shape, arrived)))


defop("tpop_from_aic", unit=Unit.MTE, wants_ctx=True, incore_only=True, affinity=Unit.VECTOR,
      impl=lambda shape=None, dtype=None, valid_shape=None, split=0, lane_stride=None, id=None,
      *, ctx: _popped(_group(ctx, "pl.tpop_from_aic").pop(
          "C2V", int(id or 0), int(split), tuple(int(d) for d in shape), "pl.tpop_from_aic",
          ctx), valid_shape),
      names=("pl.tpop_from_aic", "pl.tile.tpop_from_aic", "pl.system.tpop_from_aic"),
      shape_from_annotation=True)(_tpop_from_aic)
defop("tpop_from_aiv", unit=Unit.MTE, wants_ctx=True, incore_only=True, affinity=Unit.CUBE,
      impl=lambda shape=None, dtype=None, valid_shape=None, split=0, id=None, *, ctx:
      _popped(_group(ctx, "pl.tpop_from_aiv").pop(
          "V2C", int(id or 0), int(split), tuple(int(d) for d in shape), "pl.tpop_from_aiv",
          ctx), valid_shape),
      names=("pl.tpop_from_aiv", "pl.tile.tpop_from_aiv", "pl.system.tpop_from_aiv"),
      shape_from_annotation=True)(_tpop_from_aiv)


def _free_rule(tile, split, id, op: str):
    shaped(tile, "tile")
    if py_value(split) is not None:
        raise OpError(f"{op} takes its split from the tpop that produced the tile; leave it "
                      "out", arg="split")
    _int(id, "id", optional=True)
    return NONE


def _tfree_to_aic(tile, *, split=None, id=None):
    """Release the C2V slot holding `tile` (popped with tpop_from_aic) to the producer."""
    return _free_rule(tile, split, id, "pl.tfree_to_aic")


def _tfree_to_aiv(tile, *, split=None, id=None):
    """Release the V2C slot holding `tile` (popped with tpop_from_aiv) to the producer."""
    return _free_rule(tile, split, id, "pl.tfree_to_aiv")


def _free_impl(d: str, op: str):
    def free(tile, split=None, id=None, *, ctx):
        g = _group(ctx, op)
        pid = int(id) if id is not None else g.pipe_of(d, [], op, ctx)
        g.free(d, pid, op, ctx)
    return free


defop("system.tfree_to_aic", unit=Unit.SCALAR, wants_ctx=True, incore_only=True,
      impl=_free_impl("C2V", "pl.tfree_to_aic"),
      names=("pl.tfree_to_aic", "pl.system.tfree_to_aic"))(_tfree_to_aic)
defop("system.tfree_to_aiv", unit=Unit.SCALAR, wants_ctx=True, incore_only=True,
      impl=_free_impl("V2C", "pl.tfree_to_aiv"),
      names=("pl.tfree_to_aiv", "pl.system.tfree_to_aiv"))(_tfree_to_aiv)
