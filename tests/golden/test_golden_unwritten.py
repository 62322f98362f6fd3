"""A kernel that leaves the tail of its pl.Out unwritten: the failing run first, then
each of the four fixes the run report proposes, on the real simulator."""
import numpy as np
import pytest
from golden_helpers import needs_sim

import pypto.language as pl
from pypto.golden import TensorSpec, ratio_allclose, run_jit

ROWS, COLS, VALID, TILE = 64, 32, 48, 16

pytestmark = needs_sim


@pl.jit
def double_head(
    x: pl.Tensor[[ROWS, COLS], pl.FP32],
    y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
):
    for r in pl.parallel(0, VALID, TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="double_rows"):
            t = x[r : r + TILE, :]
            y[r : r + TILE, :] = pl.add(t, t)
    return y


@pl.jit
def double_head_inout(
    x: pl.Tensor[[ROWS, COLS], pl.FP32],
    y: pl.InOut[pl.Tensor[[ROWS, COLS], pl.FP32]],
):
    for r in pl.parallel(0, VALID, TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="double_rows"):
            t = x[r : r + TILE, :]
            y[r : r + TILE, :] = pl.add(t, t)
    return y


@pl.jit
def double_head_zero_tail(
    x: pl.Tensor[[ROWS, COLS], pl.FP32],
    y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
):
    for r in pl.parallel(0, VALID, TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="double_rows"):
            t = x[r : r + TILE, :]
            y[r : r + TILE, :] = pl.add(t, t)
    for r in pl.parallel(VALID, ROWS, TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="zero_rows"):
            y[r : r + TILE, :] = pl.full([TILE, COLS], dtype=pl.FP32, value=0.0)
    return y


def specs(inout_zero=False):
    return [TensorSpec("x", [ROWS, COLS], np.float32,
                       init_value=lambda: np.random.default_rng(1).standard_normal((ROWS, COLS))),
            TensorSpec("y", [ROWS, COLS], np.float32, is_output=True,
                       init_value=0.0 if inout_zero else None)]


def golden_full(v):
    v["y"][:] = v["x"] * 2


def golden_head(v):
    v["y"][:VALID] = v["x"][:VALID] * 2  # the tail stays as the golden's zeros


def golden_head_nan_tail(v):
    v["y"][:VALID] = v["x"][:VALID] * 2
    v["y"][VALID:] = np.nan


def test_unwritten_tail_fails_with_a_diagnosis():
    r = run_jit(double_head, specs(), golden_full, verbose=False)
    assert not r.passed
    check = r.outputs["y"]
    assert check.direction == "Out"
    assert check.mismatch.count == (ROWS - VALID) * COLS
    assert check.mismatch.nan_actual == (ROWS - VALID) * COLS
    u = check.unwritten
    assert u is not None and (u.tail_axis, u.tail_start) == (0, VALID)
    assert u.count == (ROWS - VALID) * COLS
    assert u.source in ("last writer = none", "NaN residue")
    text = "\n".join(u.fixes)
    for needle in (f"valid_rows={VALID}", "zero_tail=True", "ignore_nan=True", "pl.InOut"):
        assert needle in text
    assert f"indices {VALID}:{ROWS} along axis 0" in r.report()


def test_golden_zero_tail_suggests_inout_first():
    r = run_jit(double_head, specs(), golden_head, verbose=False)
    assert not r.passed
    assert r.outputs["y"].unwritten.fixes[0].startswith("declare 'y' pl.InOut")


def test_fix_valid_rows():
    cmp = ratio_allclose(valid_rows=VALID, max_error_ratio=0.0)
    r = run_jit(double_head, specs(), golden_full, compare_fn={"y": cmp}, verbose=False)
    assert r.passed, r.error


def test_fix_golden_nan_and_ignore_nan():
    cmp = ratio_allclose(ignore_nan=True, max_error_ratio=0.0)
    r = run_jit(double_head, specs(), golden_head_nan_tail, compare_fn={"y": cmp},
                verbose=False)
    assert r.passed, r.error
    plain = run_jit(double_head, specs(), golden_head_nan_tail, verbose=False)
    assert not plain.passed  # NaN never equals NaN under allclose


def test_fix_inout_with_zero_init():
    r = run_jit(double_head_inout, specs(inout_zero=True), golden_head, verbose=False)
    assert r.passed, r.error
    assert r.outputs["y"].direction == "InOut"


def test_fix_zero_tail():
    cmp = ratio_allclose(valid_rows=VALID, zero_tail=True, max_error_ratio=0.0)
    broken = run_jit(double_head, specs(), golden_full, compare_fn={"y": cmp}, verbose=False)
    assert not broken.passed and "nonzero" in broken.error  # residue is not zero
    r = run_jit(double_head_zero_tail, specs(), golden_full, compare_fn={"y": cmp},
                verbose=False)
    assert r.passed, r.error
    r = run_jit(double_head_inout, specs(inout_zero=True), golden_full, compare_fn={"y": cmp},
                verbose=False)
    assert r.passed, r.error


@pytest.mark.parametrize("direction", ["In"])
def test_result_in_plain_tensor_reads_back_as_zeros(direction, tmp_path):
    import importlib.util

    src = tmp_path / "plain_out.py"
    src.write_text(
        "import pypto.language as pl\n\n\n"
        "@pl.jit\n"
        "def plain(x: pl.Tensor[[16, 16], pl.FP32], y: pl.Tensor[[16, 16], pl.FP32]):\n"
        "    with pl.at(level=pl.Level.CORE_GROUP, name_hint='copy'):\n"
        "        t = x[0:16, :]\n"
        "        y[0:16, :] = pl.add(t, t)\n"
        "    return y\n")
    spec = importlib.util.spec_from_file_location("plain_out", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.warns(Warning, match="declared as an input"):
        mod.plain.compile()
    r = run_jit(mod.plain, [TensorSpec("x", [16, 16], np.float32, init_value=1.0),
                            TensorSpec("y", [16, 16], np.float32, is_output=True)],
                lambda v: v["y"].__setitem__(..., v["x"] * 2), verbose=False)
    assert not r.passed
    check = r.outputs["y"]
    assert check.direction == direction and (check.actual == 0).all()
    assert "never copied back" in check.hints[0]


@pl.program
class DoubleProgram:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
             y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
        for r in pl.parallel(0, ROWS, TILE):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
                t = x[r : r + TILE, :]
                y[r : r + TILE, :] = pl.add(t, t)
        return y


def test_run_with_a_program_class():
    from pypto.golden import run

    r = run(DoubleProgram, specs(), golden_full, verbose=False)
    assert r.passed, r.error
    assert r.name == "DoubleProgram" and r.outputs["y"].direction == "Out"


# A comparator that reads another output's unwritten tail (pypto-lib's
# deepseek_v4_pro/decode_indexer.py: its top-k comparator rejects a non-finite `score`,
# whose tail past the visible length the kernel never writes).

@pl.jit
def head_and_index(
    x: pl.Tensor[[ROWS, COLS], pl.FP32],
    y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
    z: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
):
    for r in pl.parallel(0, VALID, TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="double_rows"):
            t = x[r : r + TILE, :]
            y[r : r + TILE, :] = pl.add(t, t)
    for r in pl.parallel(0, ROWS, TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="copy_rows"):
            z[r : r + TILE, :] = pl.add(x[r : r + TILE, :], 0.0)
    return y, z


def head_and_index_specs():
    return specs() + [TensorSpec("z", [ROWS, COLS], np.float32, is_output=True)]


def golden_y_head_z_copy(v):
    golden_head(v)
    v["z"][:] = v["x"]


def z_needs_finite_y(actual, expected, *, actual_outputs, **_):
    if not np.isfinite(actual_outputs["y"]).all():
        return False, "    actual y contains non-finite value(s)"
    return bool(np.allclose(actual, expected)), "    z differs"


z_needs_finite_y.__name__ = "z_needs_finite_y"
Y_ONLY_HEAD = ratio_allclose(valid_rows=VALID, max_error_ratio=0.0)


def test_a_comparator_failing_only_on_another_outputs_residue_is_diagnosed():
    from pypto.golden.record import summarize

    r = run_jit(head_and_index, head_and_index_specs(), golden_y_head_z_copy, verbose=False,
                compare_fn={"y": Y_ONLY_HEAD, "z": z_needs_finite_y})
    assert not r.passed
    assert r.outputs["y"].passed  # its own comparison looks at the written rows only
    z = r.outputs["z"]
    assert not z.passed and z.unwritten is None  # z itself is fully written
    assert z.through_unwritten == {"y": (ROWS - VALID) * COLS}
    line = ("passes once the never-written elements of 'y' (512 element(s)) hold the "
            "golden's values: the failure is that unwritten pl.Out residue and nothing "
            "else; z_needs_finite_y reads 'y' through actual_outputs")
    assert line in r.report()
    s = summarize(r)
    assert s["verdict"] == "diagnosed"
    assert s["reason"] == ("unwritten pl.Out region: 'z' fails only through the "
                           "never-written elements of 'y'")
    # the record carries the simulator's batching for corpus runs (pypto-sim --json)
    assert s["batch_refusals"] == dict(r.sim.batch_refusals)
    assert s["batch_stats"] == r.sim.batch_stats and sum(s["batch_stats"].values()) >= 1


def test_a_wrong_output_is_not_excused_by_another_outputs_residue():
    from pypto.golden.record import summarize

    def golden_z_off(v):
        golden_y_head_z_copy(v)
        v["z"][0, 0] += 1.0  # z's own written value disagrees: a real failure

    r = run_jit(head_and_index, head_and_index_specs(), golden_z_off, verbose=False,
                compare_fn={"y": Y_ONLY_HEAD, "z": z_needs_finite_y})
    assert r.outputs["z"].through_unwritten == {}
    assert summarize(r)["verdict"] == "fail"


def test_residue_is_the_failure_when_the_rest_is_within_the_comparators_allowance():
    # pypto-lib's expert_routed: `recv_y` rows no expert sends to are never written and a
    # ratio comparator allows a few rounding outliers in the written rows
    from pypto.golden.record import summarize

    def golden_one_outlier(v):
        golden_full(v)
        v["y"][0, 0] += 1.0  # a written element off by more than the tolerance

    cmp = ratio_allclose(max_error_ratio=0.01)
    r = run_jit(double_head, specs(), golden_one_outlier, compare_fn={"y": cmp},
                verbose=False)
    y = r.outputs["y"]
    assert not y.passed and not y.unwritten.explains_all  # [0, 0] is off outside the tail
    assert y.through_unwritten == {"y": (ROWS - VALID) * COLS}
    assert ("its comparison passes once these 512 never-written element(s) hold the "
            "golden's values: the mismatches elsewhere are within its allowance") in r.report()
    assert summarize(r)["reason"] == (
        f"unwritten pl.Out region: 'y' indices {VALID}:{ROWS} along axis 0, 512 element(s) "
        "never written (the mismatches elsewhere within the comparator's allowance)")
    strict = run_jit(double_head, specs(), golden_one_outlier, verbose=False)
    assert summarize(strict)["verdict"] == "fail"  # allclose allows no outlier


@pytest.mark.parametrize("kernel", [double_head, double_head_zero_tail])
def test_never_written_is_the_task_table_at_minus_one_without_keeping_it(kernel):
    import pypto.sim as sim
    from pypto.golden.diagnosis import never_written

    x = np.random.default_rng(2).standard_normal((ROWS, COLS)).astype(np.float32)
    res = sim.simulate(kernel, x, np.zeros((ROWS, COLS), np.float32))
    mask = never_written(res, "y", (ROWS, COLS))
    w = res.trace.writers["y"]
    assert not w._cache  # the diagnosis asked its question without a task table
    expected = np.zeros((ROWS, COLS), bool)
    if kernel is double_head:
        expected[VALID:] = True  # the rows the loop stops short of
    np.testing.assert_array_equal(mask, expected)
    np.testing.assert_array_equal(w.task == -1, expected)  # the table agrees, once made
    np.testing.assert_array_equal(w.never_written(), expected)  # (then read from it)
    assert never_written(res, "y", (ROWS, COLS + 1)) is None  # another shape: no answer
    assert never_written(res, "x", (ROWS, COLS)).all()  # an input no task wrote
