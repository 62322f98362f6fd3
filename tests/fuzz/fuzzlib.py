"""The fuzz harness: run kernel sources (hand-written bad inputs and mutated valid kernels)
through compile and the simulator, each in a watched worker process, and classify how
each one ended.

The contract under test: every case either succeeds or ends in a *located* user error
(`pypto.errors.PyptoError` whose span points into the case's own file). Anything else is
a bug: an `InternalError`, another exception escaping the compiler or the simulator, a
hang, memory exhaustion, a worker that died, or a run that changed arrays it must not
(an `In` array, or any array of a run that failed: outputs are copied back only when a
run succeeds).

A case is one source file written to a temporary directory and imported from there, so
`inspect`/`linecache` resolve its lines exactly like a user's file. The module must
define `kernel` (a `@pl.jit` entry). Optional module attributes: `DYN` (extent of each
`pl.dynamic` dim for the random inputs) and `SCALARS` (values of scalar parameters).

Outcomes (`OK` = acceptable, the rest are failures):
  ran        compiled and ran on the simulator                               OK
  compiled   compiled; not run (its inputs would be too large)               OK
  user       located PyptoError raised by compile                            OK
  sim        located SimulationError (or other PyptoError) raised by a run   OK
  definition the decorator/annotation rejected it while the module was       OK
             imported (TypeError/ValueError from pypto.language, located by
             the Python traceback in the case file)
  python     the case is not valid Python (a generator artefact, not pypto's concern)
  unlocated  PyptoError without a span, or a span outside the case file      BUG
  internal   InternalError / InternalWarning                                 BUG
  crash      any other exception out of compile or run                      BUG
  clobbered  an array changed that the memory contract says must not        BUG
  timeout    the case exceeded its time budget                               BUG
  memory     MemoryError / the worker hit its address-space limit            BUG
  died       the worker process died (segfault, killed)                     BUG
"""
from __future__ import annotations

import dataclasses
import importlib.util
import linecache
import os
import re
import signal
import sys
import time
import traceback
import warnings
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SEEDS = HERE / "seeds"
CORPUS = HERE / "corpus"

OK_OUTCOMES = ("ran", "compiled", "user", "sim", "definition")
NEUTRAL_OUTCOMES = ("python",)
BUG_OUTCOMES = ("unlocated", "internal", "crash", "clobbered", "timeout", "memory", "died")

# Budgets. Kept small so a few hundred cases finish in well under a minute.
SOFT_TIMEOUT = 8.0  # seconds per case, raised inside the worker (SIGALRM)
HARD_TIMEOUT = 25.0  # seconds per case before the parent kills the worker
ADDRESS_SPACE = 6 << 30  # bytes of virtual memory a worker may map
SIM_TENSOR_CAP = 256 << 20  # the simulator's per-tensor cap while fuzzing
MAX_INPUT_BYTES = 32 << 20  # do not run a compiled case whose arguments exceed this
MAX_WORK = 20_000  # simulator loop-iteration/block budget per run


@dataclass
class Case:
    """One source file to try. `expect` (corpus only) is the outcome class name the case
    must end in and `line` the 1-based line its error must point at (None: any line)."""

    id: str
    source: str
    origin: str = ""
    desc: str = ""
    expect: str | None = None
    line: int | None = None


@dataclass
class Outcome:
    id: str
    outcome: str
    origin: str = ""
    desc: str = ""
    etype: str = ""
    message: str = ""
    file: str | None = None
    line: int | None = None
    col: int | None = None
    detail: str = ""  # traceback tail for bugs
    seconds: float = 0.0
    expect: str | None = None
    expect_line: int | None = None

    @property
    def bug(self) -> bool:
        return self.outcome in BUG_OUTCOMES

    def expectation_error(self) -> str | None:
        """For corpus cases: why the outcome does not match the expectation (None if it does)."""
        if self.expect is None:
            return None
        if self.bug:
            return f"{self.outcome}: {self.etype}: {self.message}"
        if self.expect == "definition":
            ok = self.outcome == "definition"
        elif self.expect == "ok":
            ok = self.outcome in ("ran", "compiled")
        else:
            ok = self.outcome in ("user", "sim") and self.expect in _mro_names(self.etype)
        if not ok:
            return (f"expected {self.expect}, got {self.outcome} "
                    f"{self.etype}: {self.message[:200]}")
        if self.expect_line is not None and self.line != self.expect_line:
            return (f"{self.etype} points at line {self.line}, expected line {self.expect_line}: "
                    f"{self.message[:200]}")
        return None

    def short(self) -> str:
        where = f" @{self.line}:{self.col}" if self.line else ""
        return f"[{self.outcome}] {self.id} ({self.desc}) {self.etype}{where}: {self.message[:160]}"


_MRO: dict[str, tuple[str, ...]] = {}


def _mro_names(etype: str) -> tuple[str, ...]:
    if not _MRO:
        import pypto.errors as E

        for name in dir(E):
            cls = getattr(E, name)
            if isinstance(cls, type) and issubclass(cls, BaseException):
                _MRO[name] = tuple(c.__name__ for c in cls.__mro__)
    return _MRO.get(etype, (etype,))


class CaseTimeout(BaseException):
    """Raised by SIGALRM inside a worker; a BaseException so no `except Exception` in
    pypto swallows it."""


# --- running one case -------------------------------------------------------------------------


def _on_alarm(signum: int, frame: Any) -> None:
    raise CaseTimeout()


def init_worker() -> None:
    """Per-process limits: address space, the simulator's tensor cap, warnings."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = ADDRESS_SPACE if hard == resource.RLIM_INFINITY else min(ADDRESS_SPACE, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError):  # not on this platform / not allowed
        pass
    import pypto.sim.device.fill as simmem

    simmem.MAX_TENSOR_BYTES = SIM_TENSOR_CAP
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, _on_alarm)


def _same_file(a: str | None, b: str) -> bool:
    return a is not None and os.path.realpath(a) == os.path.realpath(b)


def _tail(exc: BaseException, n: int = 6) -> str:
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    text = "".join(lines).rstrip().splitlines()
    return "\n".join(text[-2 * n:])


def _frame_line_in(exc: BaseException, path: str) -> int | None:
    """The line of the innermost traceback frame inside `path`."""
    line = None
    for fs in traceback.extract_tb(exc.__traceback__):
        if _same_file(fs.filename, path):
            line = fs.lineno
    return line


def _raised_in_pypto(exc: BaseException) -> bool:
    tb = traceback.extract_tb(exc.__traceback__)
    return bool(tb) and f"{os.sep}pypto{os.sep}" in tb[-1].filename


def _from_pypto_language(exc: BaseException) -> bool:
    tb = traceback.extract_tb(exc.__traceback__)
    return bool(tb) and f"{os.sep}pypto{os.sep}language{os.sep}" in tb[-1].filename


def _pypto_error(out: Outcome, err: Any, path: str, phase: str) -> Outcome:
    from pypto.errors import SimulationError

    span = getattr(err, "span", None)
    out.etype, out.message = type(err).__name__, getattr(err, "message", str(err))
    if span is not None and getattr(span, "known", False):
        out.file, out.line, out.col = span.file, span.line, span.col
    if span is None or not span.known or not _same_file(span.file, path):
        out.outcome = "unlocated"
        out.detail = f"span={span!r} (case file {path})\n" + _tail(err)
    else:
        out.outcome = "sim" if (phase == "run" or isinstance(err, SimulationError)) else "user"
    if _masked_bug(err):
        # the simulator located it, but an op implementation crashed or disagreed with its
        # type rule: a missing check in pypto, not a fault of the kernel
        out.outcome, out.detail = "internal", _tail(err.__cause__ or err)
    return out


_BUG_MARKERS = ("failed while simulating", "this is a bug in pypto")


def _masked_bug(err: Any) -> bool:
    text = f"{getattr(err, 'message', '')}\n{getattr(err, 'note', '') or ''}"
    return any(m in text for m in _BUG_MARKERS)


def _dim(d: Any, dyn: dict) -> int | None:
    from pypto.ir.nodes import Const, DynDim

    if isinstance(d, bool):
        return None
    if isinstance(d, int):
        return d
    if isinstance(d, Const) and isinstance(d.value, int):
        return int(d.value)
    if isinstance(d, DynDim):
        return int(dyn.get(d.name, 48))
    return None


def make_inputs(compiled: Any, module: Any, rng: Any) -> tuple | None:
    """Random arguments for the compiled entry, or None when they cannot be made or would
    be too large to run cheaply."""
    import numpy as np

    from pypto.ir.types import ScalarType, ShapedType

    dyn = dict(getattr(module, "DYN", {}) or {})
    scalars = dict(getattr(module, "SCALARS", {}) or {})
    args, total = [], 0
    for p in compiled.entry.params:
        t, name = p.var.type, p.var.name
        if isinstance(t, ShapedType):
            shape = [_dim(d, dyn) for d in t.shape]
            if any(d is None or d < 0 for d in shape):
                return None
            try:
                npdt = np.dtype(t.dtype.np)
            except Exception:  # noqa: BLE001 - a handle dtype has no array form
                return None
            n = int(np.prod(shape, dtype=object)) if shape else 1
            total += n * npdt.itemsize
            if total > MAX_INPUT_BYTES:
                return None
            args.append(_random_array(rng, shape, npdt))
        elif isinstance(t, ScalarType):
            if name in scalars:
                args.append(scalars[name])
            elif t.dtype.is_int():
                args.append(16)
            elif t.dtype.name == "BOOL":
                args.append(True)
            else:
                args.append(0.5)
        else:
            return None
    return tuple(args)


def _random_array(rng: Any, shape: list, dt: Any) -> Any:
    import numpy as np

    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -8
        return rng.integers(lo, 9, size=shape).astype(dt)
    return rng.standard_normal(shape).astype(np.float32).astype(dt)


def _snapshot(args: tuple) -> list:
    import numpy as np

    return [a.copy() if isinstance(a, np.ndarray) else None for a in args]


def _changed(before: Any, after: Any) -> bool:
    import numpy as np

    if before is None:
        return False
    return before.shape != after.shape or before.tobytes() != np.ascontiguousarray(after).tobytes()


def run_case(case: Case, workdir: str, run: bool = True) -> Outcome:
    """Import, compile and (when cheap) run one case in this process."""
    import numpy as np

    from pypto.errors import InternalError, InternalWarning, PyptoError
    from pypto.sim import SimConfig

    out = Outcome(case.id, "ran", case.origin, case.desc, expect=case.expect,
                  expect_line=case.line)
    safe = re.sub(r"[^A-Za-z0-9_]", "_", case.id)
    path = os.path.join(workdir, f"fuzzcase_{safe}.py")
    with open(path, "w") as fh:
        fh.write(case.source)
    linecache.checkcache(path)
    modname = f"fuzzcase_{safe}_{os.getpid()}"
    t0 = time.perf_counter()
    use_alarm = hasattr(signal, "setitimer") and (
        signal.getsignal(signal.SIGALRM) is _on_alarm)
    if use_alarm:
        signal.setitimer(signal.ITIMER_REAL, SOFT_TIMEOUT)
    phase = "import"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            warnings.simplefilter("error", InternalWarning)
            try:
                spec = importlib.util.spec_from_file_location(modname, path)
                module = importlib.util.module_from_spec(spec)
                sys.modules[modname] = module
                try:
                    spec.loader.exec_module(module)
                except SyntaxError as exc:
                    out.outcome, out.etype, out.message = "python", "SyntaxError", str(exc)
                    return out
                except PyptoError as exc:
                    return _pypto_error(out, exc, path, "import")
                except Exception as exc:  # noqa: BLE001 - classified below
                    out.etype, out.message = type(exc).__name__, str(exc)
                    out.line = _frame_line_in(exc, path)
                    out.file = path if out.line else None
                    if not _raised_in_pypto(exc):
                        out.outcome = "python"  # the module's own code failed (e.g. N // 0)
                    elif (isinstance(exc, (TypeError, ValueError)) and out.line is not None
                          and _from_pypto_language(exc)):
                        out.outcome = "definition"
                    else:
                        out.outcome, out.detail = "crash", _tail(exc)
                    return out
                kernel = getattr(module, "kernel", None)
                if kernel is None or not hasattr(kernel, "compile"):
                    out.outcome, out.message = "python", "the case defines no kernel"
                    return out
                phase = "compile"
                compiled = kernel.compile()
                out.outcome = "compiled"
                if not run:
                    return out
                rng = np.random.default_rng(zlib.crc32(case.id.encode()))
                args = make_inputs(compiled, module, rng)
                if args is None:
                    return out
                phase = "run"
                before = _snapshot(args)
                directions = [p.direction.value for p in compiled.entry.params]
                try:
                    kernel(*args, config=SimConfig(max_work=MAX_WORK))
                except PyptoError as err:
                    # a failed run leaves every caller array as it was, except Out/InOut
                    # arrays the error names as holding a partial result
                    partial = set(getattr(err, "partial_outputs", ()) or ())
                    bad = [p.var.name for p, d, b, a in
                           zip(compiled.entry.params, directions, before, args)
                           if _changed(b, a) and not (d != "In" and p.var.name in partial)]
                    if bad:
                        out.outcome = "clobbered"
                        out.message = f"a failed run changed {bad}"
                        return out
                    raise
                bad = [p.var.name for p, d, b, a in
                       zip(compiled.entry.params, directions, before, args)
                       if d == "In" and _changed(b, a)]
                if bad:
                    out.outcome = "clobbered"
                    out.message = f"the run changed pl.In arrays {bad}"
                    return out
                out.outcome = "ran"
                return out
            finally:
                sys.modules.pop(modname, None)
    except CaseTimeout as exc:
        out.outcome, out.message = "timeout", f"over {SOFT_TIMEOUT}s in {phase}"
        out.detail = _tail(exc, 12)
        if phase == "import" and not _raised_in_pypto(exc):
            out.outcome = "python"  # the module's own code spins (e.g. N = 10 ** 2 ** 40)
        return out
    except PyptoError as exc:
        return _pypto_error(out, exc, path, phase)
    except InternalError as exc:
        out.outcome, out.etype, out.message, out.detail = ("internal", "InternalError",
                                                           str(exc), _tail(exc))
        return out
    except InternalWarning as exc:
        out.outcome, out.etype, out.message, out.detail = ("internal", "InternalWarning",
                                                           str(exc), _tail(exc))
        return out
    except MemoryError as exc:
        out.outcome, out.etype, out.message, out.detail = ("memory", "MemoryError",
                                                           f"in {phase}", _tail(exc))
        return out
    except RecursionError as exc:
        out.outcome, out.etype, out.message, out.detail = ("crash", "RecursionError",
                                                           f"in {phase}", _tail(exc, 3))
        return out
    except Exception as exc:  # noqa: BLE001 - anything else is a bug to report
        out.outcome, out.etype, out.message, out.detail = ("crash", type(exc).__name__,
                                                           f"in {phase}: {exc}", _tail(exc))
        return out
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
        out.seconds = time.perf_counter() - t0
        try:
            os.unlink(path)
        except OSError:
            pass
    return out


# --- the corpus ------------------------------------------------------------------------------

_CELL = re.compile(r"^# %% (?P<name>[A-Za-z0-9_]+)\s*:\s*(?P<expect>[A-Za-z_]+)\s*$")


def load_corpus(directory: Path = CORPUS) -> list[Case]:
    """Cases from `corpus/*.py`. A corpus file is a shared header followed by cells; each
    cell starts with `# %% <name>: <Expected>` where Expected is a pypto.errors class
    name, `definition` (rejected while the module is imported) or `ok`; the line its
    error must point at carries a trailing `# ERR` comment (optional)."""
    cases = []
    for path in sorted(directory.glob("*.py")):
        lines = path.read_text().splitlines(keepends=True)
        starts = [i for i, t in enumerate(lines) if _CELL.match(t.rstrip("\n"))]
        header = lines[:starts[0]] if starts else lines
        for k, s in enumerate(starts):
            end = starts[k + 1] if k + 1 < len(starts) else len(lines)
            m = _CELL.match(lines[s].rstrip("\n"))
            body = header + lines[s:end]
            err = [i + 1 for i, t in enumerate(body) if re.search(r"#\s*ERR\s*$", t.rstrip())]
            if len(err) > 1:
                raise ValueError(f"{path.name}:{s + 1}: more than one # ERR marker")
            cases.append(Case(f"{path.stem}.{m['name']}", "".join(body), origin=path.name,
                              desc=m["name"], expect=m["expect"],
                              line=err[0] if err else None))
    names = [c.id for c in cases]
    dup = [n for n, k in Counter(names).items() if k > 1]
    if dup:
        raise ValueError(f"duplicate corpus case names: {dup}")
    return cases


# --- reporting --------------------------------------------------------------------------------


def counts(outcomes: list[Outcome]) -> Counter:
    return Counter(o.outcome for o in outcomes)


def summary(outcomes: list[Outcome], title: str) -> str:
    c = counts(outcomes)
    user = c["user"] + c["sim"] + c["definition"]
    ok = c["ran"] + c["compiled"]
    bugs = sum(c[k] for k in BUG_OUTCOMES)
    internal = c["internal"]
    lines = [f"{title}: {len(outcomes)} cases, {user} user errors "
             f"(compile {c['user']}, run {c['sim']}, definition {c['definition']}), "
             f"{ok} successes (ran {c['ran']}, compiled only {c['compiled']}), "
             f"{c['python']} not Python, internal errors = {internal}, "
             f"other bugs = {bugs - internal}"]
    for k in BUG_OUTCOMES:
        if c[k]:
            lines.append(f"  {k}: {c[k]}")
    return "\n".join(lines)


def asdict(o: Outcome) -> dict:
    return dataclasses.asdict(o)


# --- generated cases ----------------------------------------------------------------------------


def generate(n: int, seed: int = 0, engine: str = "hypothesis") -> list[Case]:
    """`n` distinct mutants of the seed kernels, deterministic for a given seed. `engine`
    is "hypothesis" (choices drawn by hypothesis, derandomized) or "random" (a seeded
    `random.Random` per case); "hypothesis" falls back to "random" when hypothesis is
    not installed."""
    import mutator

    sources = mutator.seed_sources()
    names = sorted(sources)
    out: list[Case] = []
    seen: set[str] = set()

    def add(ch: Any) -> None:
        seed_name = ch.choice(names)
        text, desc = mutator.mutate(sources[seed_name], ch)
        if desc == "unchanged" or text in seen:
            return
        seen.add(text)
        out.append(Case(f"gen{len(out):04d}_{seed_name[5:]}", text, origin=seed_name,
                        desc=desc))

    if engine == "hypothesis":
        try:
            import hypothesis  # noqa: F401
        except ImportError:
            engine = "random"
    if engine == "random":
        i = 0
        while len(out) < n and i < 20 * n:
            add(mutator.RandomChooser(seed * 1_000_003 + i))
            i += 1
        return out
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    @settings(max_examples=int(1.5 * n) + 10, derandomize=(seed == 0), database=None,
              phases=[Phase.generate], deadline=None, print_blob=False,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def collect(data: Any) -> None:
        add(mutator.HypothesisChooser(data))  # draws never depend on earlier examples

    if seed:
        collect = hseed(seed)(collect)
    collect()
    return out[:n]


# The pool lives in fuzzpool.py; callers reach it through this module.
from fuzzpool import run_cases  # noqa: E402,F401
