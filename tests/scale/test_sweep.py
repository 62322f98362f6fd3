"""Tile-size sweeps in this process: how constants are rewritten, what each point
reports, and the errors a user sees."""
import importlib.util
import re

import numpy as np
import pytest
from scale_kernels import kernel_source, write

import pypto.language as pl
import pypto.sim as sim
from pypto.scale.constants import ConstantError, harness_tolerances, with_constants
from pypto.scale.estimate import estimate
from pypto.scale.sweep import grid_points, sweep

SOURCE = """A = 4
B: int = 8  # tile
N_TILES = 64 // B
x = (
    16
)
def f():
    return A
"""


def test_constants_are_rewritten_in_place():
    out, missing = with_constants(SOURCE, {"B": 32, "A": -2, "C": 1})
    assert out.splitlines()[:3] == ["A = -2", "B: int = 32  # tile", "N_TILES = 64 // B"]
    assert len(out.splitlines()) == len(SOURCE.splitlines())  # diagnostics keep their lines
    assert missing == {"C": 1}
    ns: dict = {}
    exec(out, ns)
    assert ns["N_TILES"] == 2  # derived constants follow
    with pytest.raises(ConstantError, match=r"B=True: a tiling constant takes a number"):
        with_constants(SOURCE, {"B": True})


def test_unpacked_constants_are_rewritten_too():
    # the way a notebook cell often writes them; a sweep of TILE must change TILE
    out, missing = with_constants("ROWS, COLS, TILE = 1024, 128, 32\n(P, (Q, R)) = 1, (2, f())\n",
                                  {"TILE": 8, "Q": 5})
    assert out.splitlines() == ["ROWS, COLS, TILE = 1024, 128, 8", "(P, (Q, R)) = 1, (5, f())"]
    assert missing == {}
    # unpacking from anything but a literal of the same length binds no known constant
    assert with_constants("A, B = pair\n", {"A": 1})[1] == {"A": 1}


def test_tolerances_come_from_the_files_own_harness_call():
    assert harness_tolerances(kernel_source()) == {"rtol": 1e-5, "atol": 1e-5}
    assert harness_tolerances("run_jit(f, s, g, rtol=1e-3, atol=2e-3)") == {
        "rtol": 1e-3, "atol": 2e-3}


def test_grid_points_and_bad_grids():
    assert grid_points({"M": [1, 2], "K": [3]}) == [{"M": 1, "K": 3}, {"M": 2, "K": 3}]
    with pytest.raises(ValueError, match="K: no values to sweep"):
        grid_points({"M": [1], "K": []})


def test_sweep_a_file_in_process(tmp_path):
    f = write(tmp_path, "sw.py", rows=512)
    seen = []
    result = sweep(f, {"TILE": [0, 16, 48, 64, 512]}, client=None, on_point=seen.append)
    assert len(seen) == 5 and result.where == "this process"
    by = {p.values["TILE"]: p for p in result.points}
    assert (by[0].compiles, by[0].fits, by[0].matches) == (False, None, None)
    assert by[0].reason.startswith("PyptoSyntaxError: error[E001]: loop step must not be 0")
    assert by[512].verdict == "over budget"
    assert by[512].reason == "over the on-chip budget: double_rows: Vec"
    assert by[48].verdict == "fault" and by[48].matches is False
    assert [p.values["TILE"] for p in result.feasible] == [16, 64]
    # one wave each (32 and 8 tasks on 48 AIV cores): the path is one task plus its
    # launch, and a 16-row task does a quarter of a 64-row one's work
    for t, tasks in ((16, 32), (64, 8)):
        e = by[t].estimate
        assert (e.bound, e.tasks, e.launch_us) == ("dependency path", tasks, 0.8)
    assert by[16].est_us - 0.8 == pytest.approx((by[64].est_us - 0.8) / 4, rel=0.05)
    assert by[16].est_us_serial == pytest.approx(by[64].est_us_serial, rel=0.05)
    assert result.best is by[16]
    table = result.table().splitlines()
    (best_row,) = [row for row in table if "<- best" in row]
    assert best_row.split()[0] == "16" and "best feasible tiling: TILE=16" in table[-1]
    assert "bound by the dependency path, 0.80 us of it launching 32 task(s)" in table[-1]
    assert "tasks launch us        bound by" in table[0]
    # per point, the on-chip and ring use the verdicts rest on (issue 28 item 3)
    assert " UB " in table[0] and " heap " in table[0]
    assert by[512].ub_use > 1 and 0 < by[16].ub_use < by[64].ub_use < 1
    assert by[64].ub_use == pytest.approx(4 * by[16].ub_use)
    assert by[16].heap_peak is not None and by[0].heap_peak is None
    row16 = next(row for row in table if row.split()[:1] == ["16"])
    assert f"{by[16].ub_use:5.0%}".strip() in row16
    # TILE=0's whole compile error is there, wrapped under the note column, not cut
    first = next(i for i, row in enumerate(table) if row.split()[:1] == ["0"])
    note_col = table[first].index("PyptoSyntaxError")
    wrapped = [table[first][note_col:]]
    for row in table[first + 1:]:
        if row[:note_col].strip():
            break
        wrapped.append(row[note_col:])
    assert " ".join(wrapped) == " ".join(by[0].reason.split())
    assert result.to_dict()["best"] == {"TILE": 16}


def test_sweep_a_golden_that_fails_and_a_kernel_object(tmp_path):
    f = write(tmp_path, "wrong.py", factor=3)
    spec = importlib.util.spec_from_file_location("wrong_mod", f)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    result = sweep(mod.double_rows, {"TILE": [32, 64]}, specs=mod.build_tensor_specs,
                   golden=mod.golden_double_rows)
    assert [p.verdict for p in result.points] == ["fail", "fail"]
    assert re.match(r"'y' 327\d\d/32768 mismatched", result.points[0].reason)
    assert result.best is None and "no feasible tiling" in result.summary()


def test_sweep_errors_name_what_was_given(tmp_path):
    f = write(tmp_path, "k.py")
    with pytest.raises(ConstantError, match=r"M_TILE: not a module-level constant of .*k\.py "
                                             r"\(its constants: COLS, FACTOR, PAUSE, ROWS, TILE\)"):
        sweep(f, {"M_TILE": [1]})
    with pytest.raises(ValueError, match=r"sweep: cannot read .*none\.py"):
        sweep(tmp_path / "none.py", {"TILE": [1]})
    result = sweep(f, {"TILE": [32]}, kernel="nope")
    assert result.points[0].verdict == "compile error"
    assert "no kernel named 'nope'" in result.points[0].reason


def _rows_kernel(rows: int, tile: int):
    @pl.jit
    def rows_k(x: pl.Tensor[[rows, 64], pl.FP32], y: pl.Out[pl.Tensor[[rows, 64], pl.FP32]]):
        for i in pl.parallel(0, rows, tile):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
                y[i:i + tile, :] = pl.mul(x[i:i + tile, :], 2.0)
        return y

    x = np.ones((rows, 64), np.float32)
    return sim.simulate(rows_k, x, np.zeros_like(x), checks=()).trace


def test_the_launch_cost_decides_between_many_small_tasks_and_few_large_ones():
    small, large = _rows_kernel(2048, 8), _rows_kernel(2048, 64)  # 256 and 32 tasks
    # with no launch cost the smallest tile wins (the work spreads over the cores) ...
    assert estimate(small, launch_us=0).makespan_us < estimate(large, launch_us=0).makespan_us
    # ... with the platform's, 256 launches on 48 cores cost more than one wave of 32
    e_small, e_large = estimate(small), estimate(large)
    assert e_large.makespan_us < e_small.makespan_us
    assert (e_small.bound, e_small.tasks) == ("vector work", 256)
    assert e_small.launch_us == pytest.approx(0.8 * 256 / 48)
    assert (e_large.bound, e_large.launch_us) == ("dependency path", 0.8)
