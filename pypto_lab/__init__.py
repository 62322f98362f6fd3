"""pypto_lab: a Jupyter workbench for `pypto.language` kernels.

`%load_ext pypto_lab` registers the `%%pypto` cell magic. The same views work
without IPython: `show_graph`, `inspect`, `heatmap`, `timeline`, `pipeline_view`
(imported lazily so `import pypto_lab` stays light). `set_plotlyjs("none")` keeps
saved notebooks small (figures as plotly's own mimetype, no inlined plotly.js).
"""
from __future__ import annotations

from typing import Any

_API = ("show_graph", "inspect", "heatmap", "timeline", "pipeline_view")
__all__ = ["load_ipython_extension", "unload_ipython_extension", "run_cell", "set_plotlyjs",
           "sweep", "sweep_figure", *_API]


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext pypto_lab`."""
    from pypto_lab.magics import PyptoMagics

    ipython.register_magics(PyptoMagics(ipython))


def unload_ipython_extension(ipython: Any) -> None:
    """`%unload_ext pypto_lab`: drop the magic."""
    ipython.magics_manager.magics["cell"].pop("pypto", None)


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
