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

    @property
    def shape(self) -> tuple[int, int]:
        return self.tm * self.gm, self.tn * self.gn

    # -- the kernel ------------------------------------------------------------------

    def _exprs(self) -> list[str]:
        names = ["ta", "tb"]
        lines = []
        for k, st in enumerate(self.steps):
            ops = [names[i] for i in st.args]
            if st.kind == "unary":
                e = _UNARY[st.name][0].format(*ops)
            elif st.kind == "binary":
                e = _BINARY[st.name][0].format(*ops)
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
        outs = "y: pl.Out[pl.Tensor[[M, N], pl.FP32]]"
        if self.form == "acc":
            outs += ", r: pl.Out[pl.Tensor[[M, 1], pl.FP32]]"
        dims = f"M, N, TM, TN = {m}, {n}, {tm}, {tn}" if self.form != "dyn" else \
            f"M = pl.dynamic(\"M\")\nN, TM, TN = {n}, {tm}, {tn}"
        head = [f"# differential fuzz recipe {self.seed}: form {self.form}",
                "import pypto.language as pl", "", dims, "", "", "@pl.jit",
                "def kernel(a: pl.Tensor[[M, N], pl.FP32], b: pl.Tensor[[M, N], pl.FP32],",
                "           w: pl.Tensor[[1, N], pl.FP32], s: pl.Scalar[pl.FP32],",
                f"           {outs}):"]
        tiles = ["ta = a[i:i + TM, j:j + TN]", "tb = b[i:i + TM, j:j + TN]",
                 "tw = w[:, j:j + TN]"] + self._exprs()
        last = f"v{len(self.steps) - 1}"
        if self.form == "dyn":
            body = ["a.bind_dynamic(0, M)", "b.bind_dynamic(0, M)", "y.bind_dynamic(0, M)",
                    "rows = pl.tensor.dim(a, 0)",
                    "for i in pl.parallel(0, rows, TM):",
                    "    for j in pl.parallel(0, N, TN):",
                    "        with pl.at(level=pl.Level.CORE_GROUP, name_hint=\"tile\"):"]
            body += [" " * 12 + t for t in tiles + [f"y[i:i + TM, j:j + TN] = {last}"]]
        elif self.form == "nest":
            body = ["for i in pl.parallel(0, M, TM):",
                    "    for j in pl.parallel(0, N, TN):",
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

    def model(self, a: np.ndarray, b: np.ndarray, w: np.ndarray, s: float
              ) -> tuple[np.ndarray, ...]:
        """The outputs the kernel must produce (float32; y, and r for form "acc")."""
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


def recipe(seed: int) -> Recipe:
    """The recipe of `seed` (the same seed, the same kernel)."""
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


__all__ = ["Recipe", "Step", "recipe"]
