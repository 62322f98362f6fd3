"""Render every workbench view in a real JupyterLab + Chromium and screenshot it.

Usage: python tools/screenshot_views.py [OUTDIR]   (default docs/screenshots)

Writes a notebook that uses each view into a temporary directory, starts JupyterLab
on 127.0.0.1 with a random token, opens the notebook in Debian's chromium through
Playwright (never downloads a browser), runs all cells, checks that plotly drew
SVG and that no cell raised, and saves one PNG per cell output. Needs
`apt-get install chromium` and `pip install playwright jupyterlab`.
"""
from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "lab"))
from lab_cells import BAD, MIXED, PARTIAL  # noqa: E402

CELLS = [
    ("setup", "%load_ext pypto_lab"),
    ("summary_graph", "%%pypto --show graph\n" + MIXED.strip()),
    ("passes", "%%pypto --show passes\n" + MIXED.strip()),
    ("heatmap", "%%pypto --run specs golden --show heatmap\n" + PARTIAL.strip()),
    ("timeline", "%%pypto --run specs golden --show timeline,graph\n" + PARTIAL.strip()),
    ("error", "%%pypto\n" + BAD.strip()),
]
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run"]


def write_notebook(folder: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for _, src in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = folder / "views.ipynb"
    nbformat.write(nb, path)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_lab(folder: Path, port: int, token: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
           "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={folder}", "--LabApp.expose_app_in_browser=True",
           "--ServerApp.port_retries=0", "--allow-root"]
    proc = subprocess.Popen(cmd, cwd=folder, env=env, stdout=subprocess.DEVNULL,
                            stderr=open(folder / "lab.log", "w"))  # noqa: SIM115 - the server logs there while it runs
    url = f"http://127.0.0.1:{port}/api/status?token={token}"
    for _ in range(120):
        try:
            urllib.request.urlopen(url, timeout=1)
            return proc
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise RuntimeError(f"JupyterLab did not start; see {folder / 'lab.log'}")


def shoot(url: str, outdir: Path) -> list[str]:
    from playwright.sync_api import sync_playwright

    problems = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium")
                                    or "/usr/bin/chromium", args=BROWSER_ARGS)
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        page.goto(url)
        page.wait_for_function("window.jupyterapp && window.jupyterapp.shell.currentWidget"
                               " && window.jupyterapp.shell.currentWidget.sessionContext"
                               " && window.jupyterapp.shell.currentWidget.sessionContext"
                               ".session && window.jupyterapp.shell.currentWidget"
                               ".sessionContext.session.kernel", timeout=120_000)
        page.wait_for_function("window.jupyterapp.shell.currentWidget.sessionContext.session"
                               ".kernel.status === 'idle'", timeout=120_000)
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait_for_function(
            f"document.querySelectorAll('.jp-Cell .jp-InputPrompt').length >= {len(CELLS)} &&"
            " [...document.querySelectorAll('.jp-Cell .jp-InputPrompt')].every("
            "e => /\\[\\d+\\]/.test(e.textContent))", timeout=300_000)
        page.wait_for_timeout(4000)
        no_news = page.get_by_role("button", name="No")
        if no_news.count():
            no_news.first.click()
        if page.locator(".js-plotly-plot .main-svg").count() == 0:
            problems.append("no plotly figure drew SVG")
        errors = page.locator('[data-mime-type="application/vnd.jupyter.stderr"]')
        for i in range(errors.count()):
            problems.append("stderr output: " + errors.nth(i).inner_text()[:300])
        cells = page.locator(".jp-Notebook .jp-CodeCell")
        for i, (name, _) in enumerate(CELLS):
            if name == "setup":
                continue
            out = cells.nth(i).locator(".jp-Cell-outputArea").first
            out.scroll_into_view_if_needed()
            page.wait_for_timeout(500)
            out.screenshot(path=str(outdir / f"{name}.png"))
        browser.close()
    return problems


def main() -> int:
    outdir = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "screenshots"
    outdir.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="pypto-lab-shots-"))
    write_notebook(folder)
    port, token = free_port(), secrets.token_hex(16)
    proc = start_lab(folder, port, token)
    try:
        problems = shoot(f"http://127.0.0.1:{port}/lab/tree/views.ipynb?reset&token={token}",
                         outdir)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    for p in problems:
        print("PROBLEM:", p)
    print(f"screenshots in {outdir}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
