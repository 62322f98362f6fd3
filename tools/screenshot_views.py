"""Run every tutorial in JupyterLab + Debian chromium, in both plotly modes, check that
every figure drew, and screenshot every cell that shows workbench views.

Usage: python tools/screenshot_views.py [OUTDIR] [NOTEBOOK-PREFIX ...]
       (default docs/screenshots; e.g. `... docs/screenshots 02 05` for two tutorials)

Writes OUTDIR/<mode>/<tutorial number>-cell<NN>.png (mode `none`: the tutorials as
committed; `default`: without their `set_plotlyjs("none")`), prints what it found wrong
(the same checks as tests/browser/) and how long each notebook took. Needs
`apt-get install chromium` and the `test` extra (playwright).
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lab_browser import MODES, ROOT, Lab, check_cells, stage_notebooks


def main() -> int:
    outdir = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots"
    only = sys.argv[2:]
    folder = Path(tempfile.mkdtemp(prefix="pypto-lab-shots-"))
    for mode in MODES:
        stage_notebooks(folder, mode)
    problems = []
    t0 = time.perf_counter()
    with Lab(folder) as lab:
        for mode in MODES:
            for nb in sorted((folder / mode).glob("*.ipynb")):
                if only and not any(nb.name.startswith(o) for o in only):
                    continue
                t1 = time.perf_counter()
                cells = lab.run_notebook(f"{mode}/{nb.name}")
                found = check_cells(cells)
                shots = lab.shoot_views(cells, outdir / mode, nb.stem[:2])
                if nb.name.startswith("02"):  # the pooled map, zoomed and clicked
                    found += lab.heatmap_zoom_and_click(outdir / mode)
                lab.shutdown_kernel()
                problems += [f"{mode}/{nb.name}: {p}" for p in found]
                print(f"{mode:<8} {nb.name:<42} {time.perf_counter() - t1:5.1f} s  "
                      f"{len(shots)} screenshot(s)  {len(found)} problem(s)", flush=True)
    for p in problems:
        print("PROBLEM:", p)
    print(f"screenshots in {outdir}; {time.perf_counter() - t0:.0f} s in all")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
