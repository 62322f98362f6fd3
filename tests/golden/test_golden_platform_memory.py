"""What fresh device memory and reads past the end of a tensor do in a harness run.

Fresh memory follows the platform asked for, by the L2 guide's rule ("allocator
residue - often zero on a2a3, garbage or NaN on a2a3sim"): NaN residue on the
simulator platforms and when none is named, zeros on a device platform - where a pass
that rests on those zeros is reported with the region and the fixes. A read past the
end of a tensor does not stop a harness run (the device reads whatever follows): it
is listed in the run's warnings, while the core simulator faults on it by default.
"""
from pathlib import Path

import numpy as np
import pytest
from golden_helpers import needs_sim
from test_golden_unwritten import (
    COLS,
    ROWS,
    VALID,
    double_head,
    golden_full,
    golden_head,
    golden_head_nan_tail,
    specs,
)

import pypto.language as pl
from pypto.errors import SimulationError
from pypto.golden import TensorSpec, ratio_allclose, run_jit
from pypto.golden.sim_options import fresh_memory
from pypto.sim import simulate

pytestmark = needs_sim

SIM = dict(platform="a2a3sim")
DEVICE = dict(platform="a2a3")


@pytest.mark.parametrize("requested, expected", [
    (None, "residue"), ("a2a3", "zero"), ("a5", "zero"),
    ("a2a3sim", "residue"), ("a5sim", "residue")])
def test_fresh_memory_follows_the_platform(requested, expected, monkeypatch):
    monkeypatch.delenv("PYPTO_SIM_UNINIT", raising=False)
    assert fresh_memory(requested) == expected


def test_fresh_memory_overrides(monkeypatch):
    monkeypatch.setenv("PYPTO_SIM_UNINIT", "residue")
    assert fresh_memory("a2a3") == "residue"
    assert fresh_memory("a2a3", {"sim_uninit": "zero"}) == "zero"  # runtime_cfg wins
    monkeypatch.setenv("PYPTO_SIM_UNINIT", "zero")
    assert fresh_memory("a2a3sim") == "zero"  # the explicit zero override


def test_bad_sim_uninit_is_a_failed_run_with_a_message():
    r = run_jit(double_head, specs(), golden_head, verbose=False,
                runtime_cfg=dict(platform="a2a3sim", sim_uninit="zeros"))
    assert not r.passed
    assert r.error == "runtime_cfg sim_uninit must be 'residue' or 'zero', got 'zeros'"


def test_unwritten_tail_passes_on_the_device_with_a_warning(capsys):
    r = run_jit(double_head, specs(), golden_head, runtime_cfg=DEVICE)
    assert r.passed, r.error
    check = r.outputs["y"]
    assert (check.actual[VALID:] == 0).all()
    u = check.zero_fill
    assert u is not None and (u.tail_axis, u.tail_start) == (0, VALID)
    assert u.count == (ROWS - VALID) * COLS
    assert u.fixes[0].startswith("declare 'y' pl.InOut")
    out = capsys.readouterr().out
    assert (f"[RUN]   warning: 'y' passes only because fresh memory on a2a3 reads as "
            f"zeros: {u.count} element(s) indices {VALID}:{ROWS} along axis 0 are never "
            "written (allocator residue: often zero on a2a3, NaN on a2a3sim)") in out
    report = r.report()
    assert "warning: passes only because fresh memory reads as zeros" in report
    assert "so the pass is platform luck" in report
    assert f"valid_rows={VALID}" in report


def test_same_kernel_fails_on_the_simulator_by_the_guides_rule():
    for cfg in (SIM, dict(platform="a5sim"), None):
        r = run_jit(double_head, specs(), golden_head, runtime_cfg=cfg, verbose=False)
        assert not r.passed
        u = r.outputs["y"].unwritten
        assert u.tail_start == VALID and u.golden_zero and u.explains_all
        assert r.outputs["y"].mismatch.nan_actual == (ROWS - VALID) * COLS
        lines = r.outputs["y"].lines()
        assert lines[3] == (f"  unwritten pl.Out region: indices {VALID}:{ROWS} along axis 0, "
                            f"{u.count} element(s) never written (last writer = none); "
                            "every mismatch lies there")
        assert lines[4].startswith("  the golden asserts zeros there, a value the kernel "
                                   "never promised")


def test_explicit_zero_override_on_the_simulator_still_warns():
    r = run_jit(double_head, specs(), golden_head, verbose=False,
                runtime_cfg=dict(platform="a2a3sim", sim_uninit="zero"))
    assert r.passed and r.outputs["y"].zero_fill.tail_start == VALID


def test_no_warning_when_the_comparison_ignores_the_unwritten_part():
    by_rows = run_jit(double_head, specs(), golden_full, runtime_cfg=DEVICE, verbose=False,
                      compare_fn={"y": ratio_allclose(valid_rows=VALID, max_error_ratio=0.0)})
    nan_tail = run_jit(double_head, specs(), golden_head_nan_tail, runtime_cfg=DEVICE,
                       verbose=False,
                       compare_fn={"y": ratio_allclose(ignore_nan=True, max_error_ratio=0.0)})
    for r in (by_rows, nan_tail):
        assert r.passed, r.error
        assert r.outputs["y"].zero_fill is None
        assert "warning" not in r.report()


def test_golden_expecting_values_there_fails_even_with_zero_fill():
    r = run_jit(double_head, specs(), golden_full, runtime_cfg=DEVICE, verbose=False)
    assert not r.passed
    check = r.outputs["y"]
    assert check.mismatch.count == (ROWS - VALID) * COLS and check.mismatch.nan_actual == 0
    assert check.unwritten.source == "last writer = none"


# -- reads past the end of a tensor ----------------------------------------------------

T, WIDE = 8, 16  # an 8-row tensor read as 16-row tiles, as kernels padding T up do
T_DYN = pl.dynamic("T_DYN")  # (a static 8-row window of 16 is a compile-time error)


@pl.jit
def over_read(x: pl.Tensor[[T_DYN, COLS], pl.FP32],
              y: pl.Out[pl.Tensor[[T_DYN, COLS], pl.FP32]]):
    acc = pl.create_tensor([WIDE, COLS], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="wide"):
        t = x[0:WIDE, :]
        acc[0:WIDE, :] = pl.add(t, t)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="narrow"):
        y[0:T, :] = acc[0:T, :]
    return y


@pl.jit
def over_write(x: pl.Tensor[[WIDE, COLS], pl.FP32],
               y: pl.Out[pl.Tensor[[T_DYN, COLS], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="spill"):
        t = x[0:WIDE, :]
        y[0:WIDE, :] = pl.add(t, t)
    return y


READ_LINE = next(i for i, ln in enumerate(Path(__file__).read_text().splitlines(), 1)
                 if ln.strip() == "t = x[0:WIDE, :]")


def _x(rows):
    return np.arange(rows * COLS, dtype=np.float32).reshape(rows, COLS)


def test_core_simulator_faults_on_a_read_past_the_end():
    with pytest.raises(SimulationError) as info:
        simulate(over_read, _x(T), np.zeros((T, COLS), np.float32))
    err = info.value
    assert err.message.startswith(f"out-of-bounds slice: window [0:{WIDE}, 0:{COLS}] of 'x' "
                               f"(shape [{T}, {COLS}]) runs past axis 0 (extent {T})")
    assert err.region.startswith("'wide' (") and err.tensor == "x" and err.block == 0
    assert err.span.line == READ_LINE


def test_warn_mode_reads_fresh_memory_and_records_the_site():
    x = _x(T)
    res = simulate(over_read, x, np.zeros((T, COLS), np.float32), oob_reads="warn")
    assert np.array_equal(res.outputs["y"], x * 2)  # the rows past the end are dropped
    (r,) = res.oob_reads
    assert (r.tensor, r.op, r.window, r.axes, r.region) == (
        "x", "slice", f"[0:{WIDE}, 0:{COLS}]", (0,), "wide")
    assert r.shape == (T, COLS) and r.count == 1
    assert r.line == READ_LINE and r.source.endswith(f"{READ_LINE}:13")
    assert str(r).startswith(f"slice of 'x'[0:{WIDE}, 0:{COLS}] runs past axis 0 of its "
                             f"shape [{T}, {COLS}] in region 'wide'")


def test_warn_mode_still_faults_on_a_write_past_the_end():
    with pytest.raises(SimulationError, match="out-of-bounds"):
        simulate(over_write, _x(WIDE), np.zeros((T, COLS), np.float32), oob_reads="warn")


def test_harness_runs_an_over_reading_kernel_and_warns(capsys):
    specs_ = [TensorSpec("x", [T, COLS], np.float32, init_value=lambda: _x(T)),
              TensorSpec("y", [T, COLS], np.float32, is_output=True)]
    for cfg in (DEVICE, SIM, None):
        r = run_jit(over_read, specs_, lambda v: v["y"].__setitem__(..., v["x"] * 2),
                    runtime_cfg=cfg)
        assert r.passed, r.error
        (w,) = r.warnings
        assert w.startswith(f"read past the end of a tensor: slice of 'x'[0:{WIDE}, 0:{COLS}]")
        assert w.endswith(f"({'zeros' if cfg is DEVICE else 'residue'} here)")
        assert f"warning: {w}" in r.report()
        assert "warning: read past the end of a tensor" in r._repr_html_()
        assert f"[RUN]   warning: {w}" in capsys.readouterr().out


def test_sim_config_rejects_unknown_modes():
    with pytest.raises(ValueError, match=r"SimConfig.oob_reads must be one of 'fault', 'warn'"):
        simulate(over_read, _x(T), np.zeros((T, COLS), np.float32), oob_reads="ignore")


@pl.jit
def double_head_int(x: pl.Tensor[[ROWS, COLS], pl.INT32],
                    y: pl.Out[pl.Tensor[[ROWS, COLS], pl.INT32]]):
    for r in pl.parallel(0, VALID, 16):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="double_rows"):
            t = x[r : r + 16, :]
            y[r : r + 16, :] = pl.add(t, t)
    return y


def test_integer_output_resting_on_zero_fill_is_reported():
    specs_ = [TensorSpec("x", [ROWS, COLS], np.int32,
                         init_value=lambda: np.arange(ROWS * COLS, dtype=np.int32).reshape(
                             ROWS, COLS)),
              TensorSpec("y", [ROWS, COLS], np.int32, is_output=True)]

    def golden(v):
        v["y"][:VALID] = v["x"][:VALID] * 2

    r = run_jit(double_head_int, specs_, golden, runtime_cfg=DEVICE, verbose=False)
    assert r.passed, r.error
    assert r.outputs["y"].zero_fill.count == (ROWS - VALID) * COLS
    strict = run_jit(double_head_int, specs_, golden, verbose=False)
    assert not strict.passed and strict.outputs["y"].unwritten.tail_start == VALID
