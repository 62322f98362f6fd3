"""pypto_lab: a Jupyter workbench for `pypto.language` kernels.

`%load_ext pypto_lab` registers the `%%pypto` cell magic. The same views work
without IPython: `show_graph`, `inspect`, `heatmap`, `timeline`, `dumps`, `pipeline_view`, and
for multi-card runs `ranks`, `on_rank`, `window_view` (imported lazily so `import
pypto_lab` stays light). Figures travel as plotly's own mimetype; `set_plotlyjs` says
where their HTML twin gets plotly.js from (once per session by default, `"none"`:
never).
"""
from __future__ import annotations

import sys
from typing import Any

_API = ("show_graph", "inspect", "heatmap", "timeline", "dumps", "rings", "precision",
        "pipeline_view",
        "ranks", "on_rank", "window_view")
__all__ = ["load_ipython_extension", "unload_ipython_extension", "run_cell", "set_plotlyjs",
           "sweep", "sweep_figure", *_API]


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext pypto_lab`."""
    from pypto_lab.magics import PyptoMagics, help_transformer

    ipython.register_magics(PyptoMagics(ipython))
    _name_cells(ipython)
    if help_transformer not in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.append(help_transformer)
    if getattr(ipython, "kernel", None) is not None:
        from pypto_lab.progress import show_bars

        show_bars(True)  # a long run's progress: a bar in a notebook, not a line
    # in a notebook cell (not a terminal, nor a kernel's start-up extensions, whose output
    # no cell would receive): an output for plotly.js to go to once
    if getattr(ipython, "kernel", None) is not None and getattr(ipython, "parent_header", None):
        from pypto_lab.views import open_plotlyjs_slot

        open_plotlyjs_slot()


def unload_ipython_extension(ipython: Any) -> None:
    """`%unload_ext pypto_lab`: drop the magic and the progress bar."""
    from pypto_lab.magics import help_transformer

    ipython.magics_manager.magics["cell"].pop("pypto", None)
    ipython.magics_manager.magics["line"].pop("pypto", None)
    if help_transformer in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.remove(help_transformer)
    from pypto_lab.progress import show_bars

    show_bars(False)
    if _namer:
        from pypto.diagnostics import forget_source_namer

        forget_source_namer(_namer.pop())


_namer: list = []  # the source namer this session registered (one at a time)


def _name_cells(ipython: Any) -> None:
    """Errors located in a notebook cell say `Cell In[5], line 13, column 9`, as
    IPython's own tracebacks do, not the kernel's temporary file name: the core asks
    this namer (`pypto.diagnostics.name_sources`)."""
    from pypto.diagnostics import forget_source_namer, name_sources
    from pypto_lab.session import cell_label

    def name(path: str) -> str | None:
        label = cell_label(path)
        if label is not None:
            return label
        kind = ipython.compile.format_code_name(path)  # ("Cell", "In[5]") for a cell
        return f"{kind[0]} {kind[1]}" if kind else None

    if _namer:
        forget_source_namer(_namer.pop())
    _namer.append(name)
    name_sources(name)


def __getattr__(name: str) -> Any:
    if name in _API:
        from pypto_lab import api

        return getattr(api, name)
    if name == "set_plotlyjs":
        from pypto_lab.views import set_plotlyjs

        return set_plotlyjs
    if name in ("sweep", "sweep_figure"):
        from pypto_lab import sweeps

        return sweeps.sweep if name == "sweep" else sweeps.SweepView
    if name == "run_cell":
        from pypto_lab.session import run_cell

        return run_cell
    raise AttributeError(f"module 'pypto_lab' has no attribute {name!r}")


def _load_into_running_shell() -> None:
    """`import pypto_lab` in IPython or Jupyter registers `%%pypto` as `%load_ext
    pypto_lab` does: a notebook that forgot the `%load_ext` line but imports the package
    gets the magic instead of IPython's bare "Cell magic `%%pypto` not found". Outside
    IPython (a script, the tests' workers) nothing happens."""
    shell_module = sys.modules.get("IPython")
    shell = shell_module.get_ipython() if shell_module is not None else None
    if shell is None or "pypto" in shell.magics_manager.magics["cell"]:
        return
    shell.extension_manager.load_extension("pypto_lab")


_load_into_running_shell()
