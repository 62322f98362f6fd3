"""`run_cell`: the whole `%%pypto` cell as a pure function (no IPython here).

Executes the cell as ordinary Python in `user_ns`, compiles every kernel it
defined, optionally runs one on the simulator against its golden, and collects the
views the line asked for. User errors (`PyptoError`) become diagnostics in the
result; bugs (`InternalError`) and ordinary Python errors in the cell propagate.
"""
from __future__ import annotations

import itertools
import linecache
from collections.abc import Callable
from typing import Any

from pypto.errors import PyptoError
from pypto_lab import api
from pypto_lab.args import MagicArgs
from pypto_lab.model import KernelModel
from pypto_lab.result import CellResult, DiagnosticView, KernelResult, run_report_view
from pypto_lab.runs import run_kernel

Progress = Callable[[str, float], None]
_cells = itertools.count(1)


def run_cell(source: str, args: MagicArgs, user_ns: dict, *, line: str = "",
             progress: Progress | None = None) -> CellResult:
    """Run one `%%pypto` cell; `line` is the magic line (shown in located errors)."""
    note = progress or (lambda stage, frac: None)
    before = {k: id(v) for k, v in user_ns.items()}
    result = CellResult()
    try:
        exec(_compile_cell(source, line), user_ns)  # the user's own cell
    except PyptoError as err:
        result.diagnostics.append(DiagnosticView(err, "cell"))
        return result
    defined = [(k, v) for k, v in user_ns.items()
               if before.get(k) != id(v) and _is_kernel(v)]
    for i, (name, kernel) in enumerate(defined):
        note(f"compiling {name}", i / max(1, len(defined)))
        try:
            compiled = kernel.compile(platform=args.platform)
        except PyptoError as err:
            result.diagnostics.append(DiagnosticView(err, f"compile {name}"))
            continue
        result.kernels.append(KernelResult(name, compiled, KernelModel.of(compiled)))
    if args.specs and result.kernels:
        _run(result, args, user_ns, note)
    result.views = _views(result, args)
    note("done", 1.0)
    return result


def _compile_cell(source: str, line: str) -> Any:
    """Compile the body so that line numbers match the cell (line 1 is `%%pypto`),
    with the text in linecache so kernels' sources and diagnostics can be read."""
    filename = f"<pypto-cell-{next(_cells)}>"
    lines = [f"%%pypto {line}".rstrip() + "\n"] + source.splitlines(keepends=True)
    linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)
    return compile("\n" + source, filename, "exec")


def _is_kernel(v: Any) -> bool:
    from pypto.ir.nodes import FunctionKind
    from pypto.language.jit import JITFunction, ProgramDef

    if isinstance(v, ProgramDef):
        return True
    return isinstance(v, JITFunction) and v.kind in (
        FunctionKind.ORCHESTRATION, FunctionKind.OPAQUE, FunctionKind.HOST)


def _run(result: CellResult, args: MagicArgs, user_ns: dict, note: Progress) -> None:
    target = result.kernels[-1]
    if args.kernel:
        target = result.kernel(args.kernel)
    specs = _lookup(user_ns, args.specs, "specs")
    golden = _lookup(user_ns, args.golden, "golden function") if args.golden else None
    kernel = target.compiled.source
    try:
        target.run = run_kernel(kernel, specs, golden, platform=target.compiled.platform,
                                seed=args.seed, rtol=args.rtol, atol=args.atol,
                                progress=note)
    except PyptoError as err:
        result.diagnostics.append(DiagnosticView(err, f"run {target.name}"))


def _lookup(ns: dict, name: str | None, what: str) -> Any:
    if name not in ns:
        raise NameError(f"--run: no {what} named {name!r} in the cell or the notebook")
    return ns[name]


def _views(result: CellResult, args: MagicArgs) -> list:
    views: list = []
    for k in result.kernels:
        views.append(api.summary_view(k.model))
        if "ir" in args.show:
            views.append(api.ir_view(k.compiled))
        if "passes" in args.show:
            views.append(api.pipeline_view(k.compiled))
        if "graph" in args.show:
            views.append(api.show_graph(k))
        if k.run is None:
            continue
        views.append(run_report_view(k.run))
        if "heatmap" in args.show and k.run.outputs:
            views.append(api.heatmap(k.run))
        if "timeline" in args.show and k.run.tasks:
            views.append(api.timeline(k.run))
    return views
