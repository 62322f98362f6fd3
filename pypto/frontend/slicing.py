"""Subscripts on tensors and tiles: `x[a:b, c]` reads and `x[a:b, :] = y` writes.

A full-rank all-scalar index reads one element (`pl.read`); anything else is a
`pl.slice` with full-rank sizes and offsets, scalar-indexed axes dropped. A
subscript write is `x = pl.assemble(x, y, offsets)`.
"""
from __future__ import annotations

import ast
import operator
from typing import Any

from pypto.errors import (
    DynamicShapeError,
    InvalidOperationError,
    PyptoSyntaxError,
    PyptoTypeError,
    UnsupportedFeatureError,
)
from pypto.frontend.dispatch import expression
from pypto.frontend.dump_tags import is_tagged
from pypto.frontend.opcall import call_op, scalar_binop, shape_dim
from pypto.frontend.values import contains_ir, fold, is_ir, is_static
from pypto.ir import dtypes
from pypto.ir.nodes import Expr, GetItem
from pypto.ir.types import ArrayType, ShapedType, TileType, TupleType


@expression(ast.Subscript)
def _subscript(p: Any, node: ast.Subscript) -> Any:
    base = p.visit_expr(node.value)
    if not is_ir(base):
        key = p.visit_expr(node.slice) if not isinstance(node.slice, ast.Slice) else \
            slice(*(p.visit_expr(x) if x is not None else None
                    for x in (node.slice.lower, node.slice.upper, node.slice.step)))
        if contains_ir(key) and isinstance(base, (list, tuple)):
            raise p.error(UnsupportedFeatureError, "indexing a compile-time list with a run-time "
                          "index", node, hint="use a pl.array for run-time indexing")
        return fold(p, node, operator.getitem, base, key)
    t = base.type
    if isinstance(t, ArrayType):
        return call_op(p, "array.get_element", [base, p.visit_expr(node.slice)], {}, node)
    if isinstance(t, TupleType):
        idx = p.visit_expr(node.slice)
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise p.error(PyptoSyntaxError, "a tuple is indexed by a constant integer", node)
        if not -len(t.items) <= idx < len(t.items):
            raise p.error(PyptoTypeError, f"index {idx} is out of range for a tuple of "
                          f"{len(t.items)} values", node.slice)
        idx %= len(t.items)
        return GetItem(base, idx, t.items[idx], p.span(node))
    if isinstance(t, ShapedType):
        return read_subscript(p, base, node)
    raise p.error(InvalidOperationError, f"a {t} value cannot be subscripted", node)


def _elements(node: ast.Subscript) -> list[ast.expr]:
    s = node.slice
    return list(s.elts) if isinstance(s, ast.Tuple) else [s]


def _extent(p: Any, lo_node: ast.expr | None, hi_node: ast.expr | None, lo: Any, hi: Any,
            node: ast.AST) -> Any:
    """The window size `hi - lo`, static whenever it can be: `r : r + T` has size T
    even though r is only known at run time."""
    if not contains_ir(lo) and not contains_ir(hi):
        return hi - lo
    if isinstance(hi_node, ast.BinOp) and isinstance(hi_node.op, ast.Add) and lo_node is not None:
        left, right = hi_node.left, hi_node.right
        if ast.dump(left) == ast.dump(lo_node):
            return p.visit_expr(right)
        if ast.dump(right) == ast.dump(lo_node):
            return p.visit_expr(left)
    if lo_node is None or (not contains_ir(lo) and lo == 0):
        return hi
    if hi_node is not None:
        a, b = _affine(p, lo_node), _affine(p, hi_node)
        if a is not None and b is not None:
            terms = dict(b[0])
            for k, v in a[0].items():
                terms[k] = terms.get(k, 0) - v
            if not any(terms.values()):
                return b[1] - a[1]
    return scalar_binop(p, "-", hi, lo, node)


def _affine(p: Any, node: ast.expr) -> tuple[dict, int] | None:
    """`node` as sum(coefficient * run-time term) + constant, terms keyed by their source
    text, so `qb + s * H : qb + (s + 1) * H` is seen to have the static extent H.
    None when the expression is not affine in compile-time coefficients."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
        a, b = _affine(p, node.left), _affine(p, node.right)
        if a is None or b is None:
            return None
        if isinstance(node.op, ast.Mult):
            if a[0] and b[0]:
                return None
            (terms, k), c = (b, a[1]) if not a[0] else (a, b[1])
            return {t: v * c for t, v in terms.items()}, k * c
        sign = 1 if isinstance(node.op, ast.Add) else -1
        terms = dict(a[0])
        for t, v in b[0].items():
            terms[t] = terms.get(t, 0) + sign * v
        return terms, a[1] + sign * b[1]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        a = _affine(p, node.operand)
        return None if a is None else ({t: -v for t, v in a[0].items()}, -a[1])
    if is_static(p, node):
        value = p.visit_expr(node)
        if isinstance(value, int) and not isinstance(value, bool):
            return {}, value
        return None
    return {ast.dump(node): 1}, 0


def parse_index(p: Any, base: Expr, node: ast.Subscript, tiling: bool = False
                ) -> tuple[list, list, list, bool]:
    """(sizes, offsets, dropped axes, all_scalar) for a subscript on `base`. With
    `tiling`, an explicit window inside a region must have a compile-time extent (it
    is the shape of an on-chip tile)."""
    t = base.type
    assert isinstance(t, ShapedType)  # the caller dispatched on it
    elts = _elements(node)
    if any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in elts):
        raise p.error(UnsupportedFeatureError, "ellipsis indexing is not supported", node,
                      hint="spell out every axis")
    if len(elts) > t.rank:
        raise p.error(PyptoTypeError, f"{len(elts)} indices for a rank-{t.rank} value", node,
                      hint=f"a rank-{t.rank} value takes at most {t.rank} indices ({t})")
    sizes, offsets, dropped = [], [], []
    all_scalar = True
    for axis in range(t.rank):
        full = shape_dim(p, base, axis, t.shape[axis], node)
        if axis >= len(elts):
            sizes.append(full)
            offsets.append(0)
            all_scalar = False
            continue
        e = elts[axis]
        if isinstance(e, ast.Slice):
            all_scalar = False
            if e.step is not None:
                raise p.error(UnsupportedFeatureError, "slices with a step are not supported",
                              e.step, hint="load the window and use pl.gather for strided access")
            lo = p.visit_expr(e.lower) if e.lower is not None else 0
            hi = p.visit_expr(e.upper) if e.upper is not None else full
            for bound, bnode in ((lo, e.lower), (hi, e.upper)):
                if not contains_ir(bound) and (not isinstance(bound, int)
                                               or isinstance(bound, bool)):
                    raise p.error(PyptoSyntaxError, f"slice bound {bound!r} is not an integer",
                                  bnode or e, hint="slice with integers or INDEX scalars")
                if not contains_ir(bound) and isinstance(bound, int) and bound < 0:
                    raise p.error(UnsupportedFeatureError, "negative indices are not supported",
                                  bnode, hint="count from the start, e.g. x.shape[0] - 1")
            size = _extent(p, e.lower, e.upper, lo, hi, e)
            if tiling and p.in_region and contains_ir(size):
                raise p.error(DynamicShapeError, "the window of this slice has a run-time "
                              "extent; inside a region a slice is an on-chip tile, and tile "
                              "sizes are tiling constants that must be known at compile time",
                              e, hint="slice a fixed-size window such as x[r : r + TILE] and "
                                      "mark the valid part with pl.slice(..., valid_shape=[...])")
            sizes.append(size)
            offsets.append(lo)
        else:
            idx = p.visit_expr(e)
            if not contains_ir(idx) and (not isinstance(idx, int) or isinstance(idx, bool)):
                raise p.error(PyptoSyntaxError, f"index {idx!r} is not an integer", e,
                              hint="index with integers or INDEX scalars; add an axis with "
                                   "pl.reshape")
            if not contains_ir(idx) and idx < 0:
                raise p.error(UnsupportedFeatureError, "negative indices are not supported", e,
                              hint="count from the start, e.g. x.shape[0] - 1")
            sizes.append(1)
            offsets.append(idx)
            dropped.append(axis)
    return sizes, offsets, dropped, all_scalar and len(elts) == t.rank


def _tile_window(p: Any, base: Expr, node: ast.Subscript) -> tuple[list, list, list, list
                                                                    ] | None:
    """A slice of an on-chip tile, by the real parser's rules: (sizes, offsets, dropped
    axes, valid_shape or []), or None when the subscript is not a tile slice. Lower
    bounds are compile-time; a static upper past the tile's extent clamps to it; a
    run-time upper keeps the static extent and narrows the valid shape (`t[:, :n]`)."""
    t = base.type
    elts = _elements(node)
    if not isinstance(t, TileType) or not any(isinstance(e, ast.Slice) for e in elts) or \
            len(elts) > t.rank or any(isinstance(e, ast.Slice) and e.step is not None
                                      for e in elts):
        return None
    logical = list(t.valid_shape) if t.valid_shape is not None else list(t.shape)
    sizes: list = []
    offsets: list = []
    dropped: list = []
    valid: list = []
    narrowed = False
    for axis in range(t.rank):
        extent, seen = t.shape[axis], logical[axis]
        e = elts[axis] if axis < len(elts) else ast.Slice()
        if not isinstance(e, ast.Slice):
            idx = p.visit_expr(e)
            sizes.append(1)
            offsets.append(idx)
            valid.append(1)
            dropped.append(axis)
            continue
        lo = p.visit_expr(e.lower) if e.lower is not None else 0
        if contains_ir(lo) or not isinstance(lo, int) or isinstance(lo, bool):
            raise p.error(UnsupportedFeatureError, "dynamic lower bounds are not supported in "
                          "a tile subscript: a tile slice's offset is a compile-time constant",
                          e.lower or e, hint="use a constant lower bound, or slice the tensor "
                                             "before loading it")
        hi = p.visit_expr(e.upper) if e.upper is not None else None
        if (isinstance(extent, int) and lo >= extent) or \
                (hi is not None and not contains_ir(hi) and hi <= lo):
            raise p.error(UnsupportedFeatureError, "a tile subscript must produce a positive "
                          f"static extent, got {ast.unparse(e)} of an extent-{extent} axis", e,
                          hint="keep the bounds inside the tile, with upper > lower")
        room = extent - lo if isinstance(extent, int) else None
        if hi is None:
            size, top = room if room is not None else extent, seen
        elif contains_ir(hi):
            size = room if room is not None else extent
            top = call_op(p, "min", [hi, seen], {}, e.upper or e) if isinstance(seen, int) \
                else hi
        else:
            size = min(hi - lo, room) if room is not None else hi - lo
            top = min(hi, seen) if isinstance(seen, int) else hi
        v = top - lo if not contains_ir(top) else (top if lo == 0 else
                                                   scalar_binop(p, "-", top, lo, e))
        narrowed = narrowed or not (isinstance(v, int) and v == size)
        sizes.append(size)
        offsets.append(lo)
        valid.append(v)
    return sizes, offsets, dropped, valid if narrowed else []


def read_subscript(p: Any, base: Expr, node: ast.Subscript) -> Expr:
    tile = _tile_window(p, base, node)
    if tile is not None:
        sizes, offsets, dropped, valid = tile
        kwargs: dict = {"drop_dims": dropped} if dropped else {}
        if valid:
            kwargs["valid_shape"] = valid
        if dropped and len(sizes) - len(dropped) < 2:
            p.warn("a tile slice below 2-D is promoted to 2-D", node)
        return call_op(p, "slice", [base, sizes, offsets], kwargs, node)
    sizes, offsets, dropped, all_scalar = parse_index(p, base, node, tiling=True)
    if all_scalar:
        return call_op(p, "read", [base, offsets], {}, node)
    kwargs = {"drop_dims": dropped} if dropped else {}
    if isinstance(base.type, TileType) and dropped and base.type.rank - len(dropped) < 2:
        p.warn("a tile slice below 2-D is promoted to 2-D", node)
    return call_op(p, "slice", [base, sizes, offsets], kwargs, node)


def write_subscript(p: Any, target: ast.Subscript, value: Any, stmt: ast.AST) -> None:
    """`dst[slices] = src` → `dst = pl.assemble(dst, src, offsets)`."""
    if p.strict_ssa:
        raise p.error(UnsupportedFeatureError, "a subscript write rebinds its target (`t[...] = "
                      "v` becomes `t = pl.assemble(t, v, offsets)` before SSA conversion), which "
                      "strict_ssa=True forbids", target,
                      hint="write `t2 = pl.assemble(t, v, offsets)` with a new name")
    if not isinstance(target.value, ast.Name):
        raise p.error(PyptoSyntaxError, "the target of a subscript assignment must be a plain "
                      "name", target.value, hint="name the tensor first: `t = ...` then "
                                                 "`t[...] = value`")
    base = p.visit_expr(target.value)
    if not is_ir(base):
        raise p.error(PyptoSyntaxError, f"cannot assign into the compile-time value "
                      f"'{target.value.id}'", target.value,
                      hint="only tensors, tiles and pl.array values can be written in a kernel")
    t = base.type
    if isinstance(t, ArrayType):
        idx = p.visit_expr(target.slice)
        new = call_op(p, "array.update_element", [base, idx, value], {}, stmt)
        p.bind(target.value.id, new, stmt)
        return
    if not isinstance(t, ShapedType):
        raise p.error(PyptoTypeError, f"a {t} value cannot be assigned into", target.value)
    sizes, offsets, dropped, all_scalar = parse_index(p, base, target)
    if all_scalar:
        raise p.error(UnsupportedFeatureError, "element assignment `x[i, j] = v` is not "
                      "supported on tensors and tiles", target,
                      hint="use pl.write(x, [i, j], v)")
    if is_ir(value) and isinstance(value.type, ShapedType):
        if isinstance(value.type, TileType) and not isinstance(t, TileType):
            raise p.error(PyptoTypeError, "cannot assign a tile into a tensor with a subscript",
                          stmt, hint="use pl.store(tile, offsets, tensor)")
    elif not contains_ir(value) or (is_ir(value) and not isinstance(value.type, ShapedType)):
        raise p.error(PyptoTypeError, "the right side of a subscript assignment must be a tensor "
                      "or tile", stmt,
                      hint="build a constant block with pl.full(shape, dtype=..., value=...)")
    if is_ir(value) and isinstance(value.type, ShapedType):
        window = [s for i, s in enumerate(sizes) if i not in dropped]
        if not isinstance(t, TileType) and not isinstance(value.type, TileType) and \
                value.type.rank < len(window):  # (extra unit axes of a source may drop)
            raise p.error(PyptoTypeError, f"the source of a write into a {len(window)}-D window "
                          f"of '{target.value.id}' must be {len(window)}D, got the "
                          f"{value.type.rank}-D {value.type}", stmt,
                          hint="reshape the source to the window's rank, or index the unit "
                               "axes of the target with a scalar (x[0, a:b] = v)")
        _check_window(p, window, value.type, t, target.value.id, stmt)
    new = call_op(p, "assemble", [base, value, offsets], {}, stmt)
    bound = p.bind(target.value.id, new, stmt)
    if is_tagged(p, base):  # a write into a tensor keeps its buffer: still the tagged value
        p.dump_tags.append(bound)


def _check_window(p: Any, window: list, vt: ShapedType, tt: ShapedType, name: str,
                  node: ast.AST) -> None:
    """`dst[window] = value`: the value must fill exactly the window (unit axes aside: a
    scalar-indexed axis and a tile promoted to 2-D both leave a 1). Only the value's valid
    region is written, so that is what must fit. Into a tensor its dtype may differ from
    dst's (the write converts), as in the real parser, which checks no dtype there (and
    types `pl.add(fp16_x, 1.0)` FP32: `tensor.adds` promotes with the FP32 literal);
    into a tile it must be dst's, but for the FP32 -> BF16 / FP16 drain (`tile.assemble`)."""
    if isinstance(tt, TileType) and vt.dtype != tt.dtype and not (
            vt.dtype == dtypes.FP32 and tt.dtype in (dtypes.BF16, dtypes.FP16)):
        raise p.error(PyptoTypeError, f"cannot write a {vt.dtype!r} value into the tile "
                      f"'{name}' ({tt.dtype!r})", node,
                      hint=f"convert it first with pl.cast(value, {tt.dtype!r})")
    w = [d for d in window if not (isinstance(d, int) and d == 1)]
    if vt.valid_shape is not None and \
            [d for d in vt.shape if not (isinstance(d, int) and d == 1)] == w:
        return  # a narrowed value of the window's shape: assemble writes its valid part
    written = vt.valid_shape if vt.valid_shape is not None else vt.shape  # what assemble writes
    v = [d for d in written if not (isinstance(d, int) and d == 1)]
    static = all(isinstance(d, int) for d in w + v)
    if (static and w != v) or (len(w) == len(v) and any(
            isinstance(a, int) and isinstance(b, int) and a != b for a, b in zip(w, v))):
        shown = [d if isinstance(d, int) else "?" for d in window]
        raise p.error(PyptoTypeError, f"the value {vt} does not fit the window {shown} of "
                      f"'{name}'", node, hint="the right side must have the window's shape")
