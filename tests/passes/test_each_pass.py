"""One focused test per compiler pass, named after the pass: what that pass, and only
that pass, does to the IR (or publishes, for the analyses).

Each test runs the default pipeline step by step (`steps`) and looks at the step of
its pass: the program it received, the program it returned, the analyses it added.
`test_every_pass_has_a_focused_test` keeps the list complete when a pass is added.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np
import pytest
from pass_helpers import check_ssa, definitions, function

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.errors import PyptoWarning, ScopeError
from pypto.frontend import ProgramBuilder
from pypto.ir.nodes import (
    Assign,
    Break,
    Call,
    CallFunc,
    Continue,
    Direction,
    For,
    FunctionKind,
    If,
    Program,
    Scope,
    ScopeKind,
)
from pypto.ir.transform import walk
from pypto.passes import PassContext, default_pipeline

F32 = pl.FP32


@dataclass
class Step:
    name: str
    before: Program
    after: Program
    added: dict  # analyses this pass published
    warnings: list  # warnings this pass gave


def steps(kernel) -> dict[str, Step]:
    """Parse `kernel` and run the default pipeline one pass at a time."""
    builder = ProgramBuilder("a2a3sim")
    name = kernel.fn.__name__
    builder.parse_function(kernel.fn, FunctionKind.ORCHESTRATION, name, entry=True)
    program = Program(name, tuple(builder.functions.values()), name)
    ctx = PassContext(platform="a2a3sim")
    out = {}
    for p in default_pipeline():
        known, given = set(ctx.analyses), len(ctx.warnings)
        after = p.run(program, ctx)
        out[p.name] = Step(p.name, program, after,
                           {k: v for k, v in ctx.analyses.items() if k not in known},
                           ctx.warnings[given:])
        program = after
    return out


def nodes(program: Program, cls: type) -> list:
    return [n for f in program.functions for n in walk(f.body) if isinstance(n, cls)]


def ops(program: Program, fname: str | None = None) -> list[str]:
    funcs = [program.function(fname)] if fname else program.functions
    return [n.op for f in funcs for n in walk(f.body) if isinstance(n, Call)]


def test_every_pass_has_a_focused_test():
    tests = {name for name in dir(sys.modules[__name__]) if name.startswith("test_")}
    missing = [p.name for p in default_pipeline()
               if not any(t.startswith(f"test_{p.name}") for t in tests)]
    assert not missing, f"passes without a focused test here: {missing}"


# --- inline_functions ----------------------------------------------------------------


@pl.jit.inline
def scaled_exp(t: pl.Tensor, s):
    e = pl.exp(t)
    return pl.mul(e, s)


@pl.jit
def uses_inline(x: pl.Tensor[[64, 64], F32], y: pl.Out[pl.Tensor[[64, 64], F32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[:, :] = scaled_exp(x[:, :], 2.0)
    return y


def test_inline_functions_splices_the_body_and_drops_the_callee():
    step = steps(uses_inline)["inline_functions"]
    assert [f.kind for f in step.before.functions].count(FunctionKind.INLINE) == 1
    assert [c.func for c in nodes(step.before, CallFunc)] == ["scaled_exp"]
    assert "exp" not in ops(step.before, "uses_inline")

    assert [f.name for f in step.after.functions] == ["uses_inline"]
    assert nodes(step.after, CallFunc) == []
    assert ops(step.after) == ["slice", "exp", "mul", "assemble"]
    # callee locals are renamed apart from the caller's; the parameter becomes an assignment
    bound = definitions(function(step.after))
    assert {"t__scaled_exp1", "e__scaled_exp1"} <= set(bound)
    x, y = np.random.default_rng(0).random((2, 64, 64), dtype=np.float32)
    uses_inline(x, y)
    np.testing.assert_allclose(y, np.exp(x) * 2, rtol=1e-6)


# --- check_distributed --------------------------------------------------------------


@pl.jit.inline
def group_size_helper(x: pl.Tensor[[64, 64], F32]):
    n = pld.world_size()  # host-only: placed by inlining into a device function
    return x


@pl.jit
def device_reads_world_size(x: pl.Tensor[[64, 64], F32]):
    x = group_size_helper(x)
    return x


@pl.jit
def signals_on_device(x: pl.Tensor[[2, 1], pl.INT32], sig: pld.DistributedTensor[[2, 1], pl.INT32]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="sync"):
        ctx = pld.get_comm_ctx(sig)
        me = pld.rank(ctx)
        pld.system.notify(sig, 1 - me, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        pld.system.wait(sig, [1 - me, 0], 1, cmp=pld.WaitCmp.Ge)
    return x


def test_check_distributed_places_pld_ops_after_inlining():
    step = steps(signals_on_device)["check_distributed"]
    assert step.after is step.before and step.added == {}
    with pytest.raises(ScopeError) as info:
        steps(device_reads_world_size)
    err = info.value
    assert "pld.world_size is host-side work" in err.message
    assert "device_reads_world_size" in err.message
    # located at the call in the helper's body, where the user wrote it
    assert err.span.line == group_size_helper.fn.__code__.co_firstlineno + 2


# --- lower_break_continue ------------------------------------------------------------


@pl.jit
def breaks_and_continues(x: pl.Tensor[[64, 64], F32], y: pl.Out[pl.Tensor[[64, 64], F32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc"):
        acc = pl.full([64, 64], F32, 0.0)
        for i in pl.range(8):
            if i == 5:
                break
            if i % 2 == 1:
                continue
            acc = pl.add(acc, x[:, :])
        y[:, :] = acc
    return y


def test_lower_break_continue_turns_exits_into_flags_and_guards():
    step = steps(breaks_and_continues)["lower_break_continue"]
    assert len(nodes(step.before, Break)) == 1 and len(nodes(step.before, Continue)) == 1
    assert nodes(step.after, Break) == [] and nodes(step.after, Continue) == []
    region = next(s for s in function(step.after).body if isinstance(s, Scope))
    flag_init, loop = region.body[1], region.body[2]
    # the break flag starts False before the loop; the whole body runs under `not flag`
    assert isinstance(flag_init, Assign) and flag_init.targets[0].name == "__brk0"
    assert flag_init.value.value is False
    assert isinstance(loop, For) and len(loop.body) == 1 and isinstance(loop.body[0], If)
    guard = loop.body[0].cond
    assert guard.op == "scalar.not" and guard.args[0].name == "__brk0"
    # the continue flag is reset at the top of every iteration
    first = loop.body[0].then_body[0]
    assert first.targets[0].name == "__cont0" and first.value.value is False
    x, y = np.random.default_rng(1).random((2, 64, 64), dtype=np.float32)
    breaks_and_continues(x, y)
    np.testing.assert_allclose(y, 3 * x, rtol=1e-6)  # iterations 0, 2 and 4 add x


# --- convert_to_ssa ------------------------------------------------------------------


def test_convert_to_ssa_binds_every_name_once_and_carries_explicitly():
    step = steps(breaks_and_continues)["convert_to_ssa"]
    before = definitions(function(step.before))
    assert before.count("acc") == 2 and before.count("__brk0") == 2  # rebound names
    with pytest.raises(AssertionError, match="bound more than once"):
        check_ssa(function(step.before))
    check_ssa(function(step.after))
    loop = next(n for n in walk(function(step.after).body) if isinstance(n, For))
    assert [a.name for a in loop.iter_args] == ["__brk0__1", "acc__1"]
    assert [i.name for i in loop.inits] == ["__brk0", "acc"]
    assert len(loop.results) == 2


# --- outline_regions -----------------------------------------------------------------


def test_outline_regions_cuts_a_region_into_an_incore_function_and_a_launch():
    step = steps(uses_inline)["outline_regions"]
    assert [s.kind for s in nodes(step.before, Scope)] == [ScopeKind.INCORE]
    assert nodes(step.after, Scope) == []
    incore = step.after.function("uses_inline_r")
    assert incore.kind is FunctionKind.INCORE
    assert ops(step.after, "uses_inline_r") == ["slice", "exp", "mul", "assemble"]
    assert ops(step.after, "uses_inline") == []
    # live-ins become parameters: x is read (In), y is written in place (Out)
    assert [(p.var.name, p.direction) for p in incore.params] == \
        [("x", Direction.IN), ("y", Direction.OUT)]
    (launch,) = nodes(step.after, CallFunc)
    assert launch.func == "uses_inline_r"
    assert launch.launch_attr("kind") == "at" and launch.launch_attr("name_hint") == "r"
    # the launch returns the region's output and its TaskId
    site = next(s for s in function(step.after).body if isinstance(s, Assign))
    assert [t.name for t in site.targets][1:] == ["_task0"]


# --- check_placement -----------------------------------------------------------------


@pl.jit
def exp_beside_a_region(x: pl.Tensor[[64, 64], F32], y: pl.Out[pl.Tensor[[64, 64], F32]]):
    n = pl.max(pl.tensor.dim(x, 0), 16)  # scalar arithmetic: control-plane work
    z = pl.exp(x)  # a compute op in orchestration code
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        y[:, :] = pl.mul(x[:, :], 2.0)
    return y


def test_check_placement_finds_core_work_left_in_orchestration_code():
    step = steps(exp_beside_a_region)["check_placement"]
    assert step.after is step.before  # an analysis: the program is unchanged
    (op,) = step.added["misplaced_ops"]
    assert (op.public, op.function, op.core_only) == ("pl.exp", "exp_beside_a_region", False)
    first = exp_beside_a_region.fn.__code__.co_firstlineno
    assert (op.span.line, op.span.col) == (first + 3, 9)
    (w,) = step.warnings
    assert w.message.startswith("pl.exp is a compute op and cannot run in orchestration code")
    # the region's pl.mul was outlined with it: nothing of the InCore function is reported
    assert sorted(ops(step.after, "exp_beside_a_region_r")) == ["assemble", "mul", "slice"]


# --- check_runnable ------------------------------------------------------------------


@pl.jit.incore
def one_block(x: pl.Tensor[[64, 64], F32], y: pl.Out[pl.Tensor[[64, 64], F32]]):
    y[:, :] = pl.exp(x[:, :])
    return y


@pl.jit
def kernel_in_spmd_body(x: pl.Tensor[[64, 64], F32], y: pl.Out[pl.Tensor[[64, 64], F32]]):
    with pl.spmd(4):
        y = one_block(x, y)  # inside the per-block kernel: the body reads its index
        b = pl.tile.get_block_idx()
    with pl.at(level=pl.Level.HOST, name_hint="host"):
        z = pl.add(x, x)
    return y


def test_check_runnable_finds_kernel_calls_in_kernels_and_host_code():
    step = steps(kernel_in_spmd_body)["check_runnable"]
    assert step.after is step.before  # an analysis: the program is unchanged
    call, host = step.added["refusals"]
    first = kernel_in_spmd_body.fn.__code__.co_firstlineno
    assert (call.kind, call.span.line, call.span.col) == ("scope", first + 3, 13)
    assert call.message.startswith("the InCore kernel one_block is called from inside a "
                                   "kernel (the body of this `with pl.spmd` reads its block")
    assert (host.kind, host.span.line, host.span.col) == ("simulator", first + 5, 5)
    assert "pl.at(level=pl.Level.HOST)" in host.message
    assert [w.message.split(":")[0] for w in step.warnings] == \
        [call.message.split(":")[0], host.message.split(":")[0]]
    # the outlined per-block kernel holds the call (no task of its own)
    (spmd,) = [f for f in step.after.functions if f.attr("region") == "spmd"]
    (c,) = [n for n in walk(spmd.body) if isinstance(n, CallFunc)]
    assert c.func == "one_block" and not c.launch
    # the host-level scope stays in the orchestration function, not a region
    main = step.after.function("kernel_in_spmd_body")
    assert [s.kind for s in main.body if isinstance(s, Scope)] == [ScopeKind.HIERARCHY]


# --- the analyses --------------------------------------------------------------------


@pl.jit
def three_regions(a: pl.Tensor[[64, 64], pl.FP16], b: pl.Tensor[[64, 64], pl.FP16],
                  x: pl.Tensor[[64, 64], F32], c: pl.Out[pl.Tensor[[64, 64], F32]],
                  d: pl.Out[pl.Tensor[[64, 64], F32]], e: pl.Out[pl.Tensor[[64, 64], F32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm"):
        c[:, :] = pl.matmul(a, b, out_dtype=F32)
    for r in pl.parallel(0, 64, 16):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="ex"):
            d[r:r + 16, :] = pl.exp(c[r:r + 16, :])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mixed"):
        e[:, :] = pl.exp(pl.matmul(a, b, out_dtype=F32))
    return c, d, e


@pytest.fixture(scope="module")
def analysed() -> dict[str, Step]:
    return steps(three_regions)


def test_classify_units_assigns_each_region_a_side(analysed):
    step = analysed["classify_units"]
    assert step.after is step.before  # an analysis: the program is returned as it came
    units = step.added["units"]
    assert {k: u.classification for k, u in units.items()} == {
        "three_regions_mm": "cube", "three_regions_ex": "vector", "three_regions_mixed": "mixed"}
    (crossing,) = units["three_regions_mixed"].crossings
    assert crossing.direction == "C->V" and crossing.nbytes == 64 * 64 * 4  # the FP32 result
    assert units["three_regions_mm"].crossings == ()


def test_estimate_buffers_peaks_per_memory_space(analysed):
    step = analysed["estimate_buffers"]
    assert step.after is step.before
    peaks = {k: b.peak for k, b in step.added["buffers"].items()}
    tile16 = 64 * 64 * 2
    # the cube region stages its FP16 operands in L1 (Mat) and accumulates FP32 in L0C
    assert peaks["three_regions_mm"]["Mat"] == 2 * tile16
    assert peaks["three_regions_mm"]["Acc"] == 64 * 64 * 4
    assert peaks["three_regions_mm"]["Vec"] == 0
    # a 16-row FP32 window: the exp result takes its dying operand's place
    assert peaks["three_regions_ex"] == {"Vec": 16 * 64 * 4, "Mat": 0, "Left": 0, "Right": 0,
                                         "Acc": 0}
    # the mixed region also receives the matmul result on the vector side
    assert peaks["three_regions_mixed"]["Vec"] == 64 * 64 * 4


def test_analyze_regions_joins_units_buffers_and_launch_sites(analysed):
    step = analysed["analyze_regions"]
    assert step.after is step.before
    regions = {r.name_hint: r for r in step.added["regions"]}
    assert list(regions) == ["mm", "ex", "mixed"]
    ex = regions["ex"]
    assert (ex.function, ex.parent, ex.kind, ex.classification) == \
        ("three_regions_ex", "three_regions", "at", "vector")
    (loop,) = ex.loop_context
    assert (loop.kind, loop.var, loop.trip_count) == ("parallel", "r", 4)
    assert ex.ub_bytes == analysed["estimate_buffers"].added["buffers"][ex.function].peak["Vec"]
    assert regions["mixed"].pipe is not None and regions["mixed"].pipe.directions == ("C->V",)
    assert regions["mm"].loop_context == () and regions["mm"].pipe is None


def test_derive_task_graph_orders_tasks_by_the_data_they_share(analysed):
    step = analysed["derive_task_graph"]
    assert step.after is step.before
    graph = step.added["task_graph"]
    names = [n.function for n in graph.nodes]
    assert names == ["three_regions_mm", "three_regions_ex", "three_regions_mixed"]
    # ex reads c, which mm writes: one read-after-write edge; mixed shares nothing
    assert [(e.src, e.dst, e.kind, e.tensor) for e in graph.edges] == [(0, 1, "RAW", "c")]
    mm = graph.nodes[0]
    directions = {a.param: a.direction for a in mm.args}
    assert directions == {"c": "OutputExisting", "a": "Input", "b": "Input"}


@pl.jit
def writes_its_input(x: pl.Tensor[[64, 64], F32], y: pl.Out[pl.Tensor[[64, 64], F32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="w",
               optimizations=[pl.cross_core_slot(slot_num=4)]):
        x[:, :] = pl.exp(x[:, :])
        y[:, :] = pl.exp(x[:, :])
    return y


def test_check_region_rules_warns_at_the_offending_source():
    with pytest.warns(PyptoWarning):
        step = steps(writes_its_input)["check_region_rules"]
    assert step.after is step.before
    line = writes_its_input.fn.__code__.co_firstlineno  # the decorator's line
    slot, written = step.warnings
    assert "pl.cross_core_slot(slot_num=4) is ignored" in slot.message
    assert "no cross-core traffic" in slot.message
    assert slot.span.line == line + 3  # the `optimizations=[...]` line
    assert "entry tensor 'x' is written by the kernel" in written.message
    assert "pl.InOut" in written.hint
    assert (written.span.line, written.span.col) == (line + 1, 22)  # the parameter x


# --- halve_split_lanes ---------------------------------------------------------------


@pl.jit
def full_width_lanes(a: pl.Tensor[[64, 128], F32], out: pl.Out[pl.Tensor[[64, 128], F32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="r"):
        for lane in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):
            t = pl.load(a, [0, 0], [64, 128])
            out = pl.store(pl.exp(t), [0, 0], out)
    return out


def test_halve_split_lanes_gives_each_lane_half_the_rows_at_its_offset():
    step = steps(full_width_lanes)["halve_split_lanes"]

    def region_calls(program, op):
        return [n for n in walk(program.function("full_width_lanes_r").body)
                if isinstance(n, Call) and n.op == op]

    (before,) = region_calls(step.before, "load")
    (after,) = region_calls(step.after, "load")
    assert tuple(before.type.shape) == (64, 128) and tuple(after.type.shape) == (32, 128)
    # the lane's rows: offset 0 + lane * 32, on the load and on the store
    for op in ("load", "store"):
        (call,) = region_calls(step.after, op)
        row = call.args[1].items[0]
        assert row.op == "scalar.add" and row.args[1].op == "scalar.mul"
        assert row.args[1].args[0].name == "lane" and row.args[1].args[1].value == 32
    (exp,) = region_calls(step.after, "exp")
    assert tuple(exp.type.shape) == (32, 128)
