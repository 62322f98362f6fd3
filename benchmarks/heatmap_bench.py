"""What the golden-mismatch heatmap costs a `%%pypto` cell, in time and bytes.

One kernel with a 2048x1024 fp32 output whose loop skips the last 32-row tile (so the
heatmap has mismatches to show), run as a `%%pypto` cell the way IPython runs it: the
cell (compile, simulate, compare, report), then its display (`_repr_mimebundle_`, and
the widget views JupyterLab would get over the comm). Two cells are timed back to back,
round-robin: `--run specs golden` (the baseline) and `--run specs golden --show heatmap`.
Output size is what the display sends: the mime bundle (what a saved notebook keeps)
plus the widget state (what JupyterLab receives live). Both plotly modes: `none` (the
tutorials) and the default. BLAS is pinned to one thread.

    python benchmarks/heatmap_bench.py [--rounds N] [--rows R --cols C] [--json out.json]
"""
from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

warnings.filterwarnings("ignore")

CELL = '''
@pl.jit
def tail_skipped(x: pl.Tensor[[ROWS, COLS], pl.FP32],
                 y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    for i in pl.parallel(0, ROWS // TILE - 1):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            y[i * TILE : i * TILE + TILE, :] = pl.exp(x[i * TILE : i * TILE + TILE, :])
    return y
'''


def namespace(rows: int, cols: int) -> dict:
    import numpy as np

    import pypto.language as pl
    from pypto.golden import TensorSpec

    def golden(values):
        values["y"][:] = np.exp(values["x"])

    specs = [TensorSpec("x", [rows, cols], np.float32,
                        init_value=lambda: np.random.default_rng(0).standard_normal(
                            (rows, cols))),
             TensorSpec("y", [rows, cols], np.float32, is_output=True)]
    return {"pl": pl, "np": np, "ROWS": rows, "COLS": cols, "TILE": 32, "specs": specs,
            "golden": golden}


def widget_bytes() -> int:
    """Bytes of every live widget's state (what the comm sends to JupyterLab)."""
    from ipywidgets import Widget
    from ipywidgets.widgets.widget import _remove_buffers

    total = 0
    for w in list(Widget.widgets.values()):
        state, _, buffers = _remove_buffers(w.get_state())
        total += len(json.dumps(state, default=str)) + sum(len(b) for b in buffers)
    return total


def close_widgets() -> None:
    from ipywidgets import Widget

    for w in list(Widget.widgets.values()):
        w.close()


def display_bundles(result: object) -> list[dict]:
    """The outputs IPython makes of the cell's value: one per part when the result
    displays itself part by part (`_ipython_display_`), else its one mime bundle."""
    if hasattr(result, "_ipython_display_") and hasattr(result, "parts"):
        return [p.bundle() for p in result.parts()]
    return [result._repr_mimebundle_()]


class Slot:
    """Stands for the output `%load_ext pypto_lab` opens for plotly.js ("once" mode)."""

    def __init__(self) -> None:
        self.bytes = 0

    def update(self, obj: object) -> None:
        self.bytes = len(obj.data)


def run_cell(ns: dict, show: tuple) -> tuple[float, int, int]:
    """One cell as IPython runs it: seconds, output bytes, widget bytes."""
    from pypto_lab.args import MagicArgs
    from pypto_lab.session import run_cell as run

    close_widgets()
    t0 = time.perf_counter()
    result = run(CELL, MagicArgs(show=show, specs="specs", golden="golden"), dict(ns))
    outputs = display_bundles(result)
    seconds = time.perf_counter() - t0
    assert result.run is not None and not result.run.passed
    return seconds, sum(len(json.dumps(b)) for b in outputs), widget_bytes()


def measure(mode: str, ns: dict, rounds: int) -> dict:
    from pypto_lab.views import set_plotlyjs

    set_plotlyjs(mode)
    from pypto_lab import views

    slot = Slot()
    if "slot" in views._plotlyjs:  # as in a notebook after %load_ext pypto_lab
        views._plotlyjs["slot"] = slot
    base, heat, sizes = [], [], None
    run_cell(ns, ())  # warm the imports
    for _ in range(rounds):
        base.append(run_cell(ns, ())[0])
        t, bundle, widgets = run_cell(ns, ("heatmap",))
        heat.append(t)
        sizes = (bundle, widgets)
    b, h = statistics.median(base), statistics.median(heat)
    return {"mode": mode, "cell_s": round(b, 3), "heatmap_cell_s": round(h, 3),
            "ratio": round(h / b, 2), "bundle_mb": round(sizes[0] / 1e6, 3),
            "widget_mb": round(sizes[1] / 1e6, 3), "plotlyjs_once_mb": round(slot.bytes / 1e6, 3)}


def default_mode() -> str:
    from pypto_lab import views

    return getattr(views, "DEFAULT_PLOTLYJS", "inline")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rows", type=int, default=2048)
    ap.add_argument("--cols", type=int, default=1024)
    ap.add_argument("--json", help="also write the numbers here")
    args = ap.parse_args()
    from IPython.core.interactiveshell import InteractiveShell

    InteractiveShell.instance()  # Output widgets format their contents through it
    ns = namespace(args.rows, args.cols)
    print(f"heatmap cell cost, {args.rows}x{args.cols} fp32 output, median of {args.rounds}")
    print(f"{'plotly mode':<12} {'cell s':>8} {'+heatmap s':>11} {'ratio':>6} "
          f"{'output MB':>10} {'widgets MB':>11} {'plotly.js once MB':>18}")
    rows = []
    for mode in ("none", default_mode()):
        r = measure(mode, ns, args.rounds)
        rows.append(r)
        print(f"{r['mode']:<12} {r['cell_s']:>8.3f} {r['heatmap_cell_s']:>11.3f} "
              f"{r['ratio']:>5.2f}x {r['bundle_mb']:>10.3f} {r['widget_mb']:>11.3f} "
              f"{r.get('plotlyjs_once_mb', 0):>18.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
