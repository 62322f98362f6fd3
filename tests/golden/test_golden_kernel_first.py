"""Issue 12 item 3: a region no task writes is first the kernel's business. The report
says which loop and launches covered which rows, at their source lines, and leads with
the kernel-side fix; the test-side fixes follow, labelled as for a region that really is
don't-care."""
from __future__ import annotations

import numpy as np

import pypto.language as pl
from pypto.golden import TensorSpec, run_jit

ROWS, COLS, TILE = 200, 64, 32


@pl.jit
def skips_the_tail(x: pl.Tensor[[ROWS, COLS], pl.FP32],
                   y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    for i in pl.parallel(0, ROWS // TILE):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            y[i * TILE : i * TILE + TILE, :] = pl.exp(x[i * TILE : i * TILE + TILE, :])
    return y


def _specs():
    return [TensorSpec("x", [ROWS, COLS], np.float32, init_value=lambda: np.ones((ROWS, COLS))),
            TensorSpec("y", [ROWS, COLS], np.float32, is_output=True)]


def _golden(v):
    v["y"][:] = np.exp(v["x"])


def _line(text: str) -> int:
    from pathlib import Path

    src = Path(__file__).read_text().splitlines()
    return next(n for n, ln in enumerate(src, 1) if ln.strip().startswith(text))


def test_the_report_leads_with_the_loop_that_stops_short():
    r = run_jit(skips_the_tail, _specs(), _golden, verbose=False)
    u = r.outputs["y"].unwritten
    loop, launch = _line("for i in pl.parallel"), _line("with pl.at(")
    assert u.kernel == [f"'rows' launched at {__file__}:{launch} in "
                        f"`for i in pl.parallel(0, ROWS // TILE):` ({__file__}:{loop}) ran 6 "
                        "time(s), 32 rows each: rows 0:192 (6 x 32 = 192 < 200)"]
    assert u.kernel_fix.startswith(f"the loop at {__file__}:{loop} stops 8 rows short: let its "
                                   "bound cover rows 192:200 too (1 more iteration(s) of 32)")
    assert "valid_shape" in u.kernel_fix  # 8 of 32: the last tile is partial
    lines = r.outputs["y"].lines()
    # (the report's own "fix" lines: a checkout path may contain "fix" too)
    first_fix = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("fix"))
    assert lines[first_fix - 1].startswith("  kernel: 'rows' launched at")
    assert lines[first_fix].startswith("  fix the kernel: the loop at")
    assert lines[first_fix + 1] == ("  only if that region really is don't-care, fix the test "
                                    "instead:")
    assert lines[first_fix + 2].startswith("    - compare only the written part: ")
    assert "valid_rows=192" in lines[first_fix + 2]


def test_the_test_side_fixes_stay_available_as_data():
    u = run_jit(skips_the_tail, _specs(), _golden, verbose=False).outputs["y"].unwritten
    assert any("valid_rows=192" in f for f in u.fixes)
    assert any("ignore_nan=True" in f for f in u.fixes)


def test_the_heatmap_labels_the_region_with_the_kernel_fix():
    import pytest

    pytest.importorskip("plotly")
    import pypto_lab

    r = run_jit(skips_the_tail, _specs(), _golden, verbose=False)
    fig = pypto_lab.heatmap(r).to_dict()
    label = next(a["text"] for a in fig["layout"]["annotations"]
                 if a.get("name") == "unwritten label")
    assert "stops 8 rows short" in label.replace("<br>", " ")


@pl.jit
def ragged_prefixes(x: pl.Tensor[[4, 64], pl.FP32], y: pl.Out[pl.Tensor[[4, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="short_rows"):
        y[0:2, 0:16] = pl.exp(x[0:2, 0:16])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="long_rows"):
        y[2:4, 0:48] = pl.exp(x[2:4, 0:48])
    return y


def test_a_ragged_region_is_not_called_unwritten_by_every_task():
    # each row writes a prefix of its own length (pypto-lib's decode indexer `score`):
    # the unwritten elements fill no box, and tasks do write inside its bounding box
    specs = [TensorSpec("x", [4, 64], np.float32, init_value=lambda: np.ones((4, 64))),
             TensorSpec("y", [4, 64], np.float32, is_output=True)]
    u = run_jit(ragged_prefixes, specs, _golden, verbose=False).outputs["y"].unwritten
    assert not u.is_box and u.count == 2 * 48 + 2 * 16
    assert u.kernel_fix == ("the launches leave 128 element(s) inside [0:4, 16:64] unwritten: "
                            "make them store those too (a loop bound or a valid_shape that "
                            "stops short), or stop promising them (below)")
