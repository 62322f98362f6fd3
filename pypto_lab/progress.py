"""The notebook's progress bar for long simulator runs.

In a notebook, `%load_ext pypto_lab` makes this the simulator's default progress hook in
place of its line on stderr: any run that takes more than two seconds - a plain kernel
call as much as a `%%pypto --run` - shows a bar in the running cell's output with how far
it got, redrawn in place, and a last line saying it finished or stopped. The simulator
calls the hook from its monitor thread; ipykernel sends output from a thread of its own
to the cell executing now, which is the one waiting for the run.
"""
from __future__ import annotations

import html
from typing import Any

from pypto.sim import Progress, get_progress, set_progress, terminal_progress


class NotebookProgress:
    """A `pypto.sim` progress hook drawing one bar per run (`pypto.sim.set_progress`)."""

    def __init__(self) -> None:
        self._bars: dict[int, Any] = {}  # run number -> its display handle

    def __call__(self, p: Progress) -> None:
        from IPython.display import HTML, display

        shown = HTML(bar_html(p))
        handle = self._bars.pop(p.run, None) if p.done else self._bars.get(p.run)
        if handle is not None:
            handle.update(shown)
        elif not p.done:
            self._bars[p.run] = display(shown, display_id=True)


def bar_html(p: Progress) -> str:
    """A running run: an indeterminate bar (how long a run takes is not known ahead);
    a finished one: a full bar; a stopped one: no bar (its error follows)."""
    text = html.escape(str(p))
    if not p.done:
        bar = "<progress style='width:240px'></progress> "
    elif not p.failed:
        bar = "<progress value='1' max='1' style='width:240px'></progress> "
    else:
        bar = ""
    return f"<div class='pypto-sim-progress'>{bar}<small>{text}</small></div>"


def show_bars(on: bool) -> None:
    """Make the bar the simulator's default progress hook (`on`), or the line on stderr
    again; a user who silenced or replaced the line keeps their choice."""
    current = get_progress()
    if on and current is terminal_progress:
        set_progress(NotebookProgress())
    elif not on and isinstance(current, NotebookProgress):
        set_progress(terminal_progress)


__all__ = ["NotebookProgress", "bar_html", "show_bars"]
