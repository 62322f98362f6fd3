"""Crossing between the cube and the two vector lanes of a split region.

`pl.aiv_shard(x)` inside `for lane in pl.split_aiv(2, mode=...)` brings a cube-produced
operand to the vector lane running the body: with `SplitMode.UP_DOWN` lane k gets the
k-th half of the rows, with `LEFT_RIGHT` the k-th half of the columns, and with `NONE`
the whole operand. The split mode is the enclosing loop's; the parser supplies it
(`pypto.frontend.scopes`), so the op carries it as its `mode` argument.
"""
from __future__ import annotations

from pypto.ops.facts import Role
from pypto.ops.numeric import plain, valid_shape, with_valid
from pypto.ops.registry import OpError, Unit, defop
from pypto.ops.rules import like, py_value, shaped

_AXIS = {"UP_DOWN": 0, "LEFT_RIGHT": 1}  # the axis each data-parallel mode halves


def _mode_name(mode) -> str:
    v = py_value(mode)
    name = getattr(v, "name", None)
    if name in ("NONE", "UP_DOWN", "LEFT_RIGHT"):
        return name
    return {0: "NONE", 1: "UP_DOWN", 2: "LEFT_RIGHT"}.get(v, "?")


def _aiv_shard(x, mode):
    """This vector lane's part of a cube-produced operand (see the module doc)."""
    t = shaped(x, "x")
    if t.rank != 2:
        raise OpError(f"takes a 2-D operand, got {t}", arg="x")
    name = _mode_name(mode)
    if name == "?":
        raise OpError(f"unknown split mode {py_value(mode)!r}", arg="mode")
    axis = _AXIS.get(name)
    if axis is None:
        return like(t, valid_shape=None)
    n = t.shape[axis]
    if isinstance(n, int) and n % 2:
        raise OpError(f"{name} halves axis {axis} between the two lanes, but its extent {n} "
                      "is odd", arg="x")
    half = n // 2 if isinstance(n, int) else n
    shape = tuple(half if i == axis else d for i, d in enumerate(t.shape))
    return like(t, shape=shape, valid_shape=None)


def _aiv_shard_impl(x, mode, *, ctx):
    axis = _AXIS.get(_mode_name(mode))
    if axis is None:
        return with_valid(plain(x).copy(), valid_shape(x))
    lane = ctx.subblock_idx
    half = x.shape[axis] // 2
    lo = lane * half
    box = [slice(None)] * x.ndim
    box[axis] = slice(lo, lo + half)
    valid = list(valid_shape(x))
    valid[axis] = max(0, min(half, valid[axis] - lo))
    return with_valid(plain(x)[tuple(box)].copy(), valid)


defop("aiv_shard", unit=Unit.MTE, wants_ctx=True, role=Role.LANE_SHARD, impl=_aiv_shard_impl,
      names=("pl.aiv_shard", "pl.tile.aiv_shard", "pl.tensor.aiv_shard"))(_aiv_shard)
