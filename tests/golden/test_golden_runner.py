"""run_jit / run plumbing against a stand-in simulator (see conftest.fake_kernel)."""
import ml_dtypes
import numpy as np
import pytest

from pypto.golden import RunResult, ScalarSpec, TensorSpec, ratio_allclose, run, run_jit

BF16 = np.dtype(ml_dtypes.bfloat16)


def scale_body(rows=None):
    def body(d):
        n = rows if rows is not None else d["x"].shape[0]
        d["y"][:n] = d["x"][:n] * 2 + d["a"]
    return body


def scale_specs(dtype=np.float32):
    return [TensorSpec("x", [8, 4], dtype, init_value=lambda: np.arange(32).reshape(8, 4)),
            ScalarSpec("a", np.float32, 1.0),
            TensorSpec("y", [8, 4], dtype, is_output=True)]


def scale_golden(v):
    v["y"][:] = v["x"] * 2 + v["a"]


def test_pass(fake_kernel, capsys):
    k = fake_kernel("scale", [("x", "In"), ("a", "In"), ("y", "Out")], scale_body())
    r = run_jit(k, scale_specs(), scale_golden)
    assert r.passed and r.error is None and r.validated
    assert str(r).startswith("PASS (")
    out = capsys.readouterr().out
    assert "[RUN] PASS" in out and "'y' PASS" in out
    check = r.outputs["y"]
    assert check.direction == "Out" and check.passed
    np.testing.assert_array_equal(check.actual, check.expected)
    assert "PASS scale" in r.report() and "<table>" in r._repr_html_()


def test_unwritten_out_tail_is_diagnosed(fake_kernel):
    k = fake_kernel("scale", [("x", "In"), ("a", "In"), ("y", "Out")], scale_body(rows=6))
    r = run_jit(k, scale_specs(), scale_golden, verbose=False)
    assert not r.passed and str(r).startswith("FAIL: Output(s) does not match golden: ['y']")
    c = r.outputs["y"]
    assert c.mismatch.count == 8 and c.mismatch.nan_actual == 8
    assert c.mismatch.first_bad[0] == (6, 0)
    u = c.unwritten
    assert (u.tail_axis, u.tail_start, u.count, u.source) == (0, 6, 8, "NaN residue")
    assert "valid_rows=6" in u.fixes[0]
    assert any("ignore_nan=True" in f for f in u.fixes)
    assert any("pl.InOut" in f for f in u.fixes)
    assert "unwritten pl.Out region: indices 6:8 along axis 0" in r.error


def test_golden_zero_region_puts_inout_first(fake_kernel):
    def body(d):
        d["y"][:, :2] = d["x"][:, :2]

    def golden(v):
        v["y"][:, :2] = v["x"][:, :2]  # the rest stays zero

    k = fake_kernel("k", [("x", "In"), ("y", "Out")], body)
    specs = [TensorSpec("x", [4, 4], np.float32, init_value=1.0),
             TensorSpec("y", [4, 4], np.float32, is_output=True)]
    r = run_jit(k, specs, golden, verbose=False)
    u = r.outputs["y"].unwritten
    assert (u.tail_axis, u.tail_start) == (1, 2) and u.golden_zero
    assert u.fixes[0].startswith("declare 'y' pl.InOut")
    assert "valid_axis=1" in u.fixes[1]


def test_int_out_residue_without_trace(fake_kernel):
    def body(d):
        d["y"][:2] = 1

    k = fake_kernel("k", [("y", "Out")], body)
    r = run_jit(k, [TensorSpec("y", [4], np.int32, is_output=True)],
                lambda v: v["y"].__setitem__(slice(None), 1), verbose=False)
    assert not r.passed and r.outputs["y"].mismatch.count == 2


def test_inout_uploads_init_value(fake_kernel):
    def body(d):
        d["s"][:] += 1

    k = fake_kernel("acc", [("s", "InOut")], body)
    spec = TensorSpec("s", [3], np.float32, init_value=5.0, is_output=True)
    r = run_jit(k, [spec], lambda v: v["s"].__iadd__(1), verbose=False)
    assert r.passed and r.outputs["s"].actual.tolist() == [6, 6, 6]


def test_written_plain_in_reads_back_as_zeros(fake_kernel):
    k = fake_kernel("scale", [("x", "In"), ("a", "In"), ("y", "In")], scale_body())
    r = run_jit(k, scale_specs(), scale_golden, verbose=False)
    assert not r.passed
    c = r.outputs["y"]
    assert (c.actual == 0).all() and c.unwritten is None
    assert "plain pl.Tensor parameter (In)" in c.hints[0]


def test_out_with_state_init_hint(fake_kernel):
    k = fake_kernel("acc", [("s", "Out")], lambda d: d["s"].__setitem__(slice(None), 1))
    spec = TensorSpec("s", [3], np.float32, init_value=5.0, is_output=True)
    r = run_jit(k, [spec], lambda v: v["s"].__iadd__(1), verbose=False)
    assert not r.passed and "init_value is not uploaded" in r.outputs["s"].hints[0]


def test_specs_must_match_parameters(fake_kernel):
    k = fake_kernel("scale", [("x", "In"), ("a", "In"), ("y", "Out")], scale_body())
    specs = scale_specs()
    r = run_jit(k, [specs[0], specs[2], specs[1]], scale_golden, verbose=False)
    assert not r.passed and "different order" in r.error
    r = run_jit(k, specs[:2], scale_golden, verbose=False)
    assert not r.passed and "2 specs for 3 parameters" in r.error


def test_no_golden_skips_validation(fake_kernel, capsys):
    k = fake_kernel("scale", [("x", "In"), ("a", "In"), ("y", "Out")], scale_body(rows=1))
    r = run_jit(k, scale_specs())
    assert r.passed and not r.validated
    assert "validation skipped" in capsys.readouterr().out


def test_compile_only_and_runtime_dir(fake_kernel, tmp_path):
    k = fake_kernel("scale", [("x", "In"), ("a", "In"), ("y", "Out")], scale_body())
    r = run_jit(k, scale_specs(), scale_golden, compile_only=True, verbose=False)
    assert r.passed and k.calls == 0
    r = run_jit(k, scale_specs(), scale_golden, compile_only=True, runtime_dir=str(tmp_path))
    assert not r.passed and "incompatible" in r.error
    r = run_jit(k, scale_specs(), scale_golden, runtime_dir=str(tmp_path / "nope"))
    assert not r.passed and "does not exist" in r.error
    r = run_jit(k, scale_specs(), scale_golden, runtime_dir=str(tmp_path), verbose=False)
    assert r.passed and r.work_dir == tmp_path


def test_accepts_pypto_lib_keywords(fake_kernel, capsys):
    k = fake_kernel("scale", [("x", "In"), ("a", "In"), ("y", "Out")], scale_body())
    r = run(k, scale_specs(), scale_golden,
            compile_cfg=dict(dump_passes=True, distributed_config=None),
            runtime_cfg=dict(platform="a2a3", device_id=3, enable_chip_swimlane=1,
                             enable_dep_gen=True, enable_pmu=0, enable_scope_stats=True,
                             enable_dump_args=False, log_level="info", ring_heap=1 << 20),
            rtol=1e-3, atol=1e-3, benchmark=True)
    assert r.passed and r.platform == "a2a3sim"
    out = capsys.readouterr().out
    assert "a2a3 runs on its simulator twin a2a3sim" in out
    with pytest.raises(ValueError, match="unknown platform"):
        run_jit(k, scale_specs(), scale_golden, runtime_cfg=dict(platform="gpu"))


def test_compare_fn_sees_inputs_and_scalars(fake_kernel):
    seen = {}

    def cmp(actual, expected, *, actual_outputs, expected_outputs, inputs, rtol, atol):
        seen.update(inputs)
        return True, ""

    k = fake_kernel("scale", [("x", "In"), ("a", "In"), ("y", "Out")], scale_body())
    assert run_jit(k, scale_specs(), scale_golden, compare_fn={"y": cmp}, verbose=False).passed
    assert set(seen) == {"x", "a"} and float(seen["a"]) == 1.0 and seen["a"].ndim == 0


def test_ratio_allclose_valid_rows_fixes_the_tail(fake_kernel):
    k = fake_kernel("scale", [("x", "In"), ("a", "In"), ("y", "Out")], scale_body(rows=6))
    cmp = ratio_allclose(valid_rows=6, max_error_ratio=0.0)
    assert run_jit(k, scale_specs(), scale_golden, compare_fn={"y": cmp}, verbose=False).passed


def test_golden_sees_copies(fake_kernel):
    k = fake_kernel("scale", [("x", "In"), ("a", "In"), ("y", "Out")], scale_body())

    def golden(v):
        scale_golden(v)
        v["x"][:] = -1  # must not leak into the kernel's inputs

    r = run_jit(k, scale_specs(), golden, verbose=False)
    assert r.passed


# -- save / replay ----------------------------------------------------------------------------


def test_save_then_replay(fake_kernel, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    k = fake_kernel("scale", [("x", "In"), ("a", "In"), ("y", "Out")], scale_body())
    specs = [TensorSpec("x", [8, 4], BF16, init_value=np.random.randn),
             ScalarSpec("a", np.float32, 0.5),
             TensorSpec("y", [8, 4], BF16, is_output=True)]
    first = run_jit(k, specs, scale_golden, save_data=True, verbose=False)
    assert first.passed
    data = first.work_dir / "data"
    assert sorted(p.name for p in (data / "in").iterdir()) == ["a.npy", "x.npy"]
    assert [p.name for p in (data / "out").iterdir()] == ["y.npy"]

    def must_not_run(v):
        raise AssertionError("golden_fn must not run on replay")

    again = run_jit(k, specs, must_not_run, golden_data=str(data), verbose=False)
    assert again.passed
    np.testing.assert_array_equal(again.outputs["y"].expected.view(np.uint16),
                                  first.outputs["y"].expected.view(np.uint16))
    assert again.outputs["y"].expected.dtype == BF16


def test_replay_detects_missing_files(fake_kernel, tmp_path):
    k = fake_kernel("scale", [("x", "In"), ("a", "In"), ("y", "Out")], scale_body())
    (tmp_path / "in").mkdir()
    np.save(tmp_path / "in" / "x.npy", np.zeros((8, 4), np.float32))
    r = run_jit(k, scale_specs(), scale_golden, golden_data=str(tmp_path), verbose=False)
    assert not r.passed and "missing files" in r.error
    assert "a.npy" in r.error and "y.npy" in r.error and "x.npy" not in r.error


def test_replay_inout_needs_both_sides(fake_kernel, tmp_path):
    k = fake_kernel("acc", [("s", "InOut")], lambda d: d["s"].__iadd__(1))
    spec = TensorSpec("s", [3], np.float32, init_value=5.0, is_output=True)
    run_jit(k, [spec], lambda v: v["s"].__iadd__(1), save_data=True, verbose=False,
            compile_cfg=dict(output_dir=str(tmp_path)))
    assert (tmp_path / "data" / "in" / "s.npy").is_file()
    assert (tmp_path / "data" / "out" / "s.npy").is_file()
    (tmp_path / "data" / "in" / "s.npy").unlink()
    r = run_jit(k, [spec], None, golden_data=str(tmp_path / "data"), verbose=False)
    assert not r.passed and "in/s" in r.error


def test_replay_rejects_bad_scalar(fake_kernel, tmp_path):
    k = fake_kernel("scale", [("x", "In"), ("a", "In"), ("y", "Out")], scale_body())
    for sub in ("in", "out"):
        (tmp_path / sub).mkdir()
    np.save(tmp_path / "in" / "x.npy", np.zeros((8, 4), np.float32))
    np.save(tmp_path / "in" / "a.npy", np.zeros(2, np.float32))
    np.save(tmp_path / "out" / "y.npy", np.zeros((8, 4), np.float32))
    r = run_jit(k, scale_specs(), None, golden_data=str(tmp_path), verbose=False)
    assert not r.passed and "0-dim" in r.error


def test_runresult_str():
    assert str(RunResult(True, execution_time=1.234)) == "PASS (1.23s)"
    assert str(RunResult(False, error="boom", execution_time=0.5)) == "FAIL: boom (0.50s)"
    assert str(RunResult(False)) == "FAIL"


def test_numpy_runs_never_import_torch(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    here = Path(__file__).parent
    script = f"""
import sys
sys.path.insert(0, {str(here)!r})
import numpy as np
import pypto.golden.runner as runner
from golden_helpers import FakeCompiled, fake_simulate
from pypto.golden import TensorSpec, run_jit, ratio_allclose, error_distribution
runner._simulate = fake_simulate
k = FakeCompiled("k", [("x", "In"), ("y", "Out")], lambda d: d["y"].__setitem__(..., d["x"]))
specs = [TensorSpec("x", [4], "bfloat16", init_value=np.random.randn),
         TensorSpec("y", [4], "bfloat16", is_output=True)]
r = run_jit(k, specs, lambda v: v["y"].__setitem__(..., v["x"]), save_data=True,
            compare_fn={{"y": ratio_allclose()}}, verbose=False,
            compile_cfg=dict(output_dir={str(tmp_path)!r}))
assert r.passed, r.error
assert "torch" not in sys.modules, "torch was imported"
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_sim_checks_from_environment(monkeypatch):
    from pypto.golden.sim_options import sim_checks

    monkeypatch.delenv("PYPTO_SIM_CHECKS", raising=False)
    assert sim_checks() is None
    monkeypatch.setenv("PYPTO_SIM_CHECKS", "oob")
    assert sim_checks() == ("oob",)
    monkeypatch.setenv("PYPTO_SIM_CHECKS", "oob, ub")
    assert sim_checks() == ("oob", "ub")
    monkeypatch.setenv("PYPTO_SIM_CHECKS", "none")
    assert sim_checks() == ()


def test_unwritten_slices_are_listed(fake_kernel):
    def body(d):
        d["kv"][2:, 0, :] = 1.0  # only rows (2,0) and (3,0) are written

    k = fake_kernel("k", [("kv", "Out")], body)
    spec = TensorSpec("kv", [4, 2, 8], np.float32, is_output=True)
    r = run_jit(k, [spec], lambda v: v["kv"].__setitem__((slice(2, None), 0), 1.0),
                verbose=False)
    u = r.outputs["kv"].unwritten
    assert u.slice_rank == 2 and u.slice_count == 6 and u.golden_zero
    assert "6 of 8 slices [0, 0, :] [0, 1, :]" in r.report()
    assert u.fixes[0].startswith("declare 'kv' pl.InOut")


def test_sim_options_from_environment(monkeypatch):
    from pypto.golden.sim_options import sim_options

    monkeypatch.delenv("PYPTO_SIM_CHECKS", raising=False)
    monkeypatch.delenv("PYPTO_SIM_UNINIT", raising=False)
    assert sim_options() == {}
    monkeypatch.setenv("PYPTO_SIM_UNINIT", "zero")
    monkeypatch.setenv("PYPTO_SIM_CHECKS", "oob")
    assert sim_options() == {"uninit": "zero", "checks": ("oob",)}
    monkeypatch.setenv("PYPTO_SIM_UNINIT", "garbage")
    with pytest.raises(ValueError):
        sim_options()


def test_custom_comparator_failing_on_its_own_terms_is_not_contradicted(fake_kernel):
    # every element is allclose, but the comparator's own rule (here: a sum) rejects it;
    # the report shows its text and no "0/32 mismatched" line
    k = fake_kernel("scale", [("x", "In"), ("a", "In"), ("y", "Out")], scale_body())

    def total_must_be_odd(actual, expected, **kw):
        return float(np.sum(actual)) % 2 == 1, "sum of y is even (want odd)"

    r = run_jit(k, scale_specs(), scale_golden, compare_fn={"y": total_must_be_odd},
                verbose=False)
    assert not r.passed
    check = r.outputs["y"]
    assert check.mismatch is None and check.unwritten is None
    assert "sum of y is even (want odd)" in r.report()
    assert "mismatched" not in r.report()
