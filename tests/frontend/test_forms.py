"""The kernel forms of the seed examples compile, and the compiled program's functions
(names, kinds, parameters and their directions) and task launches can be inspected."""
from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.ir.nodes import (
    Assign,
    CallFunc,
    Const,
    Direction,
    DynDim,
    FunctionKind,
    Scope,
    ScopeKind,
)
from pypto.ir.transform import walk
from pypto.ir.types import ScalarType

N = 64
TM = 16
TK = 16
D = 32
B_DYN = pl.dynamic("B_DYN")

IN, OUT, INOUT = Direction.IN, Direction.OUT, Direction.INOUT


def base(name: str) -> str:
    """A value's source name, without the renaming suffixes passes add (`y__body1__3`)."""
    return name.split("__")[0]


def functions(compiled) -> dict:
    return {f.name: f for f in compiled.program.functions}


def signature(func) -> list[tuple[str, Direction]]:
    return [(base(p.var.name), p.direction) for p in func.params]


def launches(func) -> list[CallFunc]:
    return [n for n in walk(func.body) if isinstance(n, CallFunc) and n.launch]


def launch_value(call: CallFunc, key: str):
    v = call.launch_attr(key)
    return v.value if isinstance(v, Const) else v


# --- form A: @pl.jit entry + @pl.jit.inline body --------------------------------------------------


@pl.jit.inline
def block_body(x: pl.Tensor[[N, N], pl.FP32], w: pl.Tensor[[N, N], pl.FP32],
               y: pl.Tensor[[N, N], pl.FP32]):
    for r in pl.parallel(0, N, TM):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            for k in pl.pipeline(0, N, TK, stage=2):
                a = x[r:r + TM, k:k + TK]
                y[r:r + TM, k:k + TK] = pl.exp(a)
    for b in pl.spmd(N // TM, name_hint="blocks"):
        t = y[b * TM:b * TM + TM, :]
        y[b * TM:b * TM + TM, :] = pl.add(t, w[b * TM:b * TM + TM, :])
    return y


@pl.jit
def form_a(x: pl.Tensor[[N, N], pl.FP32], w: pl.Tensor[[N, N], pl.FP32],
           y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y = block_body(x, w, y)
    return y


def test_form_a_functions():
    compiled = form_a.compile()
    assert compiled is form_a.compile()  # cached
    fs = functions(compiled)
    assert compiled.program.entry == "form_a"
    assert {n: f.kind for n, f in fs.items()} == {
        "form_a": FunctionKind.ORCHESTRATION, "form_a_rows": FunctionKind.INCORE,
        "form_a_blocks": FunctionKind.INCORE}
    assert signature(fs["form_a"]) == [("x", IN), ("w", IN), ("y", OUT)]
    rows = dict(signature(fs["form_a_rows"]))
    assert rows["x"] is IN and rows["r"] is IN and "y" in rows
    blocks = dict(signature(fs["form_a_blocks"]))
    assert blocks["w"] is IN and blocks["y"] in (OUT, INOUT)
    assert fs["form_a_rows"].attr("name_hint") == "rows"


def test_form_a_region_writing_through_a_loop_is_an_output():
    fs = functions(form_a.compile())
    assert dict(signature(fs["form_a_rows"]))["y"] in (OUT, INOUT)


def test_form_a_launches():
    entry = functions(form_a.compile())["form_a"]
    calls = {c.func: c for c in launches(entry)}
    assert set(calls) == {"form_a_rows", "form_a_blocks"}
    assert launch_value(calls["form_a_rows"], "kind") == "at"
    assert launch_value(calls["form_a_blocks"], "kind") == "spmd"
    assert launch_value(calls["form_a_blocks"], "core_num") == N // TM
    assert launch_value(calls["form_a_blocks"], "name_hint") == "blocks"


def test_form_a_parsed_structure_keeps_the_regions():
    parsed = form_a.compile().records[0].before
    names = {f.name: f.kind for f in parsed.functions}
    assert names == {"form_a": FunctionKind.ORCHESTRATION, "block_body": FunctionKind.INLINE}
    body = parsed.function("block_body")
    kinds = [type(n).__name__ + ":" + getattr(getattr(n, "kind", None), "value", "")
             for n in walk(body.body) if type(n).__name__ in ("For", "Scope")]
    assert kinds == ["For:parallel", "Scope:at", "For:pipeline", "For:spmd"]


# --- form B: @pl.program --------------------------------------------------------------------------


@pl.program
class FormB:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        b = pl.tile.get_block_idx()
        t = x[b * TM:b * TM + TM, :]
        y[b * TM:b * TM + TM, :] = pl.exp(t)
        return y

    @pl.function(type=pl.FunctionType.Opaque)
    def scale(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Tensor[[N, N], pl.FP32]):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale"):
            y[0:TM, :] = pl.mul(x[0:TM, :], 2.0)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]],
             z: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        y = self.kernel(x, y)
        with pl.spmd(N // TM):
            z = self.kernel(x, z)
        z = self.scale(y, z)
        return z


def test_form_b_functions():
    compiled = FormB.compile()
    fs = functions(compiled)
    assert compiled.program.entry == "main"
    assert {n: f.kind for n, f in fs.items()} == {
        "kernel": FunctionKind.INCORE, "main": FunctionKind.ORCHESTRATION,
        "main_scale": FunctionKind.INCORE}
    assert signature(fs["main"]) == [("x", IN), ("y", OUT), ("z", OUT)]
    assert signature(fs["kernel"]) == [("x", IN), ("y", OUT)]
    # the spliced helper's own names: it reads its `x` and writes its `y`
    scale = dict(signature(fs["main_scale"]))
    assert scale == {"x": IN, "y": scale["y"]} and scale["y"] in (OUT, INOUT)


def test_form_b_launches():
    calls = launches(functions(FormB.compile())["main"])
    assert [c.func for c in calls] == ["kernel", "kernel", "main_scale"]
    plain, spmd, scale = calls
    assert launch_value(plain, "core_num") in (None, 1)
    assert launch_value(spmd, "kind") == "spmd"
    assert launch_value(spmd, "core_num") == N // TM
    assert launch_value(scale, "kind") == "at"


@pl.program
class OpaqueOnly:
    @pl.function(type=pl.FunctionType.Opaque)
    def run(self, x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
        for r in pl.parallel(0, N, TM):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
                y[r:r + TM, :] = pl.exp(x[r:r + TM, :])
        return y


def test_opaque_entry_becomes_orchestration():
    fs = functions(OpaqueOnly.compile())
    assert {n: f.kind for n, f in fs.items()} == {
        "run": FunctionKind.ORCHESTRATION, "run_rows": FunctionKind.INCORE}
    assert signature(fs["run"]) == [("x", IN), ("y", OUT)]
    rows = dict(signature(fs["run_rows"]))
    assert rows["x"] is IN and rows["r"] is IN and rows["y"] in (OUT, INOUT)


# --- form C: @pl.jit.incore + pl.spmd_submit ------------------------------------------------------


@pl.jit.incore
def tile_kernel(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    b = pl.tile.get_block_idx()
    y[b * TM:b * TM + TM, :] = pl.exp(x[b * TM:b * TM + TM, :])
    return y


@pl.jit
def form_c(x: pl.Tensor[[N, N], pl.FP32], y: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    y, tid = pl.spmd_submit(tile_kernel, x, y, core_num=N // TM)
    return y


def test_form_c_spmd_submit():
    compiled = form_c.compile()
    fs = functions(compiled)
    assert {n: f.kind for n, f in fs.items()} == {
        "form_c": FunctionKind.ORCHESTRATION, "tile_kernel": FunctionKind.INCORE}
    assert signature(fs["form_c"]) == [("x", IN), ("y", OUT)]
    assert signature(fs["tile_kernel"]) == [("x", IN), ("y", OUT)]
    (call,) = launches(fs["form_c"])
    assert call.func == "tile_kernel"
    assert launch_value(call, "kind") == "spmd" and launch_value(call, "core_num") == N // TM
    stmt = next(s for s in walk(fs["form_c"].body) if isinstance(s, Assign) and s.value is call)
    out, task = stmt.targets
    assert base(out.name) == "y" and base(task.name) == "tid"
    assert isinstance(task.type, ScalarType) and task.type.dtype == pl.TASK_ID
    # the parser's form: one SPMD scope whose TaskId is bound to `tid`
    parsed = compiled.records[0].before.function("form_c")
    (scope,) = [s for s in walk(parsed.body) if isinstance(s, Scope)]
    assert scope.kind is ScopeKind.SPMD and scope.task.name == "tid"


# --- form D: one dynamic-shape kernel for every batch ---------------------------------------------


@pl.jit
def form_d(x: pl.Tensor[[B_DYN, D], pl.FP32], y: pl.Out[pl.Tensor[[B_DYN, D], pl.FP32]]):
    x.bind_dynamic(0, B_DYN)
    y.bind_dynamic(0, B_DYN)
    b_dim = pl.tensor.dim(x, 0)
    for i in pl.parallel(b_dim):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="row"):
            y[i:i + 1, :] = pl.exp(x[i:i + 1, :])
    return y


def test_form_d_compiles_once_with_symbolic_dims():
    compiled = form_d.compile()
    assert form_d.compile() is compiled
    fs = functions(compiled)
    assert {n: f.kind for n, f in fs.items()} == {
        "form_d": FunctionKind.ORCHESTRATION, "form_d_row": FunctionKind.INCORE}
    assert signature(fs["form_d"]) == [("x", IN), ("y", OUT)]
    for p in fs["form_d"].params:
        assert isinstance(p.var.type.shape[0], DynDim) and p.var.type.shape[0].name == "B_DYN"
        assert p.var.type.shape[1] == D
    row = dict(signature(fs["form_d_row"]))
    assert row["x"] is IN and row["i"] is IN and row["y"] in (OUT, INOUT)


def test_form_d_serves_batch_1_and_16():
    compiled = form_d.compile()
    try:
        import pypto.sim  # noqa: F401
        from pypto.sim import run_compiled  # noqa: F401
    except ImportError:
        pytest.skip("the simulator is not available")
    rng = np.random.default_rng(0)
    for batch in (1, 16):
        x = rng.standard_normal((batch, D)).astype(np.float32)
        y = np.zeros_like(x)
        form_d(x, y)
        np.testing.assert_allclose(y, np.exp(x), rtol=1e-5, atol=1e-6)
    assert form_d.compile() is compiled  # both batches ran the one compiled program
