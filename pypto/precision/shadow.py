"""The float64 shadow run: where a kernel's values first drift from their exact values.

pypto-lib's precision-tuning guide localises a precision loss by hand: tag the
intermediates, dump them on the device, write a torch reference for each, and walk them
in dependency order until the first whose error blows up. The simulator holds every
intermediate, so `shadow_run` does it in one call:

1. it runs the kernel with a probe on every watched value (`instrument`: each op result
   made from a float, each load of a float tile) and records what each probe saw, per
   task, block and occurrence;
2. it runs the same program widened to float64 (`widen`: every float op in float64,
   every cast between floats the identity, integer arithmetic unchanged) on the same
   inputs, recording the same probes;
3. for each watched site, in the order the run first reached it, it measures the kernel's
   values against the shadow's with `error_distribution`'s measures (`measures`), and
   compares that error with the error of the values the site computes from (its
   sources): the **first divergence** is the first computing site whose rel-L2 error is
   at least `floor` and more than `ratio` times its sources' - the op or cast where the
   precision was lost, named by its line, function and the first task it ran in.

Both probed runs start fresh memory as zeros (a residue read is not a precision loss)
and run without the checks (the shadow's float64 tiles would not fit the kernel's UB).
Values are paired by (task, block, site, occurrence); a site whose control flow differs
between the runs (a branch on a float that rounding tipped) is reported, not compared.
"""
from __future__ import annotations

import dataclasses
import os
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from pypto.dfx.task_ids import RuntimeTaskIds
from pypto.ir import nodes as N
from pypto.ir.transform import walk
from pypto.ops.cast import cast_array
from pypto.ops.numeric import is_float_np
from pypto.ops.probe import probing
from pypto.ops.registry import all_ops
from pypto.precision.cast_audit import loses_values
from pypto.precision.instrument import COMPUTE, Site, instrument, widen
from pypto.precision.measures import ErrorMeasures, measure
from pypto.sim.config import SimConfig
from pypto.sim.entry import run_compiled

FLOOR = 1e-5
"""A rel-L2 error below this is float32 rounding noise, never a divergence."""
RATIO = 4.0
"""A site diverges when its error is more than this many times its sources' error."""

Key = tuple[int, int, int]  # (trace task id, block, occurrence)


@dataclass(frozen=True)
class Sample:
    """One value of a stage: where it ran and both sides of it."""

    task: int
    """The trace's task id."""
    task_label: str
    """Its runtime task id, as deps.json writes it (the trace's id when it has none)."""
    block: int
    occurrence: int
    """The how-many-th time the task's block reached the site (loops)."""
    kernel: np.ndarray
    shadow: np.ndarray
    rel_l2: float


@dataclass(frozen=True)
class Stage:
    """One watched site of the ladder: its values in the kernel against the shadow."""

    site: Site
    measures: ErrorMeasures
    inherited: float
    """The largest rel-L2 error among its sources (0: it computes from exact values)."""
    diverged: bool
    """Its own error jumped (module doc): a computing site, error >= floor, > ratio x
    inherited. The report's `first` is the first such stage."""
    task: int | None
    """The first task it ran in (its runtime task id, as deps.json names it), or the
    trace's id when the run has no runtime id for it."""
    task_label: str
    region: str | None
    samples: int
    """How many values (task x block x occurrence) were compared."""
    worst: Sample | None = None
    """The value with the largest rel-L2 error of all the site's values: what a figure
    of kernel - shadow draws."""
    casts: tuple[int, ...] = ()
    """The casts (site numbers) its value went through, this one included."""
    ties: tuple[int, int] | None = None
    """A cast's exact ties in this run: (how many of its input elements, of how many)
    lie halfway between two values of its target, where rounding ties away from zero
    (mode "round", the default) and to even ("rint", torch's `.to()`) differ; None for
    a site that is no cast from a float, or whose input was not watched."""
    reached: int = 0
    """How many values the kernel's run made there; `samples` of them were compared (the
    first ones, when the shadow's memory budget ran out)."""

    @property
    def rel_l2(self) -> float:
        return self.measures.rel_l2

    def heading(self) -> str:
        s = self.site
        mark = "  <- error jumps here" if self.diverged else ""
        return (f"[{s.number}] {s.where()}  {s.op} ({s.kind}, {s.dtype.name})  "
                f"task {self.task_label}{mark}")

    def lines(self) -> list[str]:
        out = [self.heading(),
               f"  inherited rel-L2 {self.inherited:.3e} -> {self.rel_l2:.3e}"
               + (f" ({self.rel_l2 / self.inherited:.1f}x)" if self.inherited > 0 else "")]
        if self.reached > self.samples:
            out.append(f"  compared the first {self.samples} of its {self.reached} values "
                       "(the shadow's memory budget, PYPTO_SIM_SHADOW_MIB)")
        if self.ties is not None:
            n, total = self.ties
            out.append(f"  exact ties: {n} of {total} input elements (where ties away from "
                       "zero and ties to even round apart)")
        out += ["  " + ln for ln in self.measures.lines()]
        return out


@dataclass(frozen=True)
class ShadowReport:
    """What the shadow comparison found (module doc)."""

    stages: tuple[Stage, ...]
    """Every compared site, in the order the kernel first reached it."""
    first: Stage | None
    """The first divergence, or None when no site's error jumped."""
    outputs: dict[str, ErrorMeasures]
    """Each output of the kernel against the shadow's."""
    islands: tuple[str, ...]
    """Ops the shadow ran in the kernel's dtype (`float_bits`), by line."""
    flow: tuple[str, ...]
    """Sites whose values the two runs did not produce alike (a branch tipped)."""
    floor: float = FLOOR
    ratio: float = RATIO

    def ties(self) -> dict[tuple[str, int, int], tuple[int, int]]:
        """Each cast's exact ties in this run, by its source position (file, line,
        column): what the cast audit joins its sites on."""
        return {(st.site.span.file, st.site.span.line, st.site.span.col): st.ties
                for st in self.stages if st.ties is not None}

    def divergences(self) -> list[Stage]:
        """Every stage whose error jumped, in run order (the first is `first`)."""
        return [s for s in self.stages if s.diverged]

    def stage(self, number: int) -> Stage:
        return next(s for s in self.stages if s.site.number == number)

    def text(self) -> str:
        out = [f"precision shadow (float64): {len(self.stages)} intermediate(s), in the "
               "order the kernel reached them"]
        for st in self.stages:
            out += st.lines()
        for name, m in self.outputs.items():
            out.append(f"output '{name}' against the shadow: rel-L2 {m.rel_l2:.3e}  "
                       f"cosine {m.cosine:.7f}")
        if self.islands:
            out.append("ran in the kernel's dtype (float bits, no float64 meaning): "
                       + "; ".join(self.islands))
        for f in self.flow:
            out.append(f"not compared: {f}")
        if self.first is None:
            out.append(f"first divergence: none (no op's rel-L2 error reached {self.floor:g} "
                       f"and grew more than {self.ratio:g}x over its inputs')")
        else:
            st = self.first
            s = st.site
            grew = (f"{st.rel_l2 / st.inherited:.0f}x its inputs' {st.inherited:.2e}"
                    if st.inherited > 0 else "from exact inputs")
            out.append(f"first divergence: {s.where()} {s.op} -> {s.dtype.name} "
                       f"(in '{s.function}', task {st.task_label}): rel-L2 "
                       f"{st.rel_l2:.3e}, {grew}")
        return "\n".join(out)


class _Recorder:
    """The probes' sink of one run: site -> key -> the value (a copy).

    A run can produce far more intermediate values than memory holds (decode_csa's
    shadow ran out of 24 GiB keeping them all), so each site keeps values only up to
    `per_site` bytes, the first ones the run reaches (`None`: all), and the second run
    keeps only the keys the first kept (`allowed`). Every value is counted in `reached`
    whether kept or not. `narrow` keeps float64 values as float32: the measures compare
    in float32 anyway."""

    def __init__(self, per_site: int | None = None,
                 allowed: dict[int, dict[Key, np.ndarray]] | None = None,
                 narrow: bool = False) -> None:
        self.values: dict[int, dict[Key, np.ndarray]] = defaultdict(dict)
        self.first_seen: dict[int, int] = {}
        self.regions: dict[int, str | None] = {}
        self.reached: dict[int, int] = defaultdict(int)
        self._bytes: dict[int, int] = defaultdict(int)
        self._count: dict[tuple[int, int, int], int] = defaultdict(int)
        self._per_site = per_site
        self._allowed = allowed
        self._narrow = narrow

    def __call__(self, frame: Any, site: int, value: Any) -> None:
        rec = getattr(frame, "rec", None)
        task = rec.id if rec is not None else getattr(frame, "task_id", -1)
        block = getattr(frame, "block", None)
        block = -1 if block is None else int(block)
        k = (task, block, site)
        n = self._count[k]
        self._count[k] = n + 1
        self.reached[site] += 1
        if site not in self.first_seen:
            self.first_seen[site] = len(self.first_seen)
            self.regions[site] = getattr(frame, "region", None)
        key = (task, block, n)
        if self._allowed is not None:
            if key not in self._allowed.get(site, ()):
                return
        elif self._per_site is not None and self._bytes[site] >= self._per_site:
            return
        v = np.asarray(value)
        kept = v.astype(np.float32) if self._narrow and v.dtype == np.float64 else \
            np.array(v, copy=True)
        self._bytes[site] += kept.nbytes
        self.values[site][key] = kept


BUDGET = 2 << 30
"""The bytes of shadow values a comparison keeps, shared out evenly over the sites
(`PYPTO_SIM_SHADOW_MIB` sets it in MiB); a site past its share compares the values it
kept, the first its run reached, and says how many that is of how many."""
BUDGET_ENV = "PYPTO_SIM_SHADOW_MIB"


def shadow_run(compiled: Any, args: list | tuple, config: SimConfig | None = None,
               floor: float = FLOOR, ratio: float = RATIO,
               budget: int | None = None) -> ShadowReport:
    """Run `compiled` (a CompiledProgram) on `args` and its float64 shadow, and compare
    them (module doc). `config`: the simulator options of the plain run (platform,
    padding, seed, devices); the checks, the args dump and residue memory are off here."""
    base = config or SimConfig()
    cfg = dataclasses.replace(base, checks=(), strict=False, trace=True, dump_args=0,
                              uninit="zero", out_start="fresh", oob_reads="warn")
    inst = instrument(compiled.program)
    kernel = dataclasses.replace(compiled, program=inst.program)
    shadow = dataclasses.replace(compiled, program=widen(inst.program))

    if budget is None:
        budget = int(float(os.environ.get(BUDGET_ENV) or 0) * (1 << 20)) or BUDGET
    per_site = max(budget // max(len(inst.sites), 1), 1 << 16)
    # the shadow first: what it keeps (its first values per site, within the budget) is
    # what the kernel's run keeps too
    exact = _Recorder(per_site=per_site, narrow=True)
    with probing(exact):
        ran_exact = run_compiled(shadow, tuple(_copy(a, wide=True) for a in args), None, cfg)
    got = _Recorder(allowed=exact.values)
    with probing(got):
        ran = run_compiled(kernel, tuple(_copy(a, wide=False) for a in args), None, cfg)

    labels = _task_labels(ran, compiled)
    measured: dict[int, ErrorMeasures] = {}
    first_task: dict[int, int] = {}
    samples: dict[int, int] = {}
    reached: dict[int, int] = {}
    worst: dict[int, Sample] = {}
    flow: list[str] = []
    sites = {s.number: s for s in inst.sites}
    for number in sorted(got.first_seen, key=got.first_seen.__getitem__):
        mine, theirs = got.values.get(number, {}), exact.values.get(number, {})
        keys = [k for k in mine if k in theirs]
        if got.reached[number] != exact.reached.get(number, 0):
            flow.append(f"{sites[number].where()} {sites[number].op}: the kernel reached it "
                        f"{got.reached[number]} time(s), the shadow "
                        f"{exact.reached.get(number, 0)}")
        if not keys:
            continue
        a = np.concatenate([_f32(mine[k]) for k in keys])
        e = np.concatenate([_f32(theirs[k]) for k in keys])
        measured[number] = measure(a, e)
        worst[number] = _worst(keys, mine, theirs, labels)
        first_task[number] = min(k[0] for k in keys)
        samples[number] = len(keys)
        reached[number] = got.reached[number]

    stages: list[Stage] = []
    first: Stage | None = None
    for number in sorted(measured, key=got.first_seen.__getitem__):
        site = sites[number]
        m = measured[number]
        inherited = max((measured[s].rel_l2 for s in site.sources if s in measured),
                        default=0.0)
        err = m.rel_l2
        jumped = (site.kind == COMPUTE and np.isfinite(err) and err >= floor
                  and err > ratio * inherited)
        tid = first_task[number]
        raw, label = labels.get(tid, (tid, _trace_label(tid)))
        st = Stage(site, m, inherited, bool(jumped), raw, label, got.regions.get(number),
                   samples[number], worst[number], _casts(site, sites), _ties(site, sites, got),
                   reached[number])
        if jumped and first is None:
            first = st
        stages.append(st)

    outputs = {}
    exact_out = getattr(ran_exact, "outputs", None) or {}
    for name, value in (getattr(ran, "outputs", None) or {}).items():
        other = exact_out.get(name)
        if isinstance(value, np.ndarray) and isinstance(other, np.ndarray) and \
                value.shape == other.shape:
            outputs[name] = measure(_f32(value), _f32(other))
    return ShadowReport(tuple(stages), first, outputs, _islands(compiled.program),
                        tuple(flow), floor, ratio)


def _worst(keys: list[Key], mine: dict, theirs: dict, labels: dict) -> Sample:
    best: tuple[float, Key] | None = None
    for k in keys:
        a, e = mine[k].astype(np.float64), theirs[k].astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            err = float(np.linalg.norm(a - e) / max(float(np.linalg.norm(e)), 1e-12))
        if best is None or err > best[0] or (np.isnan(err) and not np.isnan(best[0])):
            best = (err, k)
    assert best is not None
    k = best[1]
    label = labels.get(k[0], (k[0], _trace_label(k[0])))[1]
    return Sample(k[0], label, k[1], k[2], np.array(mine[k]), np.array(theirs[k]), best[0])


def _casts(site: Site, sites: dict[int, Site]) -> tuple[int, ...]:
    seen: set[int] = set()
    todo = [site.number]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        todo.extend(sites[n].sources)
    return tuple(sorted(n for n in seen if sites[n].converts))


def _ties(site: Site, sites: dict[int, Site], got: _Recorder) -> tuple[int, int] | None:
    """The exact ties among the inputs of cast `site` in the kernel's run (`Stage.ties`):
    its one watched source's values, paired with its own by key."""
    if not site.converts or len(site.sources) != 1:
        return None
    source = site.sources[0]
    if not sites[source].dtype.is_float() or not loses_values(sites[source].dtype, site.dtype):
        return None
    mine, inputs = got.values.get(site.number, {}), got.values.get(source, {})
    n = total = 0
    for key, out in mine.items():
        v = inputs.get(key)
        if v is None or v.size != out.size:
            return None  # the cast's operand is not that value as it is
        v = v[~np.isnan(v.astype(np.float64))]
        away = cast_array(v, site.dtype, "round")
        even = cast_array(v, site.dtype, "rint")
        n += int(np.count_nonzero(away != even))
        total += int(out.size)
    return (n, total) if mine else None


def _copy(a: Any, wide: bool) -> Any:
    """An argument of a probed run: a copy (the caller's arrays stay as they are), a
    float array in float64 for the shadow."""
    if not isinstance(a, np.ndarray):
        return a
    if wide and is_float_np(a.dtype):
        return a.astype(np.float64)
    return a.copy()


def _f32(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype != np.float32:
        a = a.astype(np.float32)
    return a.reshape(-1)


def _trace_label(tid: int) -> str:
    """A task the runtime's view has no id for (nested in another's launch): the trace's."""
    return f"#{tid} (trace id)"


def _task_labels(ran: Any, compiled: Any) -> dict[int, tuple[int, str]]:
    """Trace task id -> (runtime task id, its hex), as deps.json names the task."""
    trace = getattr(ran, "trace", None)
    if trace is None:
        return {}
    ids = RuntimeTaskIds.of_run(trace, compiled.program, compiled.analyses)
    return {t.id: (ids.raw(t.id), ids.hex(t.id)) for t in trace.tasks if t.id in ids}


def _islands(program: N.Program) -> tuple[str, ...]:
    ops = all_ops()
    out = []
    for fn in program.functions:
        for node in walk(fn):
            op = ops.get(node.op) if isinstance(node, N.Call) else None
            if op is not None and op.on_float_bits(node):
                at = f"{node.span.file}:{node.span.line}" if node.span.known else fn.name
                out.append(f"{at} {node.op}")
    return tuple(dict.fromkeys(out))
