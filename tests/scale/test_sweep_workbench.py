"""The sweep in the workbench: the figure, `pypto_lab.sweep`, and `%%pypto --sweep`."""
import pytest

pytest.importorskip("IPython")
pytest.importorskip("plotly")

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from scale_kernels import kernel_source, write

import pypto_lab

CELL = kernel_source(rows=512).split("if __name__")[0].replace(
    "from golden import TensorSpec", "from pypto.golden import TensorSpec") + \
    "\nspecs = build_tensor_specs()\n"


def test_the_figure_names_the_best_tiling(tmp_path):
    view = pypto_lab.sweep(write(tmp_path, "k.py", rows=512), {"TILE": [0, 16, 64, 512]})
    fig = view.figure
    assert fig.layout.title.text == (
        "k.py<br>best feasible tiling: TILE=16 · 0.871 µs (estimate: dependency path, 0.80 µs "
        "launching 32 task(s))")
    bar = fig.data[0]
    assert list(bar.x) == ["0", "16", "64", "512"]
    assert list(bar.text) == ["no compile", "0.871", "1.08", "over budget"]
    assert "bound by the dependency path; launch 0.80 µs of it, 32 task(s)" in bar.hovertext[1]
    r16 = view.result.points[1]
    assert f"UB {r16.ub_use:.0%} of the fullest region's" in bar.hovertext[1]
    assert "ring heap peak 0.0 KiB" in bar.hovertext[1]  # no pl.create_tensor here
    assert "UB" in bar.hovertext[3] and "ring heap" not in bar.hovertext[3]  # not run
    assert bar.marker.color[1] == "#d62728" and bar.marker.color[2] == "#2b7bba"
    assert "<- best" in view.text() and view.result.best.values == {"TILE": 16}


def test_a_grid_is_a_heatmap_with_the_best_cell_outlined(tmp_path):
    f = write(tmp_path, "k.py", rows=512)
    view = pypto_lab.sweep(f, {"TILE": [16, 512], "COLS": [128, 256]})
    grey, heat = view.figure.data
    assert list(heat.x) == ["16", "512"] and list(heat.y) == ["128", "256"]
    assert heat.z[0][0] is not None and heat.z[0][1] is None  # TILE=512 is over budget
    assert grey.text[0][1] == "over budget" and heat.text[0][1] == ""
    (box,) = view.figure.layout.shapes
    best = view.result.best.values
    assert (box.x0, box.y0) == ([16, 512].index(best["TILE"]) - 0.5,
                                [128, 256].index(best["COLS"]) - 0.5)


def test_pypto_magic_sweeps_the_cells_constants():
    ip = InteractiveShell.instance()
    ip.extension_manager.load_extension("pypto_lab")
    r = ip.run_cell_magic("pypto", "--run specs golden_double_rows --sweep TILE=16,48,64", CELL)
    view = r.views[-1]
    assert view.result.best.values == {"TILE": 16}
    assert [p.verdict for p in view.result.points] == ["pass", "fault", "pass"]
    assert view.figure.layout.title.text.startswith("double_rows<br>best feasible tiling: TILE=16")
    with pytest.raises(UsageError, match=r"--sweep needs --run SPECS \[GOLDEN\]"):
        ip.run_cell_magic("pypto", "--sweep TILE=16", CELL)
    with pytest.raises(UsageError, match=r"--sweep: --sweep 'TILE': expected NAME=V1,V2"):
        ip.run_cell_magic("pypto", "--run specs --sweep TILE", CELL)
    with pytest.raises(UsageError, match=r"--sweep: ROWS_TILE: not a module-level constant"):
        ip.run_cell_magic("pypto", "--run specs --sweep ROWS_TILE=1", CELL)


def test_a_sweep_cell_may_use_what_the_notebook_imported():
    """A notebook imports TensorSpec once; a --sweep cell that uses it (and writes its
    constants unpacked) sweeps for real: every point builds its specs and runs."""
    ip = InteractiveShell.instance()
    ip.extension_manager.load_extension("pypto_lab")
    ip.run_cell("import numpy as np\nimport pypto.language as pl\n"
                "from pypto.golden import TensorSpec\n"
                "def golden_twice(v):\n    v['y'][:] = v['x'] * 2\n")
    cell = '''
ROWS, COLS, TILE = 256, 128, 32

@pl.jit
def twice(x: pl.Tensor[[ROWS, COLS], pl.FP32], y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    for r in pl.parallel(0, ROWS, TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="twice"):
            t = x[r : r + TILE, :]
            y[r : r + TILE, :] = pl.add(t, t)
    return y

specs = [TensorSpec("x", [ROWS, COLS], np.float32, init_value=1.0),
         TensorSpec("y", [ROWS, COLS], np.float32, is_output=True)]
'''
    r = ip.run_cell_magic("pypto", "--run specs golden_twice --sweep TILE=16,64", cell)
    points = r.views[-1].result.points
    assert [p.verdict for p in points] == ["pass", "pass"], [p.reason for p in points]
    assert points[0].est_us != points[1].est_us  # TILE really changed between them
