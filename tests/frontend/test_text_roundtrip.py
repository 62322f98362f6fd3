"""The printer's text parses back to the same IR: `pl.parse(print_program(p))` is `p`
(structurally, spans aside), and printing that again gives the same text, for every
kernel of tests/, examples/, benchmarks/ and the notebooks, at every stage of the
pipeline (the parsed program and the output of each pass that changes it)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from text_corpus import kernels

import pypto.language as pl
from pypto.compile import CompiledProgram
from pypto.errors import PyptoError
from pypto.ir.equal import assert_structural_equal, structural_equal
from pypto.ir.nodes import Attr, CallFunc, For, Function, If, Program, Scope, ScopeKind, While
from pypto.ir.printer import print_function, print_program
from pypto.ir.transform import walk
from pypto.passes import PassContext, default_pipeline, run_pipeline
from pypto.sim import run_compiled


def _stages(kernel) -> list[tuple[str, Program]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = kernel.compile()
    return [("parsed", compiled.records[0].before)] + \
        [(r.name, r.after) for r in compiled.records if r.changed]


def round_trip(program: Program) -> Program:
    text = print_program(program)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        back = pl.parse(text)
    assert_structural_equal(program, back)
    assert print_program(back) == text, "print -> parse -> print is not a fixed point"
    return back


def test_every_kernel_round_trips_at_every_stage():
    failures, programs, compiled = [], 0, 0
    for name, kernel in kernels().items():
        try:
            stages = _stages(kernel)
        except PyptoError:
            continue  # a kernel that exists to fail (diagnostics tests)
        compiled += 1
        for stage, program in stages:
            programs += 1
            try:
                round_trip(program)
            except (AssertionError, PyptoError) as exc:
                failures.append(f"{name} after {stage}: {str(exc).splitlines()[0]}")
    assert not failures, f"{len(failures)} of {programs} programs:\n" + "\n".join(failures)
    # the corpus must not shrink unnoticed (183 kernels, 560 programs when written)
    assert compiled >= 170 and programs >= 500, (compiled, programs)


def test_the_corpus_includes_the_notebooks():
    names = kernels()
    assert {"notebooks/03_kernel_forms.ipynb:ActProgram",
            "notebooks/05_mixed_cube_vector.ipynb:projection_split",
            "notebooks/04_dynamic_shapes.ipynb:rms_norm"} <= set(names)


# --- what the text form writes, one construct at a time ------------------------------

N = pl.dynamic("N")


@pl.jit
def constructs(x: pl.Tensor[[N, 64], pl.FP32], y: pl.Out[pl.Tensor[[N, 64], pl.FP32]],
               z: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):
    n = pl.tensor.dim(x, 0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="carry",
               optimizations=[pl.cross_core_slot(slot_num=2)]) as tid:
        acc = pl.full([16, 64], pl.FP32, 0.0)
        for i in pl.range(4):
            if i % 2 == 0:  # noqa: SIM108 - a run-time branch of the kernel
                acc = pl.add(acc, x[0:16, :])
            else:
                acc = pl.sub(acc, x[0:16, :])
        for (k, s) in pl.while_(init_values=(0, acc)):
            pl.cond(k < 3)
            s2 = pl.mul(s, 0.5)
            k2, s3 = pl.yield_(k + 1, s2)
        z[:, :] = s3
    for b in pl.spmd(4, name_hint="rows"):
        y[b * 16:b * 16 + 16, :] = pl.exp(x[b * 16:b * 16 + 16, :])
    with pl.spmd(2, deps=[tid]) as t2:
        c = pl.tile.get_block_idx()
        y[c * 16:c * 16 + 16, :] = pl.exp(x[c * 16:c * 16 + 16, :])
    return y, z


def test_loops_ifs_scopes_and_launches_print_as_parseable_pl():
    stages = dict(_stages(constructs))
    parsed = stages["parsed"]
    text = print_program(parsed)
    assert text.startswith("N = pl.dynamic('N')\n")
    assert "with pl.at(level=pl.Level.CORE_GROUP, name_hint='carry', optimizations=" \
           "(pl.cross_core_slot(slot_num=2),)) as tid:" in text
    assert "pl.cond((k < 3))" in text
    assert "for b in pl.spmd(core_num=4, name_hint='rows'):" in text
    assert "with pl.spmd(core_num=2, name_hint='', deps=(tid,)) as t2:" in text
    back = round_trip(parsed)
    spmd = next(n for n in walk(back.entry_function.body) if isinstance(n, Scope)
                and n.kind is ScopeKind.SPMD)
    assert spmd.attr("deps")[0].name == "tid"
    ssa = stages["convert_to_ssa"]
    text = print_program(ssa)
    # if results become the targets of the arms' pl.yield_, loop results of the loop's
    assert text.count("acc__4: pl.Tensor[[16, 64], pl.FP32] = pl.yield_(") == 2
    assert "k2, s3 = pl.yield_((k + 1), s2)" in text
    back = round_trip(ssa)
    (branch,) = [n for n in walk(back.entry_function.body) if isinstance(n, If)]
    assert [r.name for r in branch.results] == ["acc__4"]
    (loop,) = [n for n in walk(back.entry_function.body) if isinstance(n, While)]
    assert [r.name for r in loop.results] == ["k2", "s3"]
    outlined = round_trip(stages["outline_regions"])
    launches = [n for f in outlined.functions for n in walk(f.body)
                if isinstance(n, CallFunc) and n.launch]
    assert [c.launch_attr("kind") for c in launches] == ["at", "spmd", "spmd"]
    assert launches[1].launch_attr("core_num").value == 4
    kernel = outlined.function(launches[0].func)
    assert kernel.attr("name_hint") == "carry" and kernel.attr("parent") == "constructs"


@pl.jit
def tail(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="t"):
        t = pl.slice(x, [64, 64], [0, 0], valid_shape=[48, 64])
        y[0:48, :] = pl.mul(t, 2.0)
    return y


def test_types_keep_valid_shapes_and_typed_literals():
    parsed = dict(_stages(tail))["parsed"]
    text = print_program(parsed)
    assert "pl.Tensor[[64, 64], pl.FP32, pl.TensorView(valid_shape=[48, 64])]" in text
    back = round_trip(parsed)
    t = next(s.targets[0] for s in walk(back.entry_function.body)
             if getattr(s, "targets", None) and s.targets[0].name == "t")
    assert t.type.valid_shape == (48, 64)
    f = pl.parse("@pl.function\ndef f(a: pl.Scalar[pl.INT32]) -> pl.Scalar[pl.INT32]:\n"
                 "    b: pl.Scalar[pl.INT32] = pl.max(a, pl.const(3, pl.INT32))\n"
                 "    return b\n")
    assert "pl.const(3, pl.INT32)" in print_function(f)


def test_undefined_carries_keep_their_type():
    # ConvertToSSA carries a value first defined inside a loop from an undefined
    # placeholder typed as the value; the text writes `None` and declares the type.
    @pl.jit
    def escaping(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(2):
                t = pl.mul(x, 2.0)
            y[:, :] = t
        return y

    ssa = dict(_stages(escaping))["convert_to_ssa"]
    text = print_program(ssa)
    assert "t: pl.Tensor[[64, 64], pl.FP32]\n" in text and "init_values=(None,)" in text
    back = round_trip(ssa)
    loop = next(n for n in walk(back.entry_function.body) if isinstance(n, For))
    assert isinstance(loop.inits[0], Attr) and loop.inits[0].type == loop.iter_args[0].type


# --- structural equality -------------------------------------------------------------


def test_structural_equality_sees_names_types_and_values():
    parsed = dict(_stages(tail))["parsed"]
    back = pl.parse(print_program(parsed))
    assert parsed != back  # dataclass equality compares Var uids
    assert structural_equal(parsed, back)
    text = print_program(parsed)
    for old, new in (("2.0", "3.0"), ("name_hint='t'", "name_hint='u'"),
                     ("[48, 64]", "[32, 64]"), ("pl.mul(", "pl.add(")):
        other = pl.parse(text.replace(old, new, 1))
        assert not structural_equal(parsed, other), old
        with pytest.raises(AssertionError, match=r"IR differs at \.functions"):
            assert_structural_equal(parsed, other)


def test_parse_returns_a_function_or_a_program_as_the_text_holds():
    f = pl.parse("@pl.function\n"
                 "def add_one(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:\n"
                 "    result: pl.Tensor[[64], pl.FP32] = pl.add(x, 1.0)\n"
                 "    return result\n")
    assert isinstance(f, Function) and f.name == "add_one" and len(f.params) == 1
    assert f.returns[0].shape == (64,)
    p = pl.parse(print_program(dict(_stages(tail))["outline_regions"]))
    assert isinstance(p, Program) and p.entry == "tail"
    assert [fn.kind.value for fn in p.functions] == ["Orchestration", "InCore"]


def test_loads_reads_a_file_and_locates_in_it(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text("import pypto.language as pl\n\n" + print_program(
        dict(_stages(tail))["parsed"]) + "\n")
    program = pl.loads(str(path))
    assert program.name == "tail"
    assert program.functions[0].span.file == str(path)
    assert program.functions[0].span.line == 6  # the `def` line, after the decorator
    assert pl.loads_program(str(path)).name == "tail"
    bad = tmp_path / "bad.py"
    bad.write_text("@pl.function\ndef f(x: pl.Tensor[[4], pl.FP32]):\n    y = pl.exp(z)\n")
    with pytest.raises(PyptoError) as info:
        pl.loads(str(bad))
    assert (info.value.span.file, info.value.span.line, info.value.span.col) == \
        (str(bad), 3, 16)
    assert "3 |     y = pl.exp(z)" in str(info.value)


def test_a_program_whose_entry_the_rule_misses_says_so():
    program = dict(_stages(tail))["outline_regions"]
    renamed = Program(program.name, program.functions[::-1], program.entry, program.span)
    assert print_program(renamed).splitlines()[0] == "@pl.program"
    other = Program("other", program.functions, "tail_t", program.span)
    text = print_program(other)
    assert text.splitlines()[0] == "@pl.program(entry='tail_t')"
    assert pl.parse(text).entry == "tail_t"


def test_the_parsed_text_compiles_and_runs_like_the_kernel():
    back = round_trip(dict(_stages(tail))["parsed"])
    ctx = PassContext(platform="a2a3sim")
    final, records = run_pipeline(back, default_pipeline(), ctx)
    assert_structural_equal(final, tail.compile().program)
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    y, y_back = np.zeros_like(x), np.zeros_like(x)
    tail(x, y)
    run_compiled(CompiledProgram(final, records, ctx.analyses, ctx.warnings), (x, y_back), {})
    np.testing.assert_array_equal(y_back[:48], x[:48] * 2)
    np.testing.assert_array_equal(y_back, y)
