"""`run_cell`: the whole `%%pypto` cell as a pure function (no IPython here).

Executes the cell as ordinary Python in `user_ns`, compiles every kernel it
defined, optionally runs one on the simulator against its golden, and collects the
views the line asked for. User errors (`PyptoError`, a Python syntax error in the
cell, TensorSpecs that do not fit the kernel) become located diagnostics in the
result; bugs (`InternalError`) and ordinary Python errors in the cell propagate.
Warnings raised while the cell runs are collected and shown once, in the result.
"""
from __future__ import annotations

import ast
import itertools
import linecache
import re
import warnings
from collections.abc import Callable
from typing import Any

from pypto.errors import InternalWarning, PyptoError, UserError
from pypto.ir.span import Span
from pypto_lab import api
from pypto_lab.args import MagicArgs
from pypto_lab.model import KernelModel
from pypto_lab.result import CellResult, DiagnosticView, KernelResult, run_report_view
from pypto_lab.runs import CHECKS, run_kernel
from pypto_lab.specs import check_specs

Progress = Callable[[str, float], None]
_cells = itertools.count(1)
_used: set[str] = set()


class CellSyntaxError(UserError):
    """The cell is not valid Python."""

    code = "E002"


class KernelNameError(UserError):
    """`--kernel NAME` names no kernel the cell compiled; located at the name on the
    `%%pypto` line."""

    code = "E003"


def run_cell(source: str, args: MagicArgs, user_ns: dict, *, line: str = "",
             progress: Progress | None = None, number: int | None = None) -> CellResult:
    """Run one `%%pypto` cell; `line` is the magic line (shown in located errors),
    `number` the cell's execution count (it names the cell: `<pypto-cell-N>`)."""
    note = progress or (lambda stage, frac: None)
    before = {k: id(v) for k, v in user_ns.items()}
    result = CellResult()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            code = _compile_cell(source, line, number)
            exec(code, user_ns)
        except PyptoError as err:
            result.diagnostics.append(DiagnosticView(err, "cell"))
            result.warnings = _unique(caught)
            _reraise_internal(caught)
            return result
        bound = _bound_names(source)
        defined = [(k, v) for k, v in user_ns.items()
                   if (before.get(k) != id(v) or k in bound) and _is_kernel(v)]
        if args.kernel and all(k != args.kernel for k, _ in defined) and \
                _is_kernel(user_ns.get(args.kernel)):
            # a kernel of an earlier cell, named: this cell changed its specs or golden
            defined.append((args.kernel, user_ns[args.kernel]))
        for i, (name, kernel) in enumerate(defined):
            note(f"compiling {name}", i / max(1, len(defined)))
            try:
                compiled = kernel.compile(platform=args.platform)
            except PyptoError as err:
                result.diagnostics.append(DiagnosticView(err, f"compile {name}"))
                continue
            result.kernels.append(KernelResult(name, compiled, KernelModel.of(compiled)))
        if args.kernel and result.kernels and \
                all(k.name != args.kernel for k in result.kernels):
            result.diagnostics.append(DiagnosticView(
                _no_kernel(args.kernel, result, code.co_filename, line), "--kernel"))
        elif args.specs and result.kernels:
            _run(result, args, user_ns, note)
        elif args.specs and not result.diagnostics:
            result.diagnostics.append(DiagnosticView(
                _nothing_to_run(user_ns, code.co_filename, line), "--run"))
        result.views = _views(result, args)
    _reraise_internal(caught)
    shown = {w for k in result.kernels for w in k.model.warnings}
    result.warnings = [w for w in _unique(caught) if w not in shown]
    note("done", 1.0)
    return result


def _unique(caught: list) -> list[str]:
    """Each distinct warning once (a kernel compiled twice warns twice); our own
    InternalWarnings are not the user's business here (they go on, see below)."""
    return list(dict.fromkeys(str(w.message) for w in caught
                              if not issubclass(w.category, InternalWarning)))


def _reraise_internal(caught: list) -> None:
    """InternalWarnings (a bug of ours) go on to the caller's filters: tests turn them
    into errors."""
    for w in caught:
        if issubclass(w.category, InternalWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _compile_cell(source: str, line: str, number: int | None) -> Any:
    """Compile the body so that line numbers match the editor's (line 1 is the
    `%%pypto` line), with the text in linecache so kernels' sources and diagnostics can
    be read. A Python syntax error becomes a located `CellSyntaxError`."""
    filename = _cell_name(number)
    lines = [f"%%pypto {line}".rstrip() + "\n"] + source.splitlines(keepends=True)
    linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)
    try:
        return compile("\n" + source, filename, "exec")
    except SyntaxError as err:
        col = err.offset or 1
        end_line = getattr(err, "end_lineno", None) or err.lineno or 0
        end_col = getattr(err, "end_offset", None) or col + 1
        if end_line != err.lineno or end_col <= col:
            end_line, end_col = err.lineno or 0, col + 1
        span = Span(filename, err.lineno or 0, col, end_line, end_col)
        kind = type(err).__name__  # SyntaxError, IndentationError, TabError
        raise CellSyntaxError(f"{kind}: {err.msg}", span,
                              hint="the cell must be valid Python before anything is "
                                   "compiled; fix the line marked above") from None


_CELL_NAME = re.compile(r"<pypto-cell-(\d+)(?:\.\d+)?>$")


def cell_label(filename: str) -> str | None:
    """`Cell In[N]` for the file name of a `%%pypto` cell (`_cell_name`), else None."""
    m = _CELL_NAME.match(filename)
    return f"Cell In[{m.group(1)}]" if m else None


def _cell_name(number: int | None) -> str:
    """`<pypto-cell-N>` after the cell's In[N]. Numbers repeat when cells run without
    history (nbval, `run_cell(store_history=False)`): a repeat gets `.2`, `.3`, ... so no
    cell's text replaces another's in linecache (kernels are parsed from it later)."""
    base = str(number if number is not None else next(_cells))
    name, k = f"<pypto-cell-{base}>", 1
    while name in _used:
        k += 1
        name = f"<pypto-cell-{base}.{k}>"
    _used.add(name)
    return name


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
        check_specs(target.compiled, specs, args.specs)
        target.run = run_kernel(kernel, specs, golden, platform=target.compiled.platform,
                                seed=args.seed, rtol=args.rtol, atol=args.atol,
                                progress=note, dump_args=args.dump_args,
                                checks=CHECKS if args.checks is None else args.checks,
                                shadow="precision" in args.show)
    except PyptoError as err:
        result.diagnostics.append(DiagnosticView(err, f"run {target.name}"))


def _no_kernel(name: str, result: CellResult, filename: str, line: str) -> KernelNameError:
    """The error of `--kernel name` when the cell compiled no kernel of that name."""
    import difflib

    magic = f"%%pypto {line}"
    col = magic.find(name, magic.find("--kernel")) + 1 or 1
    names = [k.name for k in result.kernels]
    near = difflib.get_close_matches(name, names, n=1)
    failed = any(getattr(d, "stage", None) == f"compile {name}" for d in result.diagnostics)
    why = (f"kernel '{name}' did not compile (its error is above)" if failed else
           f"the cell defines no kernel named '{name}'")
    return KernelNameError(
        f"--kernel {name}: {why}; it compiled {', '.join(names)}",
        Span(filename, 1, col, 1, col + len(name)),
        hint=(f"did you mean '{near[0]}'? " if near else "") +
             "--kernel takes the name of a @pl.jit function the cell defines")


def _bound_names(source: str) -> set[str]:
    """Names the cell's own top-level statements bind (`kernel = lib.k`, `def`, `class`,
    imports): a cell run again binds its kernel to the same object, and still means it."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def _nothing_to_run(user_ns: dict, filename: str, line: str) -> KernelNameError:
    """`--run` in a cell that defined no kernel: it ran nothing, and says how to run
    one (located at --run on the `%%pypto` line)."""
    magic = f"%%pypto {line}"
    col = magic.find("--run") + 1 or 1
    earlier = sorted(k for k, v in user_ns.items() if not k.startswith("_") and _is_kernel(v))
    hint = (f"to run a kernel of an earlier cell, name it: --kernel {earlier[-1]}"
            + (f" (kernels defined: {', '.join(earlier)})" if len(earlier) > 1 else "")
            if earlier else "define a @pl.jit kernel in the cell")
    return KernelNameError(
        "--run: the cell defines no kernel, so nothing ran",
        Span(filename, 1, col, 1, col + len("--run")), hint=hint)


def _lookup(ns: dict, name: str | None, what: str) -> Any:
    if name not in ns:
        raise NameError(f"--run: no {what} named {name!r} in the cell or the notebook")
    return ns[name]


def _views(result: CellResult, args: MagicArgs) -> list:
    views: list = []
    for k in result.kernels:
        views.append(api.summary_view(k.model, k.run))
        if "ir" in args.show:
            views.append(api.ir_view(k.compiled))
        if "passes" in args.show:
            views.append(api.pipeline_view(k.compiled))
        if "graph" in args.show:
            views += api.region_views(k.compiled, k.model)
        if k.run is None:
            continue
        # the run and its heatmap right under the region graph (the first screen of a
        # cell that shows all three); what ran, task by task, after them
        views.append(run_report_view(k.run))
        if "heatmap" in args.show and k.run.outputs:
            views.append(api.heatmap(k.run))
        if "graph" in args.show:
            views += api.task_views(k)
        if "timeline" in args.show and k.run.tasks:
            views.append(api.timeline(k.run))
        if "dumps" in args.show and k.run.dump_level:
            views.append(api.dumps(k.run))
        if "rings" in args.show and k.run.rings:
            views.append(api.rings(k.run))
        if "precision" in args.show and k.run.shadow is not None:
            views.append(api.precision(k.run))
    return views
