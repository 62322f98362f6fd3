"""run_jit's RunResult records the tolerances it compared with (issue 12 follow-up), and
the workbench reads them from it instead of assuming run_jit's defaults."""
from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.golden import TensorSpec, run_jit


@pl.jit
def halve(x: pl.Tensor[[32, 32], pl.FP32], y: pl.Out[pl.Tensor[[32, 32], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="halve"):
        y[0:32, :] = pl.mul(x[0:32, :], 0.5)
    return y


SPECS = [TensorSpec("x", [32, 32], np.float32, init_value=1.0),
         TensorSpec("y", [32, 32], np.float32, is_output=True)]


def off_by_a_little(values):
    values["y"][:] = values["x"] * 0.5 + 1e-4  # inside 1e-3, outside the 1e-5 default


def test_the_result_records_the_tolerances_it_compared_with():
    loose = run_jit(halve, SPECS, off_by_a_little, rtol=1e-3, atol=1e-3, verbose=False)
    strict = run_jit(halve, SPECS, off_by_a_little, verbose=False)
    assert loose.passed and (loose.rtol, loose.atol) == (1e-3, 1e-3)
    assert not strict.passed and (strict.rtol, strict.atol) == (1e-5, 1e-5)


def test_nothing_compared_records_no_tolerance():
    unchecked = run_jit(halve, SPECS, None, rtol=1e-3, verbose=False)
    assert unchecked.passed and not unchecked.validated
    assert unchecked.rtol is None and unchecked.atol is None


def test_the_workbench_report_shows_them():
    lab = pytest.importorskip("pypto_lab")
    from pypto_lab.coerce import run_of

    result = run_jit(halve, SPECS, off_by_a_little, rtol=1e-3, atol=2e-3, verbose=False)
    run = run_of(result)
    out = run.output("y")
    assert (out.rtol, out.atol) == (1e-3, 2e-3)  # not run_jit's defaults
    assert run.report.splitlines()[0].endswith("· compared with rtol=0.001 atol=0.002")
    # the heatmap's title states the same tolerances
    title = lab.heatmap(result).to_dict()["layout"]["title"]["text"]
    assert "failing rtol=0.001 atol=0.002" in title
