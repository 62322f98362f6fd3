"""One point of a tile-size sweep: what it runs (`SweepCase`, plain picklable data a
Dask worker receives) and what came of it (`SweepPoint`)."""
from __future__ import annotations

import ast
import importlib
import linecache
import sys
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pypto.errors import PyptoError
from pypto.golden import run, run_jit
from pypto.golden.data import seed_global_generators
from pypto.golden.record import over_budget, summarize
from pypto.ir.nodes import FunctionKind
from pypto.language.kernels import KernelFunction
from pypto.scale.constants import (
    ConstantError,
    harness_tolerances,
    module_constants,
    with_constants,
)
from pypto.scale.estimate import Estimate, estimate
from pypto.scale.pyptolib import install_golden_alias, library_root


@dataclass(frozen=True)
class SweepCase:
    source: str  # the kernel's module (a file, or a notebook cell)
    filename: str
    label: str
    kernel: str | None = None
    specs: Any = None  # list, callable, or the name of a module function
    golden: Any = None  # callable, or the name of a module function
    base: dict = field(default_factory=dict)  # names the source uses but does not define
    modules: dict = field(default_factory=dict)  # name -> module to import for it
    platform: str = "a2a3sim"
    rtol: float = 1e-5
    atol: float = 1e-5
    # name -> (module, qualified name) of a class or function the source uses that an
    # import gives back (a notebook's `from pypto.golden import TensorSpec`)
    imports: dict = field(default_factory=dict)


@dataclass
class SweepPoint:
    values: dict
    compiles: bool = False
    fits: bool | None = None  # None: never compiled
    matches: bool | None = None  # None: not simulated (no compile, no fit, no golden)
    verdict: str = ""  # pass | diagnosed | fail | compile error | over budget | fault | ...
    est_us: float | None = None  # estimated makespan (pypto.scale.estimate)
    est_us_serial: float | None = None  # the tasks' estimates summed (the trace's totals)
    estimate: Estimate | None = None  # what sets est_us: bound, launch cost, tasks
    reason: str = ""
    over_budget: list = field(default_factory=list)
    ub_use: float | None = None  # the fullest region's UB estimate over its capacity
    heap_peak: int | None = None  # the most any ring heap held (bytes; best case)
    seconds: float = 0.0

    @property
    def feasible(self) -> bool:
        return bool(self.compiles and self.fits) and self.verdict in ("pass", "no golden")


def _plain(value: Any) -> bool:
    if isinstance(value, (bool, int, float, str, complex, type(None))):
        return True
    return isinstance(value, tuple) and all(_plain(v) for v in value)


def _importable(value: Any) -> bool:
    """A class or function that importing its module gives back (not one defined in
    the notebook or script itself, which a fresh worker could not import)."""
    if not isinstance(value, (type, types.FunctionType)):
        return False
    mod, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", "")
    if not mod or mod == "__main__" or "<" in qualname:
        return False
    obj = sys.modules.get(mod)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return obj is value


def _is_program(obj: Any) -> bool:
    """A `@pl.program` class (duck-typed: its type lives in the front door, above us)."""
    return hasattr(obj, "functions") and hasattr(obj, "compile") and hasattr(obj, "cls")


def _python_function(obj: Any) -> Any:
    return obj.fn if isinstance(obj, KernelFunction) else next(iter(obj.functions.values())).fn


def _kernel_source(obj: Any) -> tuple[str, str]:
    fn = _python_function(obj)
    filename = fn.__code__.co_filename
    lines = linecache.getlines(filename)
    if not lines:
        raise ValueError(f"the source of {obj!r} ({filename}) is not available to sweep")
    if lines[0].startswith("%%"):  # a notebook cell's magic line: keep the numbering
        lines = ["\n", *lines[1:]]
    return "".join(lines), filename


def case_for(target: Any, grid: dict, *, kernel: str | None, specs: Any, golden: Any,
             platform: str, rtol: float | None, atol: float | None) -> SweepCase:
    """The case a sweep of `target` runs at every point (checks the grid's names)."""
    base: dict = {}
    modules: dict = {}
    imports: dict = {}
    if isinstance(target, KernelFunction) or _is_program(target):
        source, filename = _kernel_source(target)
        kernel = kernel or target.__name__
        g = _python_function(target).__globals__
        used = {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}
        for k, v in g.items():
            if k.startswith("__"):
                continue
            if isinstance(v, types.ModuleType):
                modules[k] = v.__name__
            elif _plain(v):
                base[k] = v
            elif k in used and _importable(v):
                imports[k] = (v.__module__, v.__qualname__)
        label = kernel
    else:
        path = Path(target)
        try:
            source = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"sweep: cannot read {path}: {exc.strerror or exc}") from None
        filename = str(path.resolve())
        label = f"{path.name}{':' + kernel if kernel else ''}"
    known = set(module_constants(source)) | set(base)
    unknown = [n for n in grid if n not in known]
    if unknown:
        consts = ", ".join(sorted(module_constants(source))) or "none"
        raise ConstantError(f"{', '.join(unknown)}: not a module-level constant of {filename} "
                            f"(its constants: {consts})")
    tol = harness_tolerances(source)
    rtol = rtol if rtol is not None else tol.get("rtol", 1e-5)
    atol = atol if atol is not None else tol.get("atol", 1e-5)
    return SweepCase(source, filename, label, kernel, specs, golden, base, modules, platform,
                     rtol, atol, imports)


def _module(case: SweepCase, values: dict) -> dict:
    source, missing = with_constants(case.source, values)
    tag = ",".join(f"{k}={v}" for k, v in values.items())
    name = f"{case.filename} [{tag}]"
    lines = source.splitlines(keepends=True)
    linecache.cache[name] = (len(source), None, lines, name)  # the frontend reads it here
    ns: dict = {"__name__": "__pypto_sweep__", "__file__": case.filename}
    for k, mod in case.modules.items():
        ns[k] = __import__(mod, fromlist=["_"])
    for k, (mod, qualname) in case.imports.items():
        try:
            obj: Any = importlib.import_module(mod)
            for part in qualname.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError):
            continue  # not here (another worker's environment): a NameError if used
        ns[k] = obj
    ns.update(case.base)
    ns.update(missing)
    install_golden_alias()  # pypto-lib modules import golden's TensorSpec
    saved = list(sys.path)
    here = Path(case.filename).parent
    sys.path[:0] = [str(d) for d in (here, library_root(here)) if d is not None and d.is_dir()]
    try:
        exec(compile(source, name, "exec"), ns)
    finally:
        sys.path[:] = saved
    return ns


def _pick(ns: dict, case: SweepCase) -> tuple[Any, Any, Any]:
    if case.kernel:
        if case.kernel not in ns:
            raise ValueError(f"no kernel named {case.kernel!r} in {case.filename}")
        k = ns[case.kernel]
    else:
        entries = [v for v in ns.values() if _is_program(v) or (
            isinstance(v, KernelFunction) and v.kind is FunctionKind.ORCHESTRATION)]
        if len(entries) != 1:
            names = ", ".join(getattr(e, "__name__", "?") for e in entries) or "none"
            raise ValueError(f"{case.filename} has {len(entries)} entry kernels ({names}): "
                             "name one with kernel=")
        k = entries[0]
    specs = case.specs if case.specs is not None else "build_tensor_specs"
    if isinstance(specs, str):
        if specs not in ns:
            raise ValueError(f"no spec builder {specs!r} in {case.filename}: pass specs=")
        specs = ns[specs]
    if callable(specs):
        specs = specs()
    golden = case.golden
    if golden is None:
        found = [v for n, v in ns.items() if n.startswith("golden_") and callable(v)]
        golden = found[0] if len(found) == 1 else None
    elif isinstance(golden, str):
        golden = ns[golden]
    return k, list(specs), golden


def _located(err: BaseException) -> str:
    first = str(err).strip().splitlines()
    return f"{type(err).__name__}: {first[0] if first else ''}"


def ub_use(result: Any) -> float | None:
    """The fullest region's UB (Vec) estimate over its capacity (the compile's regions;
    None when it has none or no Vec budget)."""
    uses = [r.ub_bytes / dict(r.budget)["Vec"]
            for r in (getattr(result.compiled, "regions", None) or ())
            if dict(r.budget).get("Vec")]
    return max(uses) if uses else None


def evaluate(case: SweepCase, values: dict) -> SweepPoint:
    """Compile, budget-check, simulate and validate the kernel at one point."""
    t0 = time.perf_counter()
    p = SweepPoint(dict(values))
    try:
        ns = _module(case, values)
        kernel, specs, golden = _pick(ns, case)
        harness = run if _is_program(kernel) else run_jit
        cfg = {"platform": case.platform}
        first = harness(kernel, specs, golden, runtime_cfg=cfg, compile_only=True,
                        verbose=False)
    except (PyptoError, ConstantError, ValueError, TypeError, NameError, SyntaxError) as err:
        p.verdict, p.reason = "compile error", _located(err)
        p.seconds = time.perf_counter() - t0
        return p
    p.compiles = True
    p.ub_use = ub_use(first)
    p.over_budget = over_budget(first)
    p.fits = not p.over_budget
    if not p.fits:
        p.verdict = "over budget"
        p.reason = "over the on-chip budget: " + "; ".join(p.over_budget)
    else:
        try:
            seed_global_generators(0)  # the same random inputs at every point
            result = harness(kernel, specs, golden, runtime_cfg=cfg, rtol=case.rtol,
                             atol=case.atol, verbose=False)
            rec = summarize(result)
            p.matches = bool(result.passed) if golden is not None else None
            p.verdict, p.reason, p.est_us_serial = rec["verdict"], rec["reason"], rec["est_us"]
            peaks = [peak.value for report in result.rings for peak in report.heap_peak]
            p.heap_peak = max(peaks) if peaks else None
            trace = getattr(result.sim, "trace", None)
            if trace is not None:
                p.estimate = estimate(trace)
                p.est_us = p.estimate.makespan_us
            if golden is None:
                p.verdict, p.reason = "no golden", "no golden_fn: outputs not checked"
        except PyptoError as err:
            p.matches, p.verdict, p.reason = False, "fault", _located(err)
    p.seconds = time.perf_counter() - t0
    return p
