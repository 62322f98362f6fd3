"""Write the tutorial notebooks under notebooks/ (and optionally execute them in place).

Usage:
    python tools/build_notebooks.py            # write notebooks/*.ipynb (no outputs)
    python tools/build_notebooks.py --execute  # ... then run each one with nbconvert so it
                                               # is committed with its outputs

The notebooks are generated from this file so that their text stays reviewable as Python.
Conventions (see notebooks/README.md):

* every notebook runs top to bottom on the simulator in a few seconds;
* cells tagged `nbval-check-output` print deterministic text; nbval (`--nbval-lax`,
  the README's test command) compares them with the stored output after the
  substitutions in notebooks/nbval_sanitize.cfg; every other cell only has to run;
* the first code cell calls `pypto_lab.set_plotlyjs("none")`: figures are stored as
  plotly's own JSON (drawn by JupyterLab and VS Code) instead of inlining plotly.js.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tutorials.cells import CHECK, notebook  # noqa: F401
from tutorials.nb1 import NB1
from tutorials.nb2 import NB2
from tutorials.nb3 import NB3
from tutorials.nb4 import NB4
from tutorials.nb5 import NB5
from tutorials.nb6 import NB6
from tutorials.nb7 import NB7
from tutorials.nb8 import NB8
from tutorials.nb9 import NB9
from tutorials.nb10 import NB10
from tutorials.nb11 import NB11

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"


NOTEBOOKS = {
    "01_first_kernel.ipynb": NB1,
    "02_outputs_and_unwritten_regions.ipynb": NB2,
    "03_kernel_forms.ipynb": NB3,
    "04_dynamic_shapes.ipynb": NB4,
    "05_mixed_cube_vector.ipynb": NB5,
    "06_spmd_parallel_and_deps.ipynb": NB6,
    "07_pypto_lib_kernel_files.ipynb": NB7,
    "08_two_ranks.ipynb": NB8,
    "09_debugging_a_dependency.ipynb": NB9,
    "10_will_it_fit.ipynb": NB10,
    "11_precision.ipynb": NB11,
}


def write_all(names: list[str]) -> list[Path]:
    out = []
    for name in names:
        path = NB_DIR / name
        nbformat.validate(notebook(NOTEBOOKS[name]))
        nbformat.write(notebook(NOTEBOOKS[name]), path)
        out.append(path)
    return out


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
TWIN_CLASS = "pypto-twin-rule"  # pypto_lab.views.TWIN_CLASS (tools/ does not import it)


def execute(path: Path) -> None:
    """Run the notebook in place, then drop what would only bloat or churn the file:
    widget views and their saved state (a heatmap's widget state is megabytes, and its
    model id changes on every run). An interactive view's live output and the rule that
    chose between it and its saved twin go with them (`pypto_lab.views.live_outputs`):
    the twin, which every frontend draws without a kernel, stays."""
    # this interpreter's bin first: `jupyter` finds its subcommands and the kernel on
    # PATH, which may hold another installation (an unactivated venv)
    bins = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = dict(os.environ, PYTHONHASHSEED="0", PATH=bins)
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook",
                    "--execute", "--inplace", "--ExecutePreprocessor.timeout=300",
                    "--ExecutePreprocessor.record_timing=False",
                    "--ExecutePreprocessor.store_widget_state=False",
                    str(path)], check=True, env=env, cwd=path.parent)
    nb = nbformat.read(path, as_version=4)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if "outputs" in cell:
            cell.outputs = [o for o in cell.outputs if not _live_only(o)]
    nbformat.write(nb, path)


def _live_only(out: dict) -> bool:
    """A widget's own output, or the CSS rule between a live form and its twin."""
    data = out.get("data", {})
    if WIDGET_VIEW in data:
        if set(data) - {WIDGET_VIEW, "text/plain"} or data.get("text/plain"):
            raise ValueError("a widget output that also carries a form of its own: "
                             f"{sorted(data)}")
        return True
    return TWIN_CLASS in data.get("text/html", "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--execute", action="store_true", help="run each notebook in place")
    ap.add_argument("names", nargs="*", help="notebook file names (default: all)")
    args = ap.parse_args()
    names = args.names or list(NOTEBOOKS)
    for path in write_all(names):
        print("wrote", path.relative_to(ROOT))
        if args.execute:
            execute(path)
            print("  executed, size", path.stat().st_size, "bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
