"""Drive the tutorials in a real JupyterLab + Debian chromium (Playwright), as a user would.

`Lab(folder)` starts JupyterLab on 127.0.0.1 (random port and token, every cell rendered:
no virtual scrolling) and one headless chromium. `lab.run_notebook(name)` opens a
notebook, clears its stored outputs, runs every cell, waits until the figures are drawn,
and returns one `CellReport` per code cell: what the kernel sent (the figure headers of
its text form, its error outputs) and what the page shows (plotly plots and how much each
drew, figure text fallbacks on screen). `lab.shoot(...)` screenshots cell outputs.

Used by tests/browser/ and tools/screenshot_views.py. Needs `apt-get install chromium` and
the `test` extra (playwright). Never downloads a browser.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run",
                "--disable-quic"]
MODES = ("none", "default")
"""`none`: the tutorials as committed (`set_plotlyjs("none")`); `default`: the same
notebooks with that line removed (plotly.js inlined in the HTML twin)."""
#: The first line of a figure's text form: `<region graph k: 7 traces>`.
FIGURE_HEAD = re.compile(r"^<[^<>\n]+: \d+ traces>$", re.M)


def chromium_path() -> str | None:
    exe = shutil.which("chromium")
    if exe is None and Path("/usr/bin/chromium").exists():
        exe = "/usr/bin/chromium"
    return exe


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_lab(folder: Path, port: int, token: str, settings: Path | None = None
              ) -> subprocess.Popen:
    """JupyterLab serving `folder`; returns once its REST API answers."""
    # this interpreter's bin first: `jupyter` finds `jupyter-lab` and the kernel on PATH
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = dict(os.environ, PATH=path,
               PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    if settings is not None:
        env["JUPYTERLAB_SETTINGS_DIR"] = str(settings)
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
           "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={folder}", "--LabApp.expose_app_in_browser=True",
           "--ServerApp.port_retries=0", "--allow-root", "--LabApp.news_url=None",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    log = open(folder / "lab.log", "w")  # noqa: SIM115 - lives as long as the server
    proc = subprocess.Popen(cmd, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=log)
    url = f"http://127.0.0.1:{port}/api/status?token={token}"
    for _ in range(240):
        if proc.poll() is not None:
            break
        try:
            urllib.request.urlopen(url, timeout=1)
            return proc
        except OSError:
            time.sleep(0.25)
    proc.terminate()
    raise RuntimeError(f"JupyterLab did not start; see {folder / 'lab.log'}")


def stage_notebooks(folder: Path, mode: str) -> Path:
    """Copy notebooks/ into `folder/mode`; in `default` mode drop the tutorials'
    `set_plotlyjs("none")` so figures carry their plotly.js HTML twin, as for a user
    who never calls it."""
    dest = folder / mode
    shutil.copytree(ROOT / "notebooks", dest, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    if mode == "default":
        for path in dest.glob("*.ipynb"):
            nb = json.loads(path.read_text())
            for cell in nb["cells"]:
                src = "".join(cell["source"]) if isinstance(cell["source"], list) \
                    else cell["source"]
                if 'set_plotlyjs("none")' in src:
                    cell["source"] = re.sub(r'^.*set_plotlyjs\("none"\).*\n?', "", src,
                                            flags=re.M)
            path.write_text(json.dumps(nb))
    return dest


@dataclass
class PlotInfo:
    traces: int
    """Drawn trace groups (`g.trace`, heatmap images, bars, points)."""
    width: int
    height: int
    title: str = ""


@dataclass
class CellReport:
    index: int
    source: str
    heads: list[str]
    """Figure headers in the cell's text outputs: one per figure the kernel sent."""
    plots: list[PlotInfo]
    errors: list[str]
    stderr: list[str]
    text_fallbacks: list[str] = field(default_factory=list)
    """Figure text forms visible on the page (a figure drawn as text)."""
    broken: list[str] = field(default_factory=list)
    """Widget outputs on screen that did not draw ("Error displaying widget: model not
    found", "Loading widget...")."""

    @property
    def first_line(self) -> str:
        return self.source.splitlines()[0] if self.source else ""


_READY = ("(() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
          " const k = w && w.sessionContext && w.sessionContext.session"
          " && w.sessionContext.session.kernel; return !!k && k.status === 'idle'; })()")
_ALL_RAN = ("(() => { const nb = window.jupyterapp.shell.currentWidget;"
            " const cells = [...nb.content.widgets].filter(c => c.model.type === 'code');"
            " return cells.length > 0 && cells.every(c => c.model.executionCount)"
            " && nb.sessionContext.session.kernel.status === 'idle'; })()")
# Per code cell: its source, the text/plain and stderr of its outputs, its errors, and
# what the DOM shows: every plotly plot with the number of drawn trace groups, and every
# text output that is a figure's text form.
_COLLECT = r"""
(() => {
  const nb = window.jupyterapp.shell.currentWidget;
  const out = [];
  [...nb.content.widgets].forEach((c, i) => {
    if (c.model.type !== 'code') return;
    const texts = [], errors = [], stderr = [];
    const o = c.model.outputs;
    for (let j = 0; j < o.length; j++) {
      const m = o.get(j).toJSON();
      if (m.output_type === 'error') errors.push(m.ename + ': ' + m.evalue);
      else if (m.output_type === 'stream' && m.name === 'stderr') stderr.push(m.text);
      else if (m.data && m.data['text/plain']) texts.push([].concat(m.data['text/plain']).join(''));
    }
    // what is on screen: a saved twin hidden while its live form draws is not counted
    const shown = e => e.getClientRects().length > 0;
    // a plotly output reopened from a saved notebook: JupyterLab shows the PNG it
    // stored beside the figure and builds the plot only on hover; a static twin (the
    // heatmap's) is an SVG image
    const snapshots = [...c.node.querySelectorAll('.jp-RenderedPlotly > img.plot-img, ' +
                                                  '.jp-RenderedSVG img')]
      .filter(e => shown(e) && e.naturalWidth > 0 && !e.parentNode.querySelector('.js-plotly-plot'))
      .map(e => ({traces: 1, width: e.width, height: e.height,
                  title: e.classList.contains('plot-img') ? '(stored image)' : '(static SVG)'}));
    const plots = [...c.node.querySelectorAll('.js-plotly-plot, .pypto-static-figure')]
      .filter(shown).map(p => {
      const svg = p.querySelector('.main-svg') ||
        (p.classList.contains('pypto-static-figure') ? p : null);
      const r = p.getBoundingClientRect();
      const drawn = p.querySelectorAll('g.trace, .heatmaplayer image, .hm image, g.point, ' +
                                       'g.imagelayer image').length;
      const t = p.querySelector('.gtitle');
      return {traces: svg ? drawn : 0, width: Math.round(r.width), height: Math.round(r.height),
              title: t ? t.textContent : ''};
    });
    plots.push(...snapshots);
    const fallbacks = [...c.node.querySelectorAll('.jp-OutputArea-output')]
      .filter(e => e.dataset.mimeType !== 'application/vnd.jupyter.stdout' && shown(e))
      .map(e => e.textContent).filter(t => /^<[^<>\n]+: \d+ traces>/m.test(t));
    const broken = [...c.node.querySelectorAll('.jp-OutputArea-output')].filter(shown)
      .map(e => e.textContent).filter(t => /^(Error displaying widget|Loading widget)/.test(t));
    out.push({index: i, source: c.model.sharedModel.getSource(), texts, errors, stderr,
              plots, fallbacks, broken});
  });
  return out;
})()
"""


class Lab:
    """One JupyterLab server and one headless chromium page, for many notebooks."""

    def __init__(self, folder: Path, viewport: tuple[int, int] = (1300, 1000)):
        from playwright.sync_api import sync_playwright

        exe = chromium_path()
        if exe is None:
            raise RuntimeError("needs Debian's chromium: apt-get install -y chromium")
        self.folder = folder
        settings = folder / ".lab-settings"
        tracker = settings / "@jupyterlab" / "notebook-extension" / \
            "tracker.jupyterlab-settings"
        tracker.parent.mkdir(parents=True, exist_ok=True)
        # render every cell (JupyterLab 4 only renders those near the viewport by default)
        tracker.write_text('{"windowingMode": "none"}')
        news = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
        news.parent.mkdir(parents=True, exist_ok=True)
        news.write_text('{"fetchNews": "false", "checkForUpdates": false}')
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.proc = start_lab(folder, self.port, self.token, settings)
        self._pw = sync_playwright().start()
        self.browser = self._pw.chromium.launch(executable_path=exe, args=BROWSER_ARGS)
        self.page = self.browser.new_page(viewport={"width": viewport[0],
                                                    "height": viewport[1]})

    def close(self) -> None:
        try:
            self.browser.close()
            self._pw.stop()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def __enter__(self) -> Lab:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/lab/tree/{path}?reset&token={self.token}"

    def run_notebook(self, path: str, timeout_s: float = 240) -> list[CellReport]:
        """Open `path` (relative to the served folder), run it from clean outputs, wait
        for the figures, and report on every code cell."""
        page = self.page
        page.goto(self.url(path))
        page.wait_for_function(_READY, timeout=120_000)
        page.evaluate("window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
        page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length === 0")
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait_for_function(_ALL_RAN, timeout=timeout_s * 1000, polling=250)
        cells = self._settled()
        self._dismiss_toasts()
        return cells

    def _settled(self, wait_s: float = 30) -> list[CellReport]:
        """Collect until every figure the kernel sent is drawn (or `wait_s` passes):
        plotly and the widget manager draw after the kernel is idle."""
        deadline = time.monotonic() + wait_s
        while True:
            cells = [_report(c) for c in self.page.evaluate(_COLLECT)]
            drawn = all(len([p for p in c.plots if p.traces]) >= len(c.heads) for c in cells)
            if drawn or time.monotonic() > deadline:
                self.page.wait_for_timeout(300)  # the last relayout
                return [_report(c) for c in self.page.evaluate(_COLLECT)]
            self.page.wait_for_timeout(250)

    def _dismiss_toasts(self) -> None:
        for name in ("No", "Dismiss"):
            button = self.page.get_by_role("button", name=name)
            if button.count():
                try:
                    button.first.click(timeout=1000)
                except Exception:  # noqa: BLE001 - a toast that left by itself
                    pass

    def shoot(self, cell_index: int, path: Path) -> None:
        """Screenshot the output area of the notebook's `cell_index`-th cell (the page
        grows for a tall output, so nothing is cut off)."""
        page = self.page
        out = page.locator(".jp-Notebook .jp-Cell").nth(cell_index) \
            .locator(".jp-Cell-outputArea").first
        size = page.viewport_size
        top = "e => e.scrollIntoView({block: 'start'})"
        out.evaluate(top)
        height = out.evaluate("e => e.getBoundingClientRect().height")
        tall = height + 160 > size["height"]
        if tall:
            # resize with the output on screen: plotly plots off screen can lay out at
            # zero height when the window changes size
            page.wait_for_timeout(150)
            page.set_viewport_size({"width": size["width"], "height": int(height) + 240})
            page.wait_for_timeout(400)
        try:
            out.evaluate(top)
            page.wait_for_timeout(150)
            box = out.bounding_box()
            page.screenshot(path=str(path), clip=box)
        finally:
            if tall:
                page.set_viewport_size(size)

    def shoot_views(self, cells: list[CellReport], folder: Path, prefix: str) -> list[Path]:
        """Screenshot every cell that shows workbench views: `<prefix>-cellNN.png`."""
        folder.mkdir(parents=True, exist_ok=True)
        shots = []
        for c in cells:
            if is_view_cell(c):
                shots.append(folder / f"{prefix}-cell{c.index:02d}.png")
                self.shoot(c.index, shots[-1])
        return shots

    def heatmap_controls_redraw(self) -> list[str]:
        """The metric buttons above the first heatmap redraw it in place."""
        page = self.page
        titles = ("() => [...document.querySelectorAll('.js-plotly-plot .gtitle')]"
                  ".map(t => t.textContent)")
        before = page.evaluate(titles)
        plots = page.locator(".js-plotly-plot").count()
        page.locator(".widget-toggle-buttons").first.get_by_role("button", name="rel").click()
        try:
            page.wait_for_function(
                "() => [...document.querySelectorAll('.js-plotly-plot .gtitle')]"
                ".some(t => t.textContent.includes('relative error'))", timeout=30_000)
        except Exception:  # noqa: BLE001 - reported as a problem
            return [f"the metric button did not redraw the heatmap (titles {before})"]
        if page.locator(".js-plotly-plot").count() != plots:
            return ["the metric button added a figure instead of redrawing it"]
        return []

    def first_screen(self, cell_index: int) -> list[str]:
        """With the outputs of the notebook's `cell_index`-th cell scrolled to the top
        of the window, its region graph, run report and the heatmap's map (the plot
        area, axes included) are all on screen."""
        page = self.page
        cell = page.locator(".jp-Notebook .jp-Cell").nth(cell_index)
        cell.locator(".jp-Cell-outputArea").first.evaluate(
            "e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(400)
        seen = cell.evaluate("""c => {
          const plots = [...c.querySelectorAll('.js-plotly-plot')].map(p => {
            const t = p.querySelector('.gtitle'), a = p.querySelector('.nsewdrag');
            return {title: t ? t.textContent : '', top: p.getBoundingClientRect().top,
                    bottom: a ? a.getBoundingClientRect().bottom + 30 : 1e9};
          });
          const run = [...c.querySelectorAll('pre')].find(e => /^(PASS|FAIL) /.test(e.textContent));
          return {plots, run: run ? run.getBoundingClientRect().bottom : 1e9,
                  height: window.innerHeight};
        }""")
        graph = [p for p in seen["plots"] if p["title"].startswith("region graph")]
        heat = [p for p in seen["plots"] if " failing " in p["title"]]
        problems = []
        if not graph or graph[0]["top"] < 0:
            problems.append("no region graph on the cell's first screen")
        if seen["run"] > seen["height"]:
            problems.append("the run report is below the cell's first screen")
        if not heat or heat[0]["bottom"] > seen["height"]:
            bottom = heat[0]["bottom"] if heat else None
            problems.append(f"the heatmap is below the fold: its map ends at {bottom} px "
                            f"in a {seen['height']} px window")
        return problems

    def heatmap_zoom_and_click(self, shots: Path | None = None) -> list[str]:
        """On the first pooled heatmap (title "... worst of a FxF block"): a box drag
        redraws the dragged window at full resolution, a double click brings the whole
        output back, a click on a cell opens its window. Screenshots of the zoomed and
        clicked maps go to `shots` (`02-zoom.png`, `02-click.png`) when given."""
        page = self.page
        titles = page.locator(".pypto-live-figure").evaluate_all(
            "es => es.map(e => (e.querySelector('.gtitle') || {}).textContent || '')")
        pooled = [i for i, t in enumerate(titles) if "worst of" in t]
        if not pooled:
            return [f"no pooled live heatmap to zoom (live figures: {titles})"]
        # by position: the title changes when the map is redrawn
        plot = page.locator(".pypto-live-figure").nth(pooled[0])
        plot.scroll_into_view_if_needed()
        title = "e => (e.querySelector('.gtitle') || {}).textContent || ''"
        drag = plot.locator(".nsewdrag").first
        box = drag.bounding_box()
        if box is None:
            return ["the pooled heatmap has no plot area"]

        def at(fx: float, fy: float) -> tuple[float, float]:
            return box["x"] + box["width"] * fx, box["y"] + box["height"] * fy

        def wait_title(js_test: str, what: str) -> list[str]:
            try:
                page.wait_for_function(f"e => {{ const t = ({title})(e); return {js_test}; }}",
                                       arg=plot.element_handle(), timeout=30_000)
            except Exception:  # noqa: BLE001 - reported as a problem
                return [f"{what} (title now {plot.evaluate(title)!r})"]
            page.wait_for_timeout(300)
            return []

        problems = []
        # about an eighth of the rows: small enough to draw at full resolution
        page.mouse.move(*at(0.05, 0.86))
        page.mouse.down()
        page.mouse.move(*at(0.20, 0.92), steps=5)
        page.mouse.move(*at(0.30, 0.98), steps=5)
        page.mouse.up()
        zoomed = wait_title("/rows \\d+:\\d+, cols \\d+:\\d+/.test(t) && !t.includes('worst of')",
                            "a box drag did not redraw the window at full resolution")
        problems += zoomed
        if not zoomed and shots is not None:
            page.screenshot(path=str(shots / "02-zoom.png"), clip=plot.bounding_box())
        drag = plot.locator(".nsewdrag").first
        box = drag.bounding_box() or box
        drag.dblclick(position={"x": box["width"] * 0.5, "y": box["height"] * 0.5})
        problems += wait_title("t.includes('worst of') && !/rows \\d+:/.test(t)",
                               "a double click did not bring the whole output back")
        box = plot.locator(".nsewdrag").first.bounding_box() or box
        page.mouse.click(*at(0.5, 0.97))
        clicked = wait_title("/rows \\d+:\\d+, cols \\d+:\\d+/.test(t) && !t.includes('worst of')",
                             "a click on a pooled cell did not open its window")
        problems += clicked
        if not clicked and shots is not None:
            page.screenshot(path=str(shots / "02-click.png"), clip=plot.bounding_box())
        return problems

    def save_notebook(self) -> None:
        """Save the open notebook as a user would (Ctrl+S) and wait for the write."""
        self.page.evaluate("window.jupyterapp.commands.execute('docmanager:save')")
        self.page.wait_for_function(
            "!window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=60_000)

    def reopen_notebook(self, path: str, wait_s: float = 30) -> list[CellReport]:
        """Open `path` again in a fresh page load, as saved, with a new kernel that ran
        nothing (so no widget model of the first run exists); runs nothing. Reports on
        every code cell once the stored figures are drawn (or `wait_s` passes)."""
        page = self.page
        page.goto(self.url(path))
        page.wait_for_function(_READY, timeout=120_000)
        # the widget manager gives up on unknown models once the kernel is connected
        # and the notebook's widget state restored: give it that moment
        page.wait_for_timeout(3000)
        cells = self._settled(wait_s)
        self._dismiss_toasts()
        return cells

    def shutdown_kernel(self) -> None:
        """Stop this notebook's kernel and close it without saving (the page moves on)."""
        self.page.evaluate("window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
        self.page.evaluate("(() => { const w = window.jupyterapp.shell.currentWidget;"
                           " w.context.model.dirty = false; w.dispose(); })()")


def check_cells(cells: list[CellReport]) -> list[str]:
    """What a user would call broken: errors, stderr, a figure drawn as text or not
    drawn, a plot squashed to nothing."""
    problems = []
    for c in cells:
        where = f"cell {c.index} ({c.first_line[:50]!r})"
        problems += [f"{where} raised {e}" for e in c.errors]
        problems += [f"{where} wrote to stderr: {s[:300]}" for s in c.stderr]
        problems += [f"{where} shows a figure as text: {t.splitlines()[0]}"
                     for t in c.text_fallbacks]
        problems += [f"{where} shows a widget that did not draw: {t[:80]!r}"
                     for t in c.broken]
        drawn = [p for p in c.plots if p.traces > 0]
        if len(drawn) < len(c.heads):
            problems.append(f"{where}: {len(c.heads)} figure(s) sent ({', '.join(c.heads)}), "
                            f"{len(drawn)} drawn with content")
        problems += [f"{where}: plot {p.title[:40]!r} is {p.width}x{p.height} px"
                     for p in c.plots if p.height < 100 or p.width < 200]
    return problems


def _report(c: dict) -> CellReport:
    heads = [m.group(0) for t in c["texts"] for m in FIGURE_HEAD.finditer(t)]
    return CellReport(c["index"], c["source"], heads, [PlotInfo(**p) for p in c["plots"]],
                      c["errors"], c["stderr"], c["fallbacks"], c["broken"])


def is_view_cell(cell: CellReport) -> bool:
    """A cell that shows workbench views (worth a screenshot)."""
    return bool(cell.heads or cell.plots) or cell.source.lstrip().startswith("%%pypto")
