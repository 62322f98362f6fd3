"""A tutorial in a real browser: JupyterLab on 127.0.0.1 (random port and token), the
notebook opened in Debian's headless chromium through Playwright (never a downloaded
browser), outputs cleared, all cells run; then DOM checks that plotly drew its figures
and the ipywidgets rendered and respond, and a full-page screenshot in test-output/browser/.

Needs `apt-get install chromium` (CI: .ci/run installs it) and playwright from the
`test` extra. Outside CI the test skips when either is missing.
"""
from __future__ import annotations

import os
import secrets
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
from screenshot_views import BROWSER_ARGS, free_port, start_lab  # noqa: E402

NOTEBOOK = "02_outputs_and_unwritten_regions.ipynb"
OUT_DIR = ROOT / "test-output" / "browser"


def _chromium() -> str:
    exe = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists()
                                       else None)
    missing = []
    if exe is None:
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
    return exe


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    chromium = _chromium()
    folder = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", folder, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    # JupyterLab 4 renders only the cells near the viewport by default; render them all
    # so the DOM checks see every output
    settings = tmp_path_factory.mktemp("lab-settings")
    tracker = settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text('{"windowingMode": "none"}')
    port, token = free_port(), secrets.token_hex(16)
    saved = os.environ.get("JUPYTERLAB_SETTINGS_DIR")
    os.environ["JUPYTERLAB_SETTINGS_DIR"] = str(settings)
    try:
        proc = start_lab(folder, port, token)
    finally:
        if saved is None:
            os.environ.pop("JUPYTERLAB_SETTINGS_DIR")
        else:
            os.environ["JUPYTERLAB_SETTINGS_DIR"] = saved
    try:
        yield chromium, f"http://127.0.0.1:{port}/lab/tree/{NOTEBOOK}?reset&token={token}", folder
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except Exception:  # noqa: BLE001 - make sure the server goes away
            proc.kill()


_APP_READY = ("window.jupyterapp && window.jupyterapp.shell.currentWidget"
              " && window.jupyterapp.shell.currentWidget.sessionContext"
              " && window.jupyterapp.shell.currentWidget.sessionContext.session"
              " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
              " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
              " === 'idle'")
_ALL_RAN = ("(() => { const nb = window.jupyterapp.shell.currentWidget;"
            " const cells = [...nb.content.widgets].filter(c => c.model.type === 'code');"
            " return cells.length > 0 && cells.every(c => c.model.executionCount)"
            " && nb.sessionContext.session.kernel.status === 'idle'; })()")
_ERRORS = ("(() => { const out = []; const nb = window.jupyterapp.shell.currentWidget;"
           " for (const c of nb.content.widgets) { if (c.model.type !== 'code') continue;"
           " const o = c.model.outputs; for (let j = 0; j < o.length; j++) {"
           " const m = o.get(j); if (m.type === 'error') out.push(m.toJSON().ename + ': '"
           " + m.toJSON().evalue); } } return out; })()")


def test_tutorial_renders_figures_and_widgets(lab):
    from playwright.sync_api import sync_playwright

    chromium, url, folder = lab
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=BROWSER_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 1000})
            page.goto(url)
            page.wait_for_function(_APP_READY, timeout=90_000)
            # drop the committed outputs so every check below sees fresh ones
            page.evaluate("window.jupyterapp.commands.execute("
                          "'notebook:clear-all-cell-outputs')")
            page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length === 0")
            page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
            page.wait_for_function(_ALL_RAN, timeout=120_000)
            assert page.evaluate(_ERRORS) == []

            # plotly drew the heatmaps (inside the widget views' Output areas)
            page.wait_for_function(
                "document.querySelectorAll('.js-plotly-plot .main-svg').length >= 2",
                timeout=30_000)
            heatmap = page.locator(".js-plotly-plot").first
            assert heatmap.locator(".heatmaplayer, .hm, image").count() > 0
            # the heatmap widget's controls rendered
            assert page.locator(".jupyter-widgets.widget-dropdown select").count() >= 2
            buttons = page.locator(".widget-toggle-buttons button")
            assert buttons.count() >= 3

            # and respond: switching the metric redraws that figure (replacing it)
            plots = page.locator(".js-plotly-plot").count()
            page.locator(".widget-toggle-buttons").first.get_by_role(
                "button", name="rel").click()
            page.wait_for_function(
                "n => { const t = [...document.querySelectorAll('.js-plotly-plot .gtitle')];"
                " return t.length === n && t[0].textContent.includes('relative error'); }",
                arg=plots, timeout=30_000)
            page.wait_for_timeout(1000)
            assert page.locator(".js-plotly-plot").count() == plots, "redraw replaces the figure"

            no_news = page.get_by_role("button", name="No")
            if no_news.count():
                no_news.first.click()
            heatmap.scroll_into_view_if_needed()
            page.wait_for_timeout(500)
            page.screenshot(path=str(OUT_DIR / "tutorial_02.png"), full_page=True)
            heatmap.screenshot(path=str(OUT_DIR / "tutorial_02_heatmap.png"))
        finally:
            browser.close()
    assert (OUT_DIR / "tutorial_02.png").stat().st_size > 10_000
