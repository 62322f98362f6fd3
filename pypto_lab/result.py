"""What `%%pypto` returns: `CellResult` (one `KernelResult` per compiled kernel,
the diagnostics, and the views the line asked for), a display object."""
from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

from pypto_lab.model import KernelModel
from pypto_lab.runs import LabRun
from pypto_lab.views import HtmlView, Panel, View


class DiagnosticView(View):
    """A located user error: snippet, caret, hint (pypto.diagnostics), no traceback."""

    def __init__(self, error: BaseException, stage: str):
        self.error = error
        self.stage = stage
        self.title = f"{stage} failed"

    def text(self) -> str:
        from pypto.diagnostics import render_text

        return f"[{self.stage}] " + render_text(self.error)

    def html(self) -> str:
        from pypto.diagnostics import render_html

        return (f"<div style='margin:4px 0'><small>{html.escape(self.stage)}</small>"
                f"{render_html(self.error)}</div>")


@dataclass
class KernelResult:
    """One kernel of the cell: its compiled program, model and (optional) run."""

    name: str
    compiled: Any
    model: KernelModel
    run: LabRun | None = None

    def __repr__(self) -> str:
        ran = f", run {'PASS' if self.run.passed else 'FAIL'}" if self.run else ""
        return f"<KernelResult {self.name}: {len(self.model.regions)} region(s){ran}>"


@dataclass
class CellResult(View):
    """The outcome of one `%%pypto` cell."""

    kernels: list[KernelResult] = field(default_factory=list)
    diagnostics: list[DiagnosticView] = field(default_factory=list)
    views: list[View] = field(default_factory=list)
    title: str = "%%pypto"
    warnings: list[str] = field(default_factory=list)
    """Warnings raised while the cell ran (each once) besides the kernels' own, which
    the summary lists."""
    progress_slot: Any = field(default=None, repr=False, compare=False)
    """The progress bar's display handle, if the cell showed one."""

    @property
    def ok(self) -> bool:
        return not self.diagnostics

    @property
    def run(self) -> LabRun | None:
        runs = [k.run for k in self.kernels if k.run is not None]
        return runs[-1] if runs else None

    def kernel(self, name: str) -> KernelResult:
        for k in self.kernels:
            if k.name == name:
                return k
        raise KeyError(name)

    def _panel(self) -> Panel:
        head = (f"%%pypto: {len(self.kernels)} kernel(s) compiled"
                + (f", {len(self.diagnostics)} error(s)" if self.diagnostics else ""))
        extra = [warnings_view(self.warnings)] if self.warnings else []
        return Panel(self.title, [*self.diagnostics, *extra, *self.views], header_text=head,
                     header_html=f"<div style='color:#555'><small>{html.escape(head)}"
                                 "</small></div>")

    @property
    def interactive(self) -> bool:  # type: ignore[override]
        return self._panel().interactive

    def parts(self) -> list[View]:
        return self._panel().parts()

    def text(self) -> str:
        return self._panel().text()

    def html(self) -> str:
        return self._panel().html()

    def has_figure(self) -> bool:
        return self._panel().has_figure()

    def widget(self) -> Any:
        return self._panel().widget()

    def _ipython_display_(self) -> None:
        """One output per part; the first takes the place of the progress bar, if the
        cell showed one (so no finished bar is left behind)."""
        parts = self.parts()
        slot, self.progress_slot = self.progress_slot, None
        if slot is not None:
            if parts and not parts[0].interactive:
                slot.update(parts[0].bundle(), raw=True)
                parts = parts[1:]
            else:
                slot.update({"text/plain": ""}, raw=True)
        for part in parts:
            part.show()

    def __repr__(self) -> str:
        return self.text()


def warnings_view(warnings: list[str]) -> HtmlView:
    text = "warnings:\n" + "\n".join("  " + w for w in warnings)
    body = "".join(f"<div style='color:#8a6d3b;white-space:pre-wrap'>⚠ {html.escape(w)}</div>"
                   for w in warnings)
    return HtmlView("warnings", text, f"<div style='margin:4px 0'>{body}</div>")


def run_report_view(run: LabRun) -> HtmlView:
    color = "#1a7f37" if run.passed else "#cf222e"
    return HtmlView(f"run {run.kernel}", run.report,
                    f"<pre style='border-left:4px solid {color};padding-left:6px;"
                    # wrap long report lines between words (JupyterLab breaks anywhere)
                    f"white-space:pre-wrap;word-break:normal;overflow-wrap:break-word'>"
                    f"{html.escape(run.report)}</pre>")
