"""Every tutorial in a real browser, in both plotly modes: JupyterLab on 127.0.0.1 (random
port and token) and Debian's headless chromium through Playwright (never a downloaded
browser). Each notebook is opened, its stored outputs cleared and every cell run; then
the DOM must show, for every figure the kernel sent, a plotly plot that drew content
(trace groups, heatmap images, bars), never the figure's text form; no cell may raise
or write to stderr. Each view is screenshot to test-output/browser/<mode>/
(`python tools/screenshot_views.py` writes the same set to docs/screenshots/). Then the
notebook is saved and reopened with a fresh kernel, running nothing: every figure must
show again (a heatmap's live widget by its saved twin, `pypto_lab.views.live_outputs`),
no widget may say "model not found"; those screenshots go to <mode>/reopened/.

Needs `apt-get install chromium` (CI: .ci/run installs it) and playwright from the
`test` extra. Outside CI the test skips when either is missing.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from lab_browser import MODES, Lab, check_cells, chromium_path, stage_notebooks  # noqa: E402

OUT_DIR = ROOT / "test-output" / "browser"
NOTEBOOKS = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
_timings: dict = {}


def _needs_browser() -> None:
    missing = []
    if chromium_path() is None:
        missing.append("chromium (apt-get install -y chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        missing.append("playwright (pip install -e '.[test]')")
    if missing:
        msg = "browser test needs " + " and ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    _needs_browser()
    folder = tmp_path_factory.mktemp("lab")
    for mode in MODES:
        stage_notebooks(folder, mode)
    t0 = time.perf_counter()
    with Lab(folder) as running:
        yield running
    total = time.perf_counter() - t0
    print(f"\nbrowser test: {len(_timings)} notebook runs in {total:.0f} s")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_tutorial_draws_every_figure(lab, mode, name):
    t0 = time.perf_counter()
    cells = lab.run_notebook(f"{mode}/{name}")
    problems = check_cells(cells)
    lab.shoot_views(cells, OUT_DIR / mode, Path(name).stem[:2])
    if name.startswith("01"):
        # the opening cell: region graph, run and heatmap on one 1000 px screen
        problems += lab.first_screen(next(c.index for c in cells if c.heads))
        # %%pypto --sweep: the sweep's bars, drawn, naming the best tiling
        if not any("best feasible tiling: TILE=" in p.title and p.traces
                   for c in cells for p in c.plots):
            problems.append("the --sweep cell drew no sweep figure")
    if name.startswith("02"):
        problems += lab.heatmap_controls_redraw()
        problems += lab.heatmap_zoom_and_click(OUT_DIR / mode)
    # saved and reopened with a new kernel, as a user would the next day: every figure
    # (the heatmaps' live widgets included) must show without running anything
    lab.save_notebook()
    lab.shutdown_kernel()
    reopened = lab.reopen_notebook(f"{mode}/{name}")
    problems += [f"reopened: {p}" for p in check_cells(reopened)]
    problems += reopen_lost(cells, reopened)
    lab.shoot_views(reopened, OUT_DIR / mode / "reopened", Path(name).stem[:2])
    lab.shutdown_kernel()
    _timings[(mode, name)] = time.perf_counter() - t0
    assert not problems, "\n".join(problems)
    assert any(c.plots for c in cells) or name.startswith("04"), "no figure at all"


def reopen_lost(ran: list, reopened: list) -> list[str]:
    """Cells that show fewer figures reopened than when they ran."""
    before = {c.index: len([p for p in c.plots if p.traces]) for c in ran}
    return [f"cell {c.index} ({c.first_line[:50]!r}) drew {before.get(c.index, 0)} figure(s) "
            f"when run, {len([p for p in c.plots if p.traces])} reopened"
            for c in reopened if len([p for p in c.plots if p.traces]) < before.get(c.index, 0)]
