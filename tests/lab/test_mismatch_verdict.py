"""The mismatch heatmap draws the comparator's own element verdict (issue 34, item 3):
the red cells are exactly the elements the harness's comparator failed, a pooled cell is
marked when any element of its block fails and counts them, and a comparator that only
judges the whole output is said to, not second-guessed."""
from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.golden import TensorSpec, run_jit
from pypto.golden.comparators import topk_pair_compare
from pypto.golden.report import OutputCheck
from pypto.golden.validation import ElementRule, ratio_allclose, ratio_reldiff
from pypto_lab.figures.heatmap import heatmap_figure
from pypto_lab.figures.mismatch import ERROR, OK, metrics_for, pool
from pypto_lab.figures.style import ERROR_SCALE, PASS_COLOR
from pypto_lab.figures.typed import decode
from pypto_lab.runs import LabOutput, from_run_result

R, C, TR = 256, 128, 32


@pl.jit
def bf16_exp(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    for i in pl.parallel(0, R // TR):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="tile"):
            t = pl.cast(x[i * TR:i * TR + TR, :], pl.BF16)
            y[i * TR:i * TR + TR, :] = pl.cast(pl.exp(t), pl.FP32)
    return y


def _run(compare_fn=None, rtol=1e-3, atol=1e-3):
    specs = [TensorSpec("x", [R, C], np.float32, init_value=lambda: np.random.default_rng(
                 0).standard_normal((R, C))),
             TensorSpec("y", [R, C], np.float32, is_output=True)]

    def golden(v):
        v["y"][:] = np.exp(v["x"])

    res = run_jit(bf16_exp, specs, golden, rtol=rtol, atol=atol, verbose=False,
                  compare_fn={"y": compare_fn} if compare_fn else None)
    return res, from_run_result(res, "bf16_exp", "a2a3sim", rtol, atol).output("y")


@pytest.mark.parametrize("cmp", [None, ratio_allclose(atol=1e-3, rtol=1e-3,
                                                      max_error_ratio=0.01),
                                 ratio_reldiff(diff_thd=0.004, pct_thd=0.01)],
                         ids=["allclose", "ratio_allclose", "ratio_reldiff"])
def test_red_cells_are_the_comparators_failing_elements(cmp):
    res, out = _run(cmp)
    assert not res.passed
    rule = cmp if cmp is not None else None
    want = ElementRule(rule, 1e-3, 1e-3).verdict(out.actual, out.expected)
    assert want is not None and 0 < want.sum() < want.size
    full = pool(out, max_side=R)  # one cell per element
    assert not full.pooled
    np.testing.assert_array_equal(full.status != OK, want)
    # pooled: a cell is marked iff one of its elements fails, and counts them
    p = pool(out, max_side=16)
    assert (p.fy, p.fx) == (16, 8)
    blocks = want.reshape(R // 16, 16, C // 8, 8).sum(axis=(1, 3))
    np.testing.assert_array_equal(p.bad, blocks)
    np.testing.assert_array_equal(p.status != OK, blocks > 0)
    fig = heatmap_figure(out, max_side=16)
    z = decode(next(t for t in fig["data"] if t.get("name") == "error")["z"])
    np.testing.assert_array_equal(np.isfinite(z), blocks > 0)
    label = "rtol=0.001 atol=0.001" if cmp is None else cmp.__name__[:40]  # long: cut
    assert f"{int(want.sum())}/{R * C} failing {label}" in fig["layout"]["title"]["text"]


def test_ratio_reldiff_marks_other_cells_than_allclose():
    """The bug the issue names: under ratio_reldiff the map used allclose's rule."""
    cmp = ratio_reldiff(diff_thd=0.004, pct_thd=0.01)
    _, out = _run(cmp)
    theirs = cmp.bad_mask(out.actual, out.expected, 1e-3, 1e-3)
    allclose = ElementRule(None, 1e-3, 1e-3).verdict(out.actual, out.expected)
    assert (theirs != allclose).any()
    np.testing.assert_array_equal(out.failing(), theirs)


def _topk_output():
    """Indices of a top-4 over 6 rows: row 1 swaps two equal scores (legal), row 4 picks
    a worse candidate (its values break the descending order)."""
    expected = np.tile(np.arange(4, dtype=np.int32), (6, 1))
    actual = expected.copy()
    vals = np.tile(np.array([9.0, 7.0, 5.0, 3.0], np.float32), (6, 1))
    actual[1, [1, 2]] = [2, 1]
    vals[1, [1, 2]] = [6.0, 6.0]
    actual[4, 2] = 9
    vals[4, 2] = 8.0  # above its left neighbour 7: order broken at [4,1] and [4,2]
    cmp = topk_pair_compare("vals")
    ok, _ = cmp(actual, expected, actual_outputs={"vals": vals})
    check = OutputCheck("idx", bool(ok), cmp.__name__, "", actual, expected,
                        rule=ElementRule(cmp, 1e-5, 1e-5, {"vals": vals, "idx": actual}))
    return LabOutput("idx", actual, expected, bool(ok), check=check)


def test_topk_pairs_fail_only_where_the_order_breaks():
    out = _topk_output()
    assert not out.passed
    want = np.zeros((6, 4), bool)
    want[4, 2] = True  # the only position whose index differs and breaks the order
    np.testing.assert_array_equal(out.failing(), want)
    p = pool(out)
    assert p.status[4, 2] == ERROR and (p.status != OK).sum() == 1
    assert "tol" not in metrics_for(out)  # a pairing has no threshold to divide by
    assert "tol" in metrics_for(_run()[1])


def test_error_over_tolerance_metric():
    _, out = _run()
    p = pool(out, "tol", max_side=R)
    ratio = out.error_ratio()
    failing = out.failing()
    assert (ratio[failing] > 1).all() and (ratio[~failing] <= 1).all()
    np.testing.assert_allclose(p.value[failing], ratio[failing], rtol=1e-6)
    fig = heatmap_figure(out, "tol", max_side=R)
    z = decode(next(t for t in fig["data"] if t.get("name") == "error")["z"])
    assert np.nanmin(z) > 0  # log10 of ratios above the threshold


def test_count_metric_is_the_pooled_verdict():
    _, out = _run()
    p = pool(out, "count", max_side=16)
    np.testing.assert_array_equal(np.where(p.bad > 0, p.bad, -1), p.value)


def test_a_whole_output_comparator_is_said_not_second_guessed():
    def strict(actual, expected, **_):
        return False, "    the sum is off"

    _, out = _run(strict)
    assert out.failing() is None
    fig = heatmap_figure(out, max_side=16)
    title = fig["layout"]["title"]["text"]
    assert "judges the output as a whole (FAIL): no element verdict" in title
    z = decode(next(t for t in fig["data"] if t.get("name") == "error")["z"])
    assert np.isfinite(z).all()  # the metric everywhere, no element called passing


def test_the_lightest_error_colour_is_far_from_the_pass_grey():
    def rgb(c):
        return np.array([int(c[i:i + 2], 16) for i in (1, 3, 5)], float)

    lightest = ERROR_SCALE[0][1]
    assert np.abs(rgb(lightest) - rgb(PASS_COLOR)).max() >= 96
