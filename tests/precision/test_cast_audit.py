"""The cast audit (issue 34, item 2): two-hop quantisation and ties-away-vs-even casts,
each named by its line, from the compiled program and the golden."""
from __future__ import annotations

import inspect

import pytest
import torch

import pypto.language as pl
from pypto.golden import TensorSpec, run_jit
from pypto.ir import dtypes as D
from pypto.precision.cast_audit import audit, loses_values

R, C = 32, 32


def _line(fn, marker: str) -> int:
    lines, first = inspect.getsourcelines(fn.__wrapped__ if hasattr(fn, "__wrapped__")
                                          else fn)
    return first + next(i for i, ln in enumerate(lines) if marker in ln)


@pl.jit
def two_hop(u: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.INT8]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.cast(pl.mul(u[0:R, 0:C], 0.37), pl.BF16, mode="rint")  # hop-1
        y[0:R, 0:C] = pl.cast(t, pl.INT8, mode="rint")  # hop-2
    return y


@pl.jit
def one_hop(u: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.INT8]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[0:R, 0:C] = pl.cast(pl.mul(u[0:R, 0:C], 0.37), pl.INT8, mode="rint")
    return y


@pl.jit
def square_bf16(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.BF16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[0:R, 0:C] = pl.cast(pl.mul(x[0:R, 0:C], x[0:R, 0:C]), pl.BF16)  # default-mode
    return y


@pl.jit
def square_bf16_rint(x: pl.Tensor[[R, C], pl.FP32],
                     y: pl.Out[pl.Tensor[[R, C], pl.BF16]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[0:R, 0:C] = pl.cast(pl.mul(x[0:R, 0:C], x[0:R, 0:C]), pl.BF16, mode="rint")
    return y


def _quant_golden(v):
    v["y"][:] = torch.clamp(torch.round(v["u"] * 0.37), -128, 127).to(torch.int8)


def _square_golden(v):
    v["y"][:] = (v["x"] * v["x"]).to(torch.bfloat16)


def _run(kernel, golden, out_dtype, tol=0.0):
    name = "u" if "u" in inspect.signature(kernel.__wrapped__ if hasattr(
        kernel, "__wrapped__") else kernel).parameters else "x"
    specs = [TensorSpec(name, [R, C], torch.float32,
                        init_value=lambda: torch.arange(R * C, dtype=torch.float32
                                                        ).reshape(R, C) / 64 + 1 / 256),
             TensorSpec("y", [R, C], out_dtype, is_output=True)]
    return run_jit(kernel, specs, golden, rtol=tol, atol=tol, verbose=False)


def test_two_hop_quantisation_is_found_with_both_lines():
    res = _run(two_hop, _quant_golden, torch.int8)
    (finding,) = [f for f in res.cast_audit.findings if f.kind == "double-rounding"]
    assert finding.site.span.line == _line(two_hop, "# hop-2")
    assert finding.site.inner.span.line == _line(two_hop, "# hop-1")
    assert "FP32 -> BF16 -> INT8 rounds twice" in finding.message
    assert "quantise straight from FP32" in finding.fix and "pl.INT8" in finding.fix


def test_one_hop_and_widening_chains_are_clean():
    res = _run(one_hop, _quant_golden, torch.int8)
    assert res.cast_audit.findings == ()
    (site,) = res.cast_audit.sites
    assert (site.source, site.target, site.mode) == (D.FP32, D.INT8, "rint")


def test_default_mode_against_a_torch_golden_is_found():
    res = _run(square_bf16, _square_golden, torch.bfloat16)
    (finding,) = res.cast_audit.findings
    assert finding.kind == "ties-away-vs-even"
    assert finding.site.span.line == _line(square_bf16, "# default-mode")
    assert ".to(torch.bfloat16)" in finding.message  # the golden line it read
    assert 'mode="rint"' in finding.fix
    # the report names it when the output fails
    assert not res.passed and "ties away from zero" in res.report()


def test_the_rint_fix_matches_the_golden():
    res = _run(square_bf16_rint, _square_golden, torch.bfloat16)
    assert res.passed and res.cast_audit.findings == ()


@pytest.mark.parametrize("src,dst,lossy", [
    (D.FP32, D.BF16, True), (D.BF16, D.FP32, False), (D.FP16, D.BF16, True),
    (D.BF16, D.FP16, True), (D.INT8, D.FP16, False), (D.INT32, D.FP32, True),
    (D.INT16, D.FP32, False), (D.FP32, D.INT32, True), (D.INT8, D.INT32, False),
    (D.INT32, D.INT8, True), (D.UINT8, D.INT8, True), (D.FP32, D.FP32, False)])
def test_which_conversions_lose_values(src, dst, lossy):
    assert loses_values(src, dst) is lossy


def test_audit_needs_no_run():
    specs = [TensorSpec("u", [R, C], torch.float32),
             TensorSpec("y", [R, C], torch.int8, is_output=True)]
    compiled = run_jit(two_hop, specs, compile_only=True, verbose=False).compiled
    found = audit(compiled.program)
    assert [f.kind for f in found.findings] == ["double-rounding"]
    assert [s.function for s in found.sites] == ["two_hop_at"] * 2


def test_the_shadow_run_counts_the_ties_of_each_cast():
    specs = [TensorSpec("x", [R, C], torch.float32,
                        init_value=lambda: torch.arange(R * C, dtype=torch.float32
                                                        ).reshape(R, C) / 64 + 1 / 256),
             TensorSpec("y", [R, C], torch.bfloat16, is_output=True)]
    res = run_jit(square_bf16, specs, _square_golden, rtol=0, atol=0, verbose=False,
                  runtime_cfg={"sim_shadow": "fp64"})
    # an fp32 value is an exact bf16 tie when its low 16 bits are 0x8000
    import numpy as np
    x = (np.arange(R * C, dtype=np.float32).reshape(R, C) / 64 + np.float32(1 / 256))
    sq = (x * x).astype(np.float32)
    expected = int(np.count_nonzero((sq.view(np.uint32) & 0xFFFF) == 0x8000))
    assert expected > 0
    stage = next(s for s in res.shadow.stages if s.site.converts)
    assert stage.ties == (expected, R * C)
    (finding,) = res.cast_audit.findings
    assert f"in this run {expected} of {R * C} element(s) were exact ties" in finding.message
    # where the kernel and the golden disagree is exactly there
    assert int((res.outputs["y"].actual != res.outputs["y"].expected).sum()) == expected


@pl.jit
def two_hop_nested(u: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.INT8]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[0:R, 0:C] = pl.cast(pl.cast(pl.mul(u[0:R, 0:C], 0.37), pl.BF16, mode="rint"),
                              pl.INT8, mode="rint")  # nested
    return y


def test_the_issue_s_nested_two_hop_is_found_and_the_shadow_blames_the_bf16_hop():
    specs = [TensorSpec("u", [R, C], torch.float32,
                        init_value=lambda: torch.linspace(-300, 300, R * C).reshape(R, C)),
             TensorSpec("y", [R, C], torch.int8, is_output=True)]
    res = run_jit(two_hop_nested, specs, _quant_golden, rtol=0, atol=0, verbose=False,
                  runtime_cfg={"sim_shadow": "fp64"})
    (finding,) = res.cast_audit.findings
    assert finding.kind == "double-rounding"
    assert finding.site.inner.target == D.BF16 and finding.site.target == D.INT8
    assert not res.passed  # some values land one step off
    first = res.shadow.first
    assert first.site.dtype == D.BF16 and first.site.converts
    assert first.site.span.line == _line(two_hop_nested, "# nested") - 1
