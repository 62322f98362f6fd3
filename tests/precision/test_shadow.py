"""The float64 shadow run (issue 34, item 1): every watched value of the kernel against
its float64 shadow, and the first op whose error jumps, named by its line."""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import pypto.language as pl
from pypto.dfx.knobs import split_cli_flags
from pypto.golden import TensorSpec, run_jit
from pypto.golden.runner import shadow_request
from pypto.precision.instrument import COMPUTE, MOVE, instrument, widen
from pypto.precision.shadow import shadow_run

R, C, TR, TC = 128, 128, 64, 64


def _line(fn, marker: str) -> int:
    src = fn.__wrapped__ if hasattr(fn, "__wrapped__") else fn
    lines, first = inspect.getsourcelines(src)
    return first + next(i for i, ln in enumerate(lines) if marker in ln)


@pl.jit
def bf16_exp(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    for r in pl.range(0, R, TR):
        for c in pl.parallel(0, C, TC):
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.cast(x[r:r + TR, c:c + TC], pl.BF16)  # narrow
                y[r:r + TR, c:c + TC] = pl.cast(pl.exp(t), pl.FP32)  # widen
    return y


@pl.jit
def fp32_exp(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    for r in pl.parallel(0, R, TR):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[r:r + TR, :] = pl.exp(pl.mul(x[r:r + TR, :], 0.5))
    return y


@pl.jit
def two_hop(u: pl.Tensor[[32, 32], pl.FP32], y: pl.Out[pl.Tensor[[32, 32], pl.INT8]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.cast(pl.mul(u[0:32, 0:32], 0.37), pl.BF16, mode="rint")  # hop-1
        y[0:32, 0:32] = pl.cast(t, pl.INT8, mode="rint")  # hop-2
    return y


@pl.jit
def tiled_gemm(a: pl.Tensor[[64, 128], pl.BF16], b: pl.Tensor[[128, 64], pl.BF16],
               c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.matmul(a[0:64, 0:64], b[0:64, 0:64], out_dtype=pl.FP32)
        for k in pl.range(64, 128, 64):
            acc = pl.matmul_acc(acc, a[0:64, k:k + 64], b[k:k + 64, 0:64])
        s = pl.row_sum(acc)  # sum
        h = pl.cast(pl.row_expand_sub(acc, s), pl.FP16)  # half
        c[0:64, 0:64] = pl.cast(h, pl.FP32)
    return c


def _x(shape=(R, C), seed=0):
    return (np.random.default_rng(seed).random(shape) * 4 - 2).astype(np.float32)


def test_bf16_cast_is_the_first_divergence():
    x = _x()
    report = shadow_run(bf16_exp.compile(x, np.zeros_like(x)), [x, np.zeros_like(x)])
    first = report.first
    assert first is not None
    assert first.site.op == "cast" and first.site.dtype.name == "BF16"
    assert first.site.span.line == _line(bf16_exp, "# narrow")
    assert first.inherited == 0.0
    # bf16 keeps 8 significant bits: a rel-L2 error around 2**-9 of uniform values
    assert 5e-4 < first.rel_l2 < 4e-3
    # the ladder, in the order the kernel reached the values: load, cast, exp, cast
    assert [(s.site.op, s.site.kind) for s in report.stages] == [
        ("slice", MOVE), ("cast", COMPUTE), ("exp", COMPUTE), ("cast", COMPUTE)]
    load, narrow, exp, widen_back = report.stages
    assert load.rel_l2 == 0.0  # the shadow reads the same inputs
    assert exp.inherited == narrow.rel_l2 and not exp.diverged
    assert widen_back.rel_l2 == exp.rel_l2  # fp32 holds every bf16 exactly
    assert exp.samples == (R // TR) * (C // TC)  # one value per task
    out = report.outputs["y"]
    assert out.rel_l2 == pytest.approx(widen_back.rel_l2, rel=1e-6)
    text = report.text()
    assert f"first divergence: {first.site.where()} cast -> BF16" in text
    assert "rel-L2 = " in text and "diff_thd=1e-03" in text  # error_distribution's lines


def test_first_divergence_names_the_task_as_deps_json_does():
    x = _x()
    cp = bf16_exp.compile(x, np.zeros_like(x))
    report = shadow_run(cp, [x, np.zeros_like(x)])
    first = report.first
    assert first.task_label.startswith("0x") and len(first.task_label) == 18
    assert int(first.task_label, 16) == first.task


def test_an_fp32_kernel_has_no_divergence():
    x = _x()
    report = shadow_run(fp32_exp.compile(x, np.zeros_like(x)), [x, np.zeros_like(x)])
    assert report.first is None
    assert all(s.rel_l2 < 1e-6 for s in report.stages)
    assert "first divergence: none" in report.text()


def test_two_hop_quantisation_diverges_at_the_first_hop():
    u = (np.arange(32 * 32, dtype=np.float32).reshape(32, 32) / 7).astype(np.float32)
    y = np.zeros((32, 32), np.int8)
    report = shadow_run(two_hop.compile(u, y), [u, y])
    assert report.first.site.span.line == _line(two_hop, "# hop-1")
    hop2 = next(s for s in report.stages if s.site.span.line == _line(two_hop, "# hop-2"))
    assert hop2.site.dtype.name == "INT8"
    # the shadow quantises straight from the exact value: the kernel's int8 is off where
    # the bf16 hop moved a value across a rounding boundary
    assert hop2.rel_l2 > 0


def test_probes_leave_the_kernel_bit_identical():
    x = _x()
    cp = bf16_exp.compile(x, np.zeros_like(x))
    plain = np.zeros_like(x)
    cp(x, plain)
    inst = instrument(cp.program)
    probed = np.zeros_like(x)
    import dataclasses
    dataclasses.replace(cp, program=inst.program)(x, probed)
    assert np.array_equal(plain, probed)


def test_widen_makes_every_float_float64_and_keeps_integers():
    u = np.ones((32, 32), np.float32)
    cp = two_hop.compile(u, np.zeros((32, 32), np.int8))
    wide = widen(instrument(cp.program).program)
    from pypto.ir.transform import walk
    from pypto.ir.types import ShapedType
    dts = {n.type.dtype.name for n in walk(wide) if isinstance(getattr(n, "type", None),
                                                               ShapedType)}
    assert "BF16" not in dts and "FP32" not in dts
    assert {"FP64", "INT8"} <= dts


def test_matmul_and_reductions_run_in_float64_in_the_shadow():
    rng = np.random.default_rng(1)
    import ml_dtypes
    a = rng.standard_normal((64, 128)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((128, 64)).astype(ml_dtypes.bfloat16)
    c = np.zeros((64, 64), np.float32)
    report = shadow_run(tiled_gemm.compile(a, b, c), [a, b, c])
    by_op = {s.site.op: s for s in report.stages}
    # the cube accumulates bf16 products in fp32: close to the exact product
    assert by_op["matmul"].rel_l2 < 1e-6 and by_op["matmul_acc"].rel_l2 < 1e-6
    assert report.first.site.span.line == _line(tiled_gemm, "# half")
    assert report.first.site.dtype.name == "FP16"


def _specs():
    return [TensorSpec("x", [R, C], torch.float32,
                       init_value=lambda: torch.from_numpy(_x())),
            TensorSpec("y", [R, C], torch.float32, is_output=True)]


def _golden(v):
    v["y"][:] = torch.exp(v["x"])


def test_harness_runs_the_shadow_when_asked():
    res = run_jit(bf16_exp, _specs(), _golden, rtol=1e-3, atol=1e-3,
                  runtime_cfg={"sim_shadow": "fp64"}, verbose=False)
    assert not res.passed
    assert res.shadow is not None
    assert res.shadow.first.site.span.line == _line(bf16_exp, "# narrow")
    assert "first divergence:" in res.report()
    plain = run_jit(bf16_exp, _specs(), _golden, rtol=1e-3, atol=1e-3, verbose=False)
    assert plain.shadow is None
    # the shadow does not change what the run computed
    assert np.array_equal(plain.outputs["y"].actual, res.outputs["y"].actual)


def test_environment_variable_asks_for_the_shadow(monkeypatch):
    monkeypatch.setenv("PYPTO_SIM_SHADOW", "fp64")
    assert shadow_request({}) == "fp64"
    assert shadow_request({"sim_shadow": None}) == "fp64"
    monkeypatch.delenv("PYPTO_SIM_SHADOW")
    assert shadow_request({}) is None


def test_unknown_shadow_precision_is_refused_with_its_name():
    res = run_jit(bf16_exp, _specs(), _golden, runtime_cfg={"sim_shadow": "fp128"},
                  verbose=False)
    assert not res.passed
    assert "sim_shadow='fp128'" in res.error and "fp64" in res.error


def test_pypto_sim_takes_the_shadow_flag():
    assert split_cli_flags(["--shadow", "fp64", "-p", "x"], "")[1]["runtime"] == \
        {"sim_shadow": "fp64"}
    rest, taken = split_cli_flags(["--shadow", "-p", "x"], "")
    assert taken["runtime"] == {"sim_shadow": "fp64"} and rest == ["-p", "x"]
    assert split_cli_flags(["--shadow=fp64"], "")[1]["runtime"] == {"sim_shadow": "fp64"}
    with pytest.raises(ValueError, match="--shadow takes one of fp64, got 'bf16'"):
        split_cli_flags(["--shadow=bf16"], "")


@pl.jit
def top_scores(x: pl.Tensor[[1, 64], pl.FP32], vals: pl.Out[pl.Tensor[[1, 64], pl.FP32]],
               idx: pl.Out[pl.Tensor[[1, 64], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.mul(x[0:1, 0:64], 3.0)
        pairs = pl.sort32(s, pl.arange(0, [1, 64], dtype=pl.UINT32))  # sort
        pairs = pl.mrgsort(pairs, block_len=64)
        idx[0:1, 0:64] = pl.gather(pairs, mask_pattern=pl.tile.MaskPattern.P1010,
                                   output_dtype=pl.INT32)
        vals[0:1, 0:64] = pl.gather(pairs, mask_pattern=pl.tile.MaskPattern.P0101)
    return vals, idx


def test_ops_on_float_bits_run_in_the_kernels_dtype_in_the_shadow():
    x = np.random.default_rng(3).standard_normal((1, 64)).astype(np.float32)
    vals, idx = np.zeros((1, 64), np.float32), np.zeros((1, 64), np.int32)
    cp = top_scores.compile(x, vals, idx)
    report = shadow_run(cp, [x, vals, idx])
    line = _line(top_scores, "# sort")
    assert any(f":{line} sort32" in i for i in report.islands)
    assert any("mrgsort" in i for i in report.islands)
    # the indices come out of the pairs' bits alike in both runs, the values too
    assert report.outputs["idx"].rel_l2 == 0.0
    assert report.outputs["vals"].rel_l2 == 0.0
    assert report.first is None
    cp(x, vals, idx)
    assert np.array_equal(idx[0], np.argsort(-x[0], kind="stable"))


def test_a_precision_pattern_without_the_shadow_suggests_it():
    res = run_jit(bf16_exp, _specs(), _golden, rtol=1e-3, atol=1e-3, verbose=False)
    assert not res.passed
    assert "hint: the errors are small and spread over the output" in res.report()
    assert "sim_shadow" in res.report()


@pl.jit
def wrong_tile(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    for r in pl.parallel(0, R, TR):
        with pl.at(level=pl.Level.CORE_GROUP):
            y[r:r + TR, :] = pl.exp(x[0:TR, :])  # reads the first rows every time
    return y


def test_an_indexing_bug_gets_no_precision_hint():
    res = run_jit(wrong_tile, _specs(), _golden, rtol=1e-3, atol=1e-3, verbose=False)
    assert not res.passed
    assert "hint: the errors are small" not in res.report()


def test_a_small_memory_budget_compares_the_first_values_and_says_so(monkeypatch):
    x = np.random.default_rng(5).random((512, 512)).astype(np.float32)
    y = np.zeros_like(x)

    @pl.jit
    def big_exp(x: pl.Tensor[[512, 512], pl.FP32], y: pl.Out[pl.Tensor[[512, 512], pl.FP32]]):
        for r in pl.parallel(0, 512, 64):
            for c in pl.parallel(0, 512, 64):
                with pl.at(level=pl.Level.CORE_GROUP):
                    y[r:r + 64, c:c + 64] = pl.cast(pl.exp(pl.cast(x[r:r + 64, c:c + 64],
                                                                   pl.BF16)), pl.FP32)
        return y

    cp = big_exp.compile(x, y)
    whole = shadow_run(cp, [x, y])
    assert all(s.samples == s.reached == 64 for s in whole.stages)
    monkeypatch.setenv("PYPTO_SIM_SHADOW_MIB", "0.25")  # 64 KiB a site: 4 tiles of 16 KiB
    part = shadow_run(cp, [x, y])
    assert all(s.reached == 64 and s.samples == 4 for s in part.stages)
    assert "compared the first 4 of its 64 values" in part.text()
    assert part.first.site.number == whole.first.site.number
