"""Crossing between the cube (AIC) and the two vector lanes (AIV) of a `pl.split_aiv`
region: `pl.aiv_shard` (C->V) and `pl.aic_gather` (V->C).

The split mode is the enclosing region's (`for lane in pl.split_aiv(2, mode=...)`); the
parser writes it into the call as the `split` argument (0 = NONE, 1 = UP_DOWN, 2 =
LEFT_RIGHT, the real IR's codes), so outside a region the ops are refused.

* `aiv_shard(x)`: with UP_DOWN lane k gets the k-th half of the rows of `x`, with
  LEFT_RIGHT the k-th half of the columns; with NONE both lanes get all of `x`.
* `aic_gather(y)`: the inverse. With UP_DOWN / LEFT_RIGHT the cube receives the two
  lanes' halves joined along the split axis (lane 0 first); with NONE both lanes send
  their whole `y` into one slot and the cube receives one of them - which one is not
  specified, so the simulator faults when the two lanes sent different values.

The simulator runs the lanes one after the other; a gather fills one buffer per region
execution (lane 0's half, then lane 1's), which is what the cube side reads after the
region.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pypto.ir.nodes import Attr, Call, literal
from pypto.ir.options import SplitMode
from pypto.ops.facts import Role
from pypto.ops.numeric import plain, valid_shape, with_valid
from pypto.ops.registry import OpError, Unit, defop, get
from pypto.ops.rules import like, py_value, shaped

AXIS = {SplitMode.UP_DOWN: 0, SplitMode.LEFT_RIGHT: 1}  # the axis each mode halves
_AXIS_NAME = {0: "rows", 1: "columns"}


def split_mode(x: Any) -> SplitMode:
    """The split mode of a `split` argument (a SplitMode, or its integer code)."""
    v = py_value(x)
    try:
        return SplitMode(int(v))
    except (TypeError, ValueError):
        raise OpError(f"split must be 0 (NONE), 1 (UP_DOWN) or 2 (LEFT_RIGHT), got {v!r}",
                      arg="split") from None


def _crossing(x: Any, split: Any, halve: bool, op: str):
    t = shaped(x, "x")
    mode = split_mode(split)
    axis = AXIS.get(mode)
    if axis is None:
        return like(t, valid_shape="keep")
    if t.rank != 2:
        raise OpError(f"{op} in a {mode.name} region takes a 2-D operand, got {t}", arg="x",
                      hint="reshape it to 2-D first so the split axis is unambiguous")
    valid = list(t.valid_shape) if t.valid_shape is not None else list(t.shape)
    if halve and axis == 1 and valid[1] != t.shape[1]:
        raise OpError(f"{op}: LEFT_RIGHT splits the columns, but only {valid[1]} of the "
                      f"{t.shape[1]} columns are valid, so the two lanes would hold different "
                      "amounts of data", arg="x",
                      hint="make the columns fully valid before the crossing (pl.set_validshape "
                           "with the full column count; the padding is don't-care), or split "
                           "the rows with mode=pl.SplitMode.UP_DOWN")

    def scaled(d: Any) -> Any:
        if not isinstance(d, int):
            return d
        return (d + 1) // 2 if halve else d * 2

    shape = tuple(scaled(d) if i == axis else d for i, d in enumerate(t.shape))
    new_valid = tuple(scaled(d) if i == axis else d for i, d in enumerate(valid))
    return like(t, shape=shape, valid_shape=None if new_valid == shape else new_valid)


def _aiv_shard(x, *, split):
    """A cube-produced operand brought to this AIV lane: its half on the split axis
    (UP_DOWN: rows, LEFT_RIGHT: columns), or all of it in a NONE region."""
    return _crossing(x, split, True, "pl.aiv_shard")


def _aic_gather(x, *, split):
    """A vector-produced operand handed to the cube: the two lanes' halves joined on the
    split axis, or (NONE) the lane-uniform value."""
    return _crossing(x, split, False, "pl.aic_gather")


def _aiv_shard_impl(x, split=0, *, ctx):
    axis = AXIS.get(SplitMode(int(split)))
    if axis is None:
        return x.copy()
    n = x.shape[axis]
    half = (n + 1) // 2  # an odd extent: lane 0 takes the ceiling half
    lo = ctx.subblock_idx * half
    box = [slice(None)] * x.ndim
    box[axis] = slice(lo, min(lo + half, n))
    part = plain(x)[tuple(box)]
    shape = list(x.shape)
    shape[axis] = half
    out = np.zeros(shape, dtype=x.dtype)
    out[tuple(slice(0, d) for d in part.shape)] = part
    valid = list(valid_shape(x))
    valid[axis] = max(0, min(half, valid[axis] - lo))
    return with_valid(out, valid)


def _aic_gather_impl(x, split=0, *, ctx):
    mode = SplitMode(int(split))
    axis = AXIS.get(mode)
    lane = ctx.subblock_idx
    slots = ctx.lane_slots
    key = ctx.span
    if axis is None:
        first = slots.setdefault(key, plain(x).copy())
        if lane == 1 and not np.array_equal(first, plain(x), equal_nan=True):
            raise ctx.fault(
                "pl.aic_gather out of a NONE region: the two AIV lanes hand the cube "
                "different values, and the cube receives an unspecified one of the two",
                ctx.span, hint="gather only a value both lanes agree on, or use a "
                               "data-parallel region (UP_DOWN / LEFT_RIGHT)")
        return first
    half = x.shape[axis]
    shape = list(x.shape)
    shape[axis] = 2 * half
    full = slots.get(key)
    if full is None:
        full = slots[key] = ctx.run.memory.new_fresh(tuple(shape), x.dtype)
    box = [slice(None)] * x.ndim
    box[axis] = slice(lane * half, lane * half + half)
    full[tuple(box)] = plain(x)
    # lane l's half lands at l * half: the joined data is a rectangle only when lane 0
    # filled its half (or lane 1 sent nothing) - an odd shard's k+1 and k rows join to 2k+1
    valids = slots.setdefault((key, "valid"), {})
    valids[lane] = valid_shape(x)
    if lane == 0:
        return with_valid(full, valids[0])
    v0, v1 = valids.get(0, tuple(x.shape)), valids[1]
    if v0[axis] < half and v1[axis] > 0:
        raise ctx.fault(
            f"pl.aic_gather: lane 0 holds {v0[axis]} of its {half} {_AXIS_NAME[axis]} and "
            f"lane 1 holds {v1[axis]}, so the joined tile has a hole between the two bands",
            ctx.span, hint="gather fully valid halves (pad the split axis and narrow the "
                           "cube-side result), or keep the ragged part out of the region")
    joined = [min(a, b) for a, b in zip(v0, v1)]
    joined[axis] = v0[axis] + v1[axis]
    return with_valid(full, joined)


defop("aiv_shard", unit=Unit.MTE, wants_ctx=True, impl=_aiv_shard_impl, incore_only=True,
      role=Role.LANE_SHARD,
      names=("pl.aiv_shard", "pl.tile.aiv_shard", "pl.tensor.aiv_shard"),
      split_from_scope=True)(_aiv_shard)
defop("aic_gather", unit=Unit.MTE, wants_ctx=True, impl=_aic_gather_impl, incore_only=True,
      role=Role.LANE_GATHER,
      names=("pl.aic_gather", "pl.tile.aic_gather", "pl.tensor.aic_gather"),
      split_from_scope=True)(_aic_gather)


# --- building calls for the halving pass (pypto.passes.split_lanes) --------------------


def ir_default(op: Any, name: str) -> Any:
    """The IR form of parameter `name`'s default value."""
    d = op.signature.parameters[name].default
    if isinstance(d, (bool, int, float)):
        return literal(d)
    return Attr(d)


def as_given(op: Any, args: dict) -> dict:
    """The arguments as the parser hands them to a type rule: one left at its default is
    the raw Python default, not its IR form."""
    out = {}
    for name, a in args.items():
        d = op.signature.parameters[name].default
        if d is not op.signature.parameters[name].empty and a == ir_default(op, name):
            out[name] = d
        else:
            out[name] = a
    return out


def window_call(x: Any, shape: Any, offset: Any, valid: Any, span: Any) -> Call:
    """`pl.slice(x, shape, offset, valid_shape=valid)` as a typed call: the window of a
    global tensor that one lane reads where the full-width body read all of it."""
    op = get("slice")
    args = {p: ir_default(op, p) for p in op.params}
    args.update(x=x, shape=shape, offset=offset)
    if valid is not None:
        args["valid_shape"] = valid
    return Call("slice", tuple(args[p] for p in op.params), (),
                op.type_rule(**as_given(op, args)), span)
