"""`pypto_lab.dumps`: the args dump of a run as a table joined to the task graph.

One row per dumped argument, in the order of the runtime's manifest (task, stage, slot):
the task as the task graph labels it (`name#id`), the stage, the role, the tensor, its
shape. Selecting a row draws the heatmap of that snapshot, the values the argument held
at that task boundary (`figures.snapshot`). Everything comes from the core's records:
the run's `ArgSnapshot`s (`SimResult.arg_dumps`) and the harness's `args_dump` artifact.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from pypto.dfx.args_dump import dtype_name
from pypto_lab.coerce import run_of
from pypto_lab.figures.snapshot import snapshot_figure
from pypto_lab.runs import LabRun
from pypto_lab.views import PLOTLY_MIME, FigureView, View, table_html, table_text

_STAGES = {"before_dispatch": 0, "after_completion": 1}
HEADER = ["#", "task", "stage", "role", "tensor", "shape", "dtype", "payload"]


@dataclass(frozen=True)
class DumpRow:
    """One dumped argument of one task at one boundary."""

    task: int
    label: str
    """The task as the task graph labels it: `name#id`."""
    stage: str
    role: str
    tensor: str
    """The global tensor (a scalar: its parameter)."""
    shape: tuple[int, ...]
    dtype: str
    """The runtime's name (FLOAT32, BFLOAT16, ...), as args_dump.json has it."""
    snapshot: Any
    """The core's `ArgSnapshot`."""

    @property
    def has_payload(self) -> bool:
        return self.snapshot.data is not None

    def cells(self, i: int) -> list[str]:
        scalar = self.snapshot.kind == "scalar"
        shape = "scalar" if scalar else f"[{', '.join(map(str, self.shape))}]"
        payload = "yes" if self.has_payload else (
            f"= {self.snapshot.value}" if scalar else "metadata")
        return [str(i), self.label, self.stage, self.role, self.tensor, shape, self.dtype,
                payload]


def dump_rows(run: LabRun) -> list[DumpRow]:
    """The rows of `run`'s args dump, in the manifest's order."""
    names = {t.task: t.name for t in run.tasks}
    order = sorted(run.dumps, key=lambda s: (s.task, _STAGES.get(s.stage, 2), s.arg_index))
    return [DumpRow(s.task, f"{names.get(s.task, '?')}#{s.task}", s.stage, s.role,
                    s.tensor or s.param, tuple(s.shape), dtype_name(s.dtype), s)
            for s in order]


class DumpView(View):
    """The dump table; selecting a row (the live form's list, or `select`) draws its
    snapshot's heatmap."""

    interactive = True

    def __init__(self, run: LabRun, select: int | None = None):
        self.run = run
        self.rows = dump_rows(run)
        self.title = f"args dump {run.kernel}"
        shown = [i for i, r in enumerate(self.rows) if r.has_payload]
        if select is not None and not 0 <= select < len(self.rows):
            raise ValueError(f"no row {select}: the dump has {len(self.rows)} rows")
        self.selected = select if select is not None else (shown[0] if shown else None)

    def figure(self, row: int) -> dict:
        """The heatmap spec of row `row`'s snapshot."""
        r = self.rows[row]
        if not r.has_payload:
            why = ("a scalar" if r.snapshot.kind == "scalar" else
                   "metadata only (level 3 carries the payloads of tagged tensors)")
            raise ValueError(f"row {row} ({r.tensor} of {r.label}, {r.stage}) has no payload: "
                             f"{why}")
        return snapshot_figure(r.snapshot.data, f"task {r.label} · {r.stage} · {r.role}",
                               r.tensor)

    def head(self) -> str:
        with_data = sum(r.has_payload for r in self.rows)
        text = (f"args dump of {self.run.kernel}: level {self.run.dump_level}, "
                f"{len(self.rows)} argument(s), {with_data} with a payload")
        where = [a for a in self.run.artifacts if getattr(a, "kind", "") == "args_dump"]
        if where:
            text += f"\n{where[0].message}"
        if not self.rows or (not with_data and self.run.dump_level != 2):
            text += ("\nnothing tagged: mark tensors with pl.dump_tag(t) or pl.at(..., "
                     "dumps=[t]), or dump everything with level 2")
        return text

    def text(self) -> str:
        table = table_text([r.cells(i) for i, r in enumerate(self.rows)], HEADER)
        return f"{self.head()}\n{table}"

    def _figure_view(self) -> FigureView | None:
        if self.selected is None or not self.rows[self.selected].has_payload:
            return None
        r = self.rows[self.selected]
        return FigureView(self.figure(self.selected), f"snapshot {r.tensor} of {r.label}")

    def has_figure(self) -> bool:
        return self._figure_view() is not None

    def html(self) -> str:
        rows = [[html.escape(c) for c in r.cells(i)] for i, r in enumerate(self.rows)]
        head = "<br>".join(html.escape(line) for line in self.head().splitlines())
        fig = self._figure_view()
        return (f"<div><b>{html.escape(self.title)}</b><br><small>{head}</small>"
                + table_html(rows, HEADER) + (fig.html() if fig is not None else "")
                + "</div>")

    def widget(self) -> Any:
        """The rows as a list; picking one redraws the heatmap below it."""
        import ipywidgets as w

        from pypto_lab.live_figure import LiveFigure

        options = [(" | ".join(r.cells(i)), i) for i, r in enumerate(self.rows)]
        pick = w.Select(options=options, value=self.selected, rows=min(12, len(options) or 1),
                        layout={"width": "100%"})
        note = w.HTML()
        fig = self._figure_view()
        live = LiveFigure(fig.figure_bundle()[PLOTLY_MIME] if fig is not None else {})

        def show(change: Any) -> None:
            i = change["new"]
            try:
                live.figure = FigureView(self.figure(i), "").figure_bundle()[PLOTLY_MIME]
                note.value = ""
            except ValueError as err:
                note.value = f"<small>{html.escape(str(err))}</small>"
            self.selected = i

        pick.observe(show, "value")
        head = "<br>".join(html.escape(line) for line in self.head().splitlines())
        return w.VBox([w.HTML(f"<b>{html.escape(self.title)}</b><br><small>{head}</small>"),
                       pick, note, live])


def dumps(obj: Any, select: int | None = None) -> DumpView:
    """The args dump of a run (`%%pypto --dump-args N`, or run_jit with
    `enable_dump_args`): a table of the dumped arguments, with the heatmap of row
    `select` (default: the first with a payload)."""
    run = run_of(obj)
    if not run.dump_level:
        raise ValueError(f"the run of {run.kernel} captured no args dump: run it with "
                         "%%pypto --dump-args N (or runtime_cfg enable_dump_args=N)")
    return DumpView(run, select)
