"""The README's first command opens the first tutorial in JupyterLab, and that tutorial
shows the workbench at once: its first code cell after the set-up defines, runs and
draws a kernel (region graph, run, heatmap). The terminal check runs."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]


def _commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    setup = text[text.index("## Set-up: two commands"):]
    return re.findall(r"```bash\n(.+?)\n```", setup)


def test_the_main_command_installs_the_lab_and_opens_the_first_tutorial():
    main = _commands()[0]
    install, open_ = main.split(" && ")
    assert install == "python -m pip install -e '.[lab]'"
    assert open_ == "python -m jupyterlab notebooks/01_first_kernel.ipynb"
    assert (ROOT / "notebooks" / "01_first_kernel.ipynb").exists()
    pyproject = (ROOT / "pyproject.toml").read_text()
    lab = re.search(r"^lab = \[(.*)\]$", pyproject, re.M).group(1)
    assert '"jupyterlab' in lab and '"plotly' in lab and '"ipywidgets' in lab


def test_the_first_tutorial_opens_on_a_run_with_graph_and_heatmap():
    nb = nbformat.read(ROOT / "notebooks" / "01_first_kernel.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    first = code[1]
    assert nb.cells.index(first) <= 3, "within the first screen: title, set-up, this cell"
    assert first.source.startswith("%%pypto --run specs golden --show graph,heatmap")
    assert len(first.source.splitlines()) <= 24
    heads = [line for o in first.outputs for line in
             "".join(o.get("data", {}).get("text/plain", "")).splitlines()
             if line.startswith("<")]
    assert any(h.startswith("<region graph scaled_exp") for h in heads)
    assert any(h.startswith("<heatmap scaled_exp.y") for h in heads)
    report = "".join("".join(o.get("data", {}).get("text/plain", "")) for o in first.outputs)
    assert "PASS scaled_exp on a2a3sim" in report


def test_the_terminal_check_prints_the_difference_from_numpy():
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "softmax.py")],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    assert re.fullmatch(r"max \|y - numpy\| = [0-9.e+-]+\n", out)
    assert float(out.split("=")[1]) < 1e-6
