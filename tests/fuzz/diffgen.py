"""Random valid kernels, each with an independent numpy model (the differential fuzzer).

A `Recipe` is drawn from a seed: a tiling of an [M, N] fp32 problem, one of three
launch forms, and a short chain of tile ops over the tiles of two inputs `a`, `b`, a
column-broadcast row `w` and a scalar `s`. From it come two things written apart:

* `source()`: the kernel in the `pl` language, a module with one `@pl.jit` entry
  `kernel(a, b, w, s, y[, r])`;
* `model()`: what the kernel must compute, in plain numpy on float32 arrays. It imports
  nothing from pypto: each op is written here from its meaning (the L2 guide's), so a
  slip in the simulator's op implementations, its batching or its memory model shows up
  as a difference.

Typed recipes (issue 31): half the seeds also draw a tile dtype other than FP32 -
FP16, BF16 (chains of ops with float literals, `pl.Scalar` and column / row vectors,
modelled with a rounding to the dtype after every op and the scalar rounded to it
first, as the hardware computes them) or INT8 / INT16 / INT32 / INT64 / UINT8 (integer
chains, wrapping as the device's) - and, in the "nest", "rnest" (the same nest of
`pl.range` loops) and "spmd" forms, often a row tail: M is not a multiple of the tile,
the last row of tiles is a `pl.slice(..., valid_shape=[rows, TN])` and only its valid
rows are written. Their outputs must equal the model bit for bit.

Forms: "nest" (a `pl.parallel` loop nest, one task per tile - the batch engine's
favourite), "dyn" (the same with the row count a `pl.dynamic` dim bound by the
arguments), "spmd" (one block per row of tiles, a `pl.range` over the columns inside the
region), "acc" (a `pl.parallel` loop over row blocks, each accumulating the row sums of
its tiles in a loop-carried tile and writing them to a second output `r`).
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

F32 = np.float32
ONE = F32(1.0)

# operand kinds: "t" a [TM, TN] tile; the row / column vectors are made inline
# name -> (arity, source template, numpy meaning)
_UNARY: dict[str, tuple[str, Callable]] = {
    "neg": ("pl.neg({0})", lambda x: -x),
    "abs": ("pl.abs({0})", np.abs),
    "relu": ("pl.relu({0})", lambda x: np.maximum(x, F32(0))),
    "expneg": ("pl.exp(pl.neg(pl.abs({0})))", lambda x: np.exp(-np.abs(x))),
    "sqrtabs": ("pl.sqrt(pl.abs({0}))", lambda x: np.sqrt(np.abs(x))),
    "recip1": ("pl.recip(pl.add(pl.abs({0}), 1.0))", lambda x: ONE / (np.abs(x) + ONE)),
}
_BINARY: dict[str, tuple[str, Callable]] = {
    "add": ("pl.add({0}, {1})", lambda x, y: x + y),
    "sub": ("pl.sub({0}, {1})", lambda x, y: x - y),
    "mul": ("pl.mul({0}, {1})", lambda x, y: x * y),
    "maximum": ("pl.maximum({0}, {1})", np.maximum),
    "minimum": ("pl.minimum({0}, {1})", np.minimum),
    "div1": ("pl.div({0}, pl.add(pl.abs({1}), 1.0))", lambda x, y: x / (np.abs(y) + ONE)),
}
_CONSTS = (0.5, 1.5, -2.0, 3.0, 0.25)
_ROW_REDUCE: dict[str, tuple[str, Callable]] = {
    "row_sum": ("pl.row_sum({0})", lambda x: np.sum(x, axis=1, keepdims=True)),
    "row_max": ("pl.row_max({0})", lambda x: np.max(x, axis=1, keepdims=True)),
    "row_min": ("pl.row_min({0})", lambda x: np.min(x, axis=1, keepdims=True)),
}
_ROW_EXPAND: dict[str, tuple[str, Callable]] = {
    "add": ("pl.row_expand_add({0}, {1})", lambda x, v: x + v),
    "sub": ("pl.row_expand_sub({0}, {1})", lambda x, v: x - v),
    "mul": ("pl.row_expand_mul({0}, {1})", lambda x, v: x * v),
    "div1": ("pl.row_expand_div({0}, pl.add(pl.abs({1}), 1.0))",
             lambda x, v: x / (np.abs(v) + ONE)),
}
_COL_EXPAND: dict[str, tuple[str, Callable]] = {
    "add": ("pl.col_expand_add({0}, {1})", lambda x, v: x + v),
    "sub": ("pl.col_expand_sub({0}, {1})", lambda x, v: x - v),
    "mul": ("pl.col_expand_mul({0}, {1})", lambda x, v: x * v),
}


# typed recipes: ops whose result is exact in float64 / int64 before one rounding
_NP = {"FP32": np.float32, "FP16": np.float16, "BF16": ml_dtypes.bfloat16, "INT8": np.int8,
       "INT16": np.int16, "INT32": np.int32, "INT64": np.int64, "UINT8": np.uint8}
TYPED = ("FP16", "BF16", "INT8", "INT16", "INT32", "INT64", "UINT8")
_T_UNARY: dict[str, tuple[str, Callable]] = {
    "neg": ("pl.neg({0})", lambda x: -x),
    "abs": ("pl.abs({0})", np.abs),
    "relu": ("pl.relu({0})", lambda x: np.maximum(x, 0)),
}
_T_BINARY: dict[str, tuple[str, Callable]] = {
    "add": ("pl.add({0}, {1})", lambda x, y: x + y),
    "sub": ("pl.sub({0}, {1})", lambda x, y: x - y),
    "mul": ("pl.mul({0}, {1})", lambda x, y: x * y),
    "maximum": ("pl.maximum({0}, {1})", np.maximum),
    "minimum": ("pl.minimum({0}, {1})", np.minimum),
}
# the scalar forms on FP16 / BF16 tiles (pl.<name>(tile, literal or s))
_T_SCALAR: dict[str, Callable] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "maximum": np.maximum, "minimum": np.minimum,
}
_HALF_CONSTS = (0.3, -0.3, 0.1, 1.0004, 2049.0, -2.0, 3.0)
_INT_CONSTS = (1, 2, -3, 5)


@dataclass
class Step:
    """One op of the chain: `kind` picks the table, `name` the op in it, `args` the
    indices of earlier values (0: the tile of a, 1: the tile of b), `const` a literal
    ("s": the scalar parameter)."""

    kind: str  # "unary", "binary", "scalar", "row", "col"
    name: str
    args: tuple[int, ...]
    const: float | str | None = None
    reduce: str | None = None  # "row": the row reduction whose result is expanded


@dataclass
class Recipe:
    seed: int
    form: str
    tm: int
    tn: int
    gm: int
    gn: int
    steps: list[Step] = field(default_factory=list)
    dtype: str = "FP32"  # the tiles' (and a, b, w, y's) dtype
    tail: int = 0  # rows the last row of tiles lacks (valid_shape=[TM - tail, TN])

    @property
    def shape(self) -> tuple[int, int]:
        return self.tm * self.gm - self.tail, self.tn * self.gn

    @property
    def np_dtype(self) -> np.dtype:
        return np.dtype(_NP[self.dtype])

    # -- the kernel ------------------------------------------------------------------

    def _exprs(self) -> list[str]:
        names = ["ta", "tb"]
        lines = []
        typed = self.dtype != "FP32"
        for k, st in enumerate(self.steps):
            ops = [names[i] for i in st.args]
            if st.kind == "unary":
                e = (_T_UNARY if typed else _UNARY)[st.name][0].format(*ops)
            elif st.kind == "binary":
                e = (_T_BINARY if typed else _BINARY)[st.name][0].format(*ops)
            elif st.kind == "scalar":
                c = "s" if st.const == "s" else repr(st.const)
                e = f"pl.{st.name}({ops[0]}, {c})"
            elif st.kind == "row":
                assert st.reduce is not None
                vec = _ROW_REDUCE[st.reduce][0].format(ops[1])
                e = _ROW_EXPAND[st.name][0].format(ops[0], vec)
            else:
                e = _COL_EXPAND[st.name][0].format(ops[0], "tw")
            names.append(f"v{k}")
            lines.append(f"v{k} = {e}")
        return lines

    def source(self) -> str:
        m, n = self.shape
        tm, tn = self.tm, self.tn
        dt = f"pl.{self.dtype}"
        outs = f"y: pl.Out[pl.Tensor[[M, N], {dt}]]"
        if self.form == "acc":
            outs += ", r: pl.Out[pl.Tensor[[M, 1], pl.FP32]]"
        dims = f"M, N, TM, TN = {m}, {n}, {tm}, {tn}" if self.form != "dyn" else \
            f"M = pl.dynamic(\"M\")\nN, TM, TN = {n}, {tm}, {tn}"
        head = [f"# differential fuzz recipe {self.seed}: form {self.form}",
                "import pypto.language as pl", "", dims, "", "", "@pl.jit",
                f"def kernel(a: pl.Tensor[[M, N], {dt}], b: pl.Tensor[[M, N], {dt}],",
                f"           w: pl.Tensor[[1, N], {dt}], s: pl.Scalar[pl.FP32],",
                f"           {outs}):"]
        tiles = ["ta = a[i:i + TM, j:j + TN]", "tb = b[i:i + TM, j:j + TN]",
                 "tw = w[:, j:j + TN]"] + self._exprs()
        if self.tail:  # the last row of tiles is partial
            tiles[:2] = ["rows = pl.min(TM, M - i)",
                         "ta = pl.slice(a, [TM, TN], [i, j], valid_shape=[rows, TN])",
                         "tb = pl.slice(b, [TM, TN], [i, j], valid_shape=[rows, TN])"]
        last = f"v{len(self.steps) - 1}"
        if self.form == "dyn":
            body = ["a.bind_dynamic(0, M)", "b.bind_dynamic(0, M)", "y.bind_dynamic(0, M)",
                    "rows = pl.tensor.dim(a, 0)",
                    "for i in pl.parallel(0, rows, TM):",
                    "    for j in pl.parallel(0, N, TN):",
                    "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"tile\"):"]
            body += [" " * 12 + t for t in tiles + [f"y[i:i + TM, j:j + TN] = {last}"]]
        elif self.form in ("nest", "rnest"):
            loop = "parallel" if self.form == "nest" else "range"
            body = [f"for i in pl.{loop}(0, M, TM):",
                    f"    for j in pl.{loop}(0, N, TN):",
                    "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"tile\"):"]
            body += [" " * 12 + t for t in tiles + [f"y[i:i + TM, j:j + TN] = {last}"]]
        elif self.form == "spmd":
            body = [f"for blk in pl.spmd({self.gm}, name_hint=\"rows\"):",
                    "    i = blk * TM",
                    "    for j in pl.range(0, N, TN):"]
            body += [" " * 8 + t for t in tiles + [f"y[i:i + TM, j:j + TN] = {last}"]]
        else:
            body = ["for i in pl.parallel(0, M, TM):",
                    "    with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"rows\"):",
                    "        acc = pl.full([TM, 1], pl.FP32, 0.0)",
                    "        for j in pl.range(0, N, TN):"]
            body += [" " * 12 + t for t in tiles + [f"y[i:i + TM, j:j + TN] = {last}",
                                                     f"acc = pl.add(acc, pl.row_sum({last}))"]]
            body += ["        r[i:i + TM, :] = acc"]
        ret = "    return y, r" if self.form == "acc" else "    return y"
        return "\n".join(head + ["    " + b for b in body] + [ret, ""])

    # -- the model -------------------------------------------------------------------

    def _tile(self, ta: np.ndarray, tb: np.ndarray, tw: np.ndarray, s: F32) -> np.ndarray:
        vals = [ta, tb]
        for st in self.steps:
            x = [vals[i] for i in st.args]
            if st.kind == "unary":
                v = _UNARY[st.name][1](x[0])
            elif st.kind == "binary":
                v = _BINARY[st.name][1](x[0], x[1])
            elif st.kind == "scalar":
                c = s if st.const == "s" else F32(st.const)
                v = x[0] + c if st.name == "add" else x[0] * c
            elif st.kind == "row":
                assert st.reduce is not None
                v = _ROW_EXPAND[st.name][1](x[0], _ROW_REDUCE[st.reduce][1](x[1]))
            else:
                v = _COL_EXPAND[st.name][1](x[0], tw)
            vals.append(np.asarray(v, F32))
        return vals[-1]

    def _typed_tile(self, ta: np.ndarray, tb: np.ndarray, tw: np.ndarray, s: float
                    ) -> np.ndarray:
        """A typed recipe's chain: every op on float64 copies of its operands (exact for
        these ops on FP16 / BF16 / small integers), rounded - or wrapped - to the dtype
        after every op; a scalar is rounded to the dtype first."""
        dt = self.np_dtype

        def rnd(v: np.ndarray) -> np.ndarray:
            if dt.kind in "iu":  # (wraps: the low bits of the exact integer)
                return np.asarray(v).astype(np.int64).astype(dt)
            return np.asarray(v).astype(dt)

        wide = np.float64 if dt.kind not in "iu" else np.int64
        vals = [ta, tb]
        for st in self.steps:
            x = [vals[i].astype(wide) for i in st.args]
            if st.kind == "unary":
                v = _T_UNARY[st.name][1](x[0])
            elif st.kind == "binary":
                v = _T_BINARY[st.name][1](x[0], x[1])
            elif st.kind == "scalar":
                c = s if st.const == "s" else st.const
                v = _T_SCALAR[st.name](x[0], wide(rnd(np.asarray(c))))
            elif st.kind == "row":
                assert st.reduce is not None
                v = _ROW_EXPAND[st.name][1](x[0], _ROW_REDUCE[st.reduce][1](x[1]))
            else:
                v = _COL_EXPAND[st.name][1](x[0], tw.astype(wide))
            vals.append(rnd(v))
        return vals[-1]

    def model(self, a: np.ndarray, b: np.ndarray, w: np.ndarray, s: float
              ) -> tuple[np.ndarray, ...]:
        """The outputs the kernel must produce (y, and r for form "acc"): float32 for an
        FP32 recipe, else in its dtype."""
        if self.dtype != "FP32":
            m, n = a.shape
            y = np.empty((m, n), self.np_dtype)
            with np.errstate(all="ignore"):
                for i in range(0, m, self.tm):
                    for j in range(0, n, self.tn):
                        y[i:i + self.tm, j:j + self.tn] = self._typed_tile(
                            a[i:i + self.tm, j:j + self.tn], b[i:i + self.tm, j:j + self.tn],
                            w[:, j:j + self.tn], s)
            return (y,)
        m, n = a.shape
        tm, tn = self.tm, self.tn
        s32 = F32(s)
        y = np.empty((m, n), F32)
        r = np.empty((m, 1), F32)
        with np.errstate(all="ignore"):
            for i in range(0, m, tm):
                acc = np.zeros((tm, 1), F32)
                for j in range(0, n, tn):
                    v = self._tile(a[i:i + tm, j:j + tn], b[i:i + tm, j:j + tn],
                                   w[:, j:j + tn], s32)
                    y[i:i + tm, j:j + tn] = v
                    acc = acc + np.sum(v, axis=1, keepdims=True)
                r[i:i + tm] = acc
        return (y, r) if self.form == "acc" else (y,)


def _typed_recipe(seed: int, dtype: str, rnd: random.Random) -> Recipe:
    """A typed recipe (see the module docstring): integer or FP16 / BF16 chains, often
    with a row tail."""
    form = rnd.choice(("nest", "rnest", "spmd"))
    tm, gm = rnd.choice((4, 8, 16)), rnd.randint(1, 4)
    rec = Recipe(seed, form, tm, rnd.choice((8, 16, 32)), gm, rnd.randint(1, 4), dtype=dtype)
    if rnd.random() < 0.6:
        rec.tail = rnd.randint(1, tm - 1)
    if form != "spmd" and rec.gm * rec.gn < 2:
        rec.gn = 2
    ints = np.dtype(_NP[dtype]).kind in "iu"
    count = 2
    for _ in range(rnd.randint(1, 6)):
        x = rnd.choice(list(range(max(0, count - 3), count)))
        kind = rnd.choice(("unary", "binary", "scalar", "scalar", "row", "col"))
        if kind == "unary":
            st = Step(kind, rnd.choice(sorted(_T_UNARY)), (x,))
        elif kind == "binary":
            st = Step(kind, rnd.choice(sorted(_T_BINARY)), (x, rnd.randrange(count)))
        elif kind == "scalar":
            names = ("add", "sub", "mul") if ints else sorted(_T_SCALAR)
            consts = _INT_CONSTS if ints else (*_HALF_CONSTS, "s")
            st = Step(kind, rnd.choice(names), (x,), const=rnd.choice(consts))
        elif kind == "row":
            st = Step(kind, rnd.choice(("add", "sub", "mul")), (x, rnd.randrange(count)),
                      reduce=rnd.choice(("row_max", "row_min")))
        else:
            st = Step(kind, rnd.choice(sorted(_COL_EXPAND)), (x,))
        rec.steps.append(st)
        count += 1
    return rec


def recipe(seed: int) -> Recipe:
    """The recipe of `seed` (the same seed, the same kernel)."""
    typed = random.Random(f"typed-{seed}")
    if typed.random() < 0.5:
        return _typed_recipe(seed, typed.choice(TYPED), typed)
    rnd = random.Random(seed)
    form = rnd.choice(("nest", "nest", "dyn", "spmd", "acc"))
    rec = Recipe(seed, form, rnd.choice((4, 8, 16)), rnd.choice((8, 16, 32)),
                 rnd.randint(1, 4), rnd.randint(1, 4))
    if form in ("nest", "dyn") and rec.gm * rec.gn < 2:
        rec.gn = 2
    count = 2  # values so far: the tiles of a and b
    for _ in range(rnd.randint(1, 6)):
        recent = list(range(max(0, count - 3), count))
        x = rnd.choice(recent)
        kind = rnd.choice(("unary", "binary", "binary", "scalar", "row", "col"))
        if kind == "unary":
            st = Step(kind, rnd.choice(sorted(_UNARY)), (x,))
        elif kind == "binary":
            st = Step(kind, rnd.choice(sorted(_BINARY)), (x, rnd.randrange(count)))
        elif kind == "scalar":
            st = Step(kind, rnd.choice(("add", "mul")), (x,),
                      const=rnd.choice((*_CONSTS, "s")))
        elif kind == "row":
            st = Step(kind, rnd.choice(sorted(_ROW_EXPAND)), (x, rnd.randrange(count)),
                      reduce=rnd.choice(sorted(_ROW_REDUCE)))
        else:
            st = Step(kind, rnd.choice(sorted(_COL_EXPAND)), (x,))
        rec.steps.append(st)
        count += 1
    return rec


__all__ = ["TYPED", "Recipe", "Step", "recipe"]
