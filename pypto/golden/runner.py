"""`run` / `run_jit`: compile a kernel, build its inputs from specs, compute the golden,
run the simulator, validate, and explain the result.

Stages: compile -> generate inputs -> simulate -> compute golden -> validate. pypto-lib
computes the golden before the device run, on clones of every input, so that a golden
writing into its inputs cannot change what the device reads; here the simulation runs
first, so the golden may take the very arrays the simulator read (it never writes a
`pl.Tensor` argument's host array) and a run holds its inputs once instead of three
times (a DeepSeek layer's weights are several GB). The golden still gets its own copy
of every array the simulation wrote (`InOut` initial values). A golden that writes into
an input anyway is told (torch counts in-place writes: `Tensor._version`), and a
simulation that raises still computes and saves the goldens when `save_data` asks.

Parameter directions come from the compiled entry function, never from the specs:
a `pl.Out` parameter is not uploaded (it starts as fresh device memory), a `pl.InOut`
parameter is uploaded from its spec's `init_value`, and only `Out` / `InOut`
parameters are copied back - a result written into a plain `pl.Tensor` parameter reads
back as its initial host value, as on hardware.

Fresh device memory follows the platform asked for (`fresh_memory`), by the L2 guide's
rule: the runtime neither uploads nor clears a pure `pl.Out` buffer, so what the kernel
does not write is allocator residue - "often zero on a2a3, garbage or NaN on a2a3sim".
On the simulator platforms (`a2a3sim`, `a5sim`, and no platform at all: the simulator's
own default, `a2a3sim`) it is NaN residue here, so a golden that asserts zeros over a
region the kernel never writes fails, with the unwritten-region diagnosis and its fixes.
On a device platform (`a2a3`, `a5`) it reads as zeros, and a run that passes only
because of them says so, per output, with the region and the fixes
(`OutputCheck.zero_fill`): the pass is platform luck. Reads past the end of a tensor
do not stop the run either (the device reads whatever follows it): they read fresh
memory and are listed in `RunResult.warnings`.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from pypto.dfx import artifacts as dfx_artifacts
from pypto.dfx import knobs
from pypto.dfx.build_dir import BuildDir, default_root
from pypto.errors import PyptoError
from pypto.golden import _interop as io
from pypto.golden import data
from pypto.golden.binding import bind_specs
from pypto.golden.diagnosis import check_zero_fill, diagnose, diagnose_through_unwritten
from pypto.golden.record import emit
from pypto.golden.report import OutputCheck, RunResult
from pypto.golden.sim_options import config_options, fresh_memory, sim_options
from pypto.golden.spec import ScalarSpec, TensorSpec
from pypto.golden.validation import ElementRule, check_outputs, default_compare
from pypto.ir import dtypes
from pypto.ir.dtypes import DType
from pypto.ir.nodes import Program
from pypto.platform import DEFAULT_PLATFORM
from pypto.precision import cast_audit
from pypto.precision.shadow import ShadowReport, shadow_run
from pypto.sim import simulate
from pypto.sim.config import SimConfig
from pypto.sim.runtime.rings import RingCapacities

# hardware platform -> the simulator that stands in for it
SIM_TWIN = {"a2a3": "a2a3sim", "a5": "a5sim", "a2a3sim": "a2a3sim", "a5sim": "a5sim"}
_RUNTIME_KEYS = {"platform", "device_id", "enable_chip_swimlane", "enable_dump_args",
                 "enable_pmu", "enable_dep_gen", "enable_scope_stats", "log_level",
                 "ring_heap", "ring_task_window", "ring_dep_pool", "device_ids",
                 "num_sub_workers",
                 # pypto-lab extensions: simulator checks and strictness (the workbench
                 # runs every check non-strictly and draws what they find), fresh memory
                 "sim_checks", "sim_strict", "sim_uninit",
                 # the float64 precision shadow run (`pypto.precision.shadow`)
                 "sim_shadow"}
_COMPILE_KEYS = {"dump_passes", "distributed_config", "save_kernels_dir", "output_dir",
                 "compile_profiling", "strategy", "profiling", "skip_ptoas", "backend_type",
                 "platform"}
_warned: set = set()


def _note(msg: str, verbose: bool = True) -> None:
    if verbose:
        print(msg, flush=True)


def _warn_once(msg: str) -> None:
    if msg not in _warned:
        _warned.add(msg)
        print(f"[RUN]   note: {msg}", flush=True)


def sim_platform(platform: str | None, verbose: bool = True) -> str:
    """The simulator platform to use for a requested platform (one-line notice on a map)."""
    if platform is None:
        return DEFAULT_PLATFORM
    if platform not in SIM_TWIN:
        raise ValueError(f"unknown platform {platform!r}; expected one of {sorted(SIM_TWIN)}")
    twin = SIM_TWIN[platform]
    if twin != platform and verbose:
        _warn_once(f"platform {platform} runs on its simulator twin {twin}")
    return twin


class _Clock:
    """Stage timings, printed as one short line each."""

    def __init__(self, verbose: bool):
        self.verbose = verbose
        self.start = time.time()
        self.stages: dict[str, float] = {}

    def stage(self, name: str):
        clock = self

        class _Stage:
            def __enter__(self):
                self.t0 = time.time()

            def __exit__(self, exc_type, *_):
                dt = time.time() - self.t0
                clock.stages[name] = dt
                if clock.verbose and exc_type is None:
                    print(f"[RUN] {name} done ({dt:.2f}s)", flush=True)
                return False

        return _Stage()

    @property
    def elapsed(self) -> float:
        return time.time() - self.start


# ----------------------------------------------------------------------------------------
# replay files










# ----------------------------------------------------------------------------------------
# the run


def _compile(target: Any, specs: list, platform: str) -> Any:
    """Compile a @pl.jit function, a @pl.program class, or pass a CompiledProgram through."""
    if hasattr(target, "program") and hasattr(target, "analyses"):
        return target  # already compiled
    dummies = [s.to_python() if isinstance(s, ScalarSpec)
               else np.empty(s.shape, dtype=s.np_dtype) for s in specs]
    if not hasattr(target, "compile"):
        raise TypeError(f"cannot compile {target!r}: expected a @pl.jit function, a @pl.program "
                        "class or a CompiledProgram")
    return target.compile(*dummies, platform=platform)


def _simulate(compiled: Any, args: list, platform: str, uninit: str,
              runtime_cfg: dict | None = None, devices: Any = None,
              config: dict | None = None) -> Any:
    opts = sim_options()
    opts.update(config or {})
    opts["uninit"] = uninit
    # the harness does not upload a pure pl.Out's host buffer (TensorSpec; the L2
    # guide): the kernel starts from fresh memory, unlike a direct call
    opts["out_start"] = "fresh"
    opts["oob_reads"] = "warn"  # the device reads what follows; the report says so
    cfg = runtime_cfg or {}
    if cfg.get("sim_checks") is not None:
        opts["checks"] = tuple(cfg["sim_checks"])
    if cfg.get("sim_strict") is not None:
        opts["strict"] = bool(cfg["sim_strict"])
    if devices is not None:
        opts["device_ids"] = tuple(devices)
    dump_args = knobs.DfxRequest.of(cfg, {}).dump_args  # (validated by the harness)
    if dump_args:
        opts["dump_args"] = dump_args
    return simulate(compiled, *args, platform=platform, **opts)


def _devices(compile_cfg: dict, runtime_cfg: dict) -> Any:
    """The devices of a multi-card run: `compile_cfg["distributed_config"].device_ids`
    (what pypto-lib passes), else `runtime_cfg["device_ids"]`; None for one card."""
    dist = compile_cfg.get("distributed_config")
    if dist is not None:
        return getattr(dist, "device_ids", None)
    return runtime_cfg.get("device_ids")


def _sim_outputs(sim: Any) -> dict:
    outs = getattr(sim, "outputs", None)
    if outs is None and isinstance(sim, dict):
        outs = sim
    return dict(outs or {})


def _harness(kind: str, target: Any, specs: list, golden_fn: Callable | None,
             golden_data: str | None, compile_cfg: dict | None, runtime_cfg: dict | None,
             rtol: float, atol: float, compare_fn: dict | None, compile_only: bool,
             runtime_dir: str | None, save_data: bool, verbose: bool, extra: dict
             ) -> RunResult:
    compile_cfg = dict(compile_cfg or {})
    runtime_cfg = dict(runtime_cfg or {})
    compare_fn = dict(compare_fn or {})
    extra = dict(extra)
    sim_config = config_options(extra.pop("config", None))
    for key in extra:
        _warn_once(f"{kind}() ignores keyword {key!r} on the simulator")
    for key in runtime_cfg:
        if key not in _RUNTIME_KEYS:
            _warn_once(f"runtime_cfg key {key!r} has no meaning on the simulator; ignored")
    for key in compile_cfg:
        if key not in _COMPILE_KEYS:
            _warn_once(f"compile_cfg key {key!r} is not used by pypto-lab; ignored")
    name = getattr(target, "__name__", None) or type(target).__name__
    clock = _Clock(verbose)
    tensor_specs = [s for s in specs if isinstance(s, TensorSpec)]
    scalar_specs = [s for s in specs if isinstance(s, ScalarSpec)]
    work_dir: Path | None = None

    def fail(error: str, **kw: Any) -> RunResult:
        return RunResult(passed=False, error=error, execution_time=clock.elapsed,
                         work_dir=work_dir, name=name, stages=clock.stages, **kw)

    if compile_only and runtime_dir is not None:
        return fail("runtime_dir is incompatible with compile_only")
    knobs.apply_overrides(runtime_cfg, compile_cfg)  # pypto-sim's --enable-* flags
    try:
        shadow = shadow_request(runtime_cfg)
        request = knobs.DfxRequest.of(runtime_cfg, compile_cfg)
        # the ring capacities the runtime would start with (PTO2_RING_* may be set by the
        # kernel file at import, before this runs)
        capacities = RingCapacities.resolve(ring_heap=runtime_cfg.get("ring_heap"),
                                            ring_task_window=runtime_cfg.get("ring_task_window"),
                                            ring_dep_pool=runtime_cfg.get("ring_dep_pool"))
    except ValueError as err:
        return fail(str(err))
    if verbose:
        for text in knobs.notes(runtime_cfg, compile_cfg, request):
            _warn_once(text)
    requested = runtime_cfg.get("platform") or compile_cfg.get("platform")
    platform = sim_platform(requested, verbose)
    try:
        uninit = fresh_memory(requested, runtime_cfg)
    except ValueError as err:
        return fail(str(err))
    if runtime_dir is not None:
        work_dir = Path(runtime_dir)
        if not work_dir.is_dir():
            return fail(f"runtime_dir does not exist: {work_dir}")
        _note(f"[RUN] runtime_dir {work_dir}: the simulator has no build to reuse; compiling "
              "from source", verbose)
    else:
        out = compile_cfg.get("output_dir") or compile_cfg.get("save_kernels_dir")
        work_dir = Path(out) if out else default_root(name)
    build = BuildDir(work_dir)
    produced: list[dfx_artifacts.Artifact] = []

    with clock.stage("compile"):
        compiled = _compile(target, specs, platform)
    if request.dump_passes:
        produced += _announce(dfx_artifacts.write_passes(compiled, build), verbose)
    if compile_only:
        _note(f"[RUN] PASS ({clock.elapsed:.2f}s)", verbose)
        return RunResult(passed=True, execution_time=clock.elapsed, work_dir=work_dir,
                         name=name, platform=platform, compiled=compiled, validated=False,
                         stages=clock.stages, artifacts=produced)
    binding = bind_specs(compiled, specs)
    if binding.error:
        return fail(binding.error, platform=platform, compiled=compiled)
    if binding.note and verbose:
        _warn_once(binding.note)
    directions, kernel_names = binding.directions, binding.kernel_names

    data_dir = Path(golden_data) if golden_data is not None else None
    torch_run = any(s.uses_torch for s in specs)

    # -- inputs ------------------------------------------------------------------------
    with clock.stage("generate inputs"):
        scalars = {s.name: s for s in scalar_specs}
        if data_dir is None:
            host: dict[str, np.ndarray] = {}
            for s in tensor_specs:
                host[s.name] = np.ascontiguousarray(s.create_array())
        else:
            missing = [str(data_dir / sub / f"{n}.npy|.pt") for sub, n in
                       (r for s in specs for r in data.required_files(s))
                       if data.data_file(data_dir / sub, n) is None]
            if missing:
                return fail(f"golden_data is missing files: {missing}", platform=platform,
                            compiled=compiled)
            _note(f"[RUN]   cache hit: {data_dir / 'in'}", verbose)
            host = {}
            for s in tensor_specs:
                if data.starts_at_zero(s):
                    host[s.name] = np.zeros(s.shape, dtype=s.np_dtype)
                else:
                    host[s.name] = data.load_array(data.data_file(data_dir / "in", s.name),
                                                   s.np_dtype)
            for sc in scalar_specs:
                v = data.load_array(data.data_file(data_dir / "in", sc.name), sc.np_dtype)
                if v.ndim != 0:
                    return fail(f"{sc.name}: replayed scalar must be 0-dim, got shape "
                                f"{v.shape}", platform=platform, compiled=compiled)
                if v.dtype != sc.np_dtype:
                    return fail(f"{sc.name}: replayed scalar dtype {v.dtype} differs from the "
                                f"spec's {sc.np_dtype}", platform=platform, compiled=compiled)
                scalars[sc.name] = ScalarSpec(sc.name, sc.dtype, data.replayed_scalar(v, sc))
        for s in tensor_specs:
            a = host[s.name]
            if tuple(a.shape) != tuple(s.shape):
                _warn_once(f"'{s.name}': init_value has shape {tuple(a.shape)}, spec says "
                           f"{tuple(s.shape)}")
        written = {n for n, d in directions.items() if d in ("Out", "InOut")}
        kept = data.before_run(tensor_specs, host, written)
        if save_data and data_dir is None:
            for s in tensor_specs:
                if not data.starts_at_zero(s):
                    data.save_array(work_dir / "data" / "in", s.name,
                                    data.initial_value(s, host, kept), torch_run)
            for sc in scalar_specs:
                data.save_array(work_dir / "data" / "in", sc.name, np.asarray(
                    sc.value if not io.is_torch_tensor(sc.value) else io.to_numpy(sc.value)),
                    torch_run)

    def golden_stage() -> tuple[dict[str, np.ndarray] | None, list[str]]:
        if data_dir is None and golden_fn is None:
            return None, []
        with clock.stage("compute golden"):
            if data_dir is not None:
                _note(f"[RUN]   cache hit: {data_dir / 'out'}", verbose)
                return {s.name: data.load_array(data.data_file(data_dir / "out", s.name),
                                                s.np_dtype)
                        for s in tensor_specs if s.is_output}, []
            assert golden_fn is not None
            made = data.compute_golden(specs, scalars, host, kept, golden_fn, torch_run)
            if save_data:
                for n, g in made.outputs.items():
                    data.save_array(work_dir / "data" / "out", n, g, torch_run)
                _note(f"[RUN]   saved inputs and goldens under {work_dir / 'data'}", verbose)
            return made.outputs, made.written

    # -- simulate ------------------------------------------------------------------------
    with clock.stage("simulate"):
        args = [scalars[s.name].to_python() if isinstance(s, ScalarSpec) else host[s.name]
                for s in binding.ordered]
        # the shadow starts from the inputs the plain run starts from (it fills its Outs)
        shadow_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args] \
            if shadow else None
        try:
            sim = _simulate(compiled, args, platform, uninit, runtime_cfg,
                            _devices(compile_cfg, runtime_cfg), sim_config)
        except Exception:
            if save_data and golden_fn is not None and data_dir is None:
                golden_stage()  # a crashing kernel still leaves its goldens saved
            raise
        outs = _sim_outputs(sim)
        for s in tensor_specs:
            kname = kernel_names[s.name]
            if directions.get(s.name) in ("Out", "InOut") and kname in outs:
                got = np.asarray(io.to_numpy(outs[kname]))
                if got.dtype != s.np_dtype and got.dtype.kind in "iu" and \
                        s.np_dtype.kind in "iu" and got.dtype.itemsize == s.np_dtype.itemsize:
                    got = got.view(s.np_dtype)  # e.g. a UINT16 output given as an int16 spec
                host[s.name] = got
    del args
    produced += _announce(dfx_artifacts.write_run(request, sim, compiled, build), verbose)
    # -- the runtime's rings: a run that outgrows one dies on the device before its end
    rings = dfx_artifacts.ring_reports(sim, capacities)
    if request.scope_stats:
        produced += _announce(dfx_artifacts.write_scope_stats(rings, build), verbose)
    dead = next((r.deadlock for r in rings if r.deadlock is not None), None)
    if dead is not None:
        _note(f"[RUN]   {dead.message()}", verbose)
        return fail(dead.message(), platform=platform, compiled=compiled, sim=sim,
                    artifacts=produced, rings=rings)

    # -- golden --------------------------------------------------------------------------
    golden, golden_wrote = golden_stage()
    warnings = [f"read past the end of a tensor: {r}; the device reads whatever follows "
                f"the tensor ({'zeros' if uninit == 'zero' else 'residue'} here)"
                for r in getattr(sim, "oob_reads", None) or ()]
    warnings += [f"golden_fn wrote into input '{n}' (not an output); the comparators and "
                 "the diagnosis read its modified values (clone it in the golden to keep "
                 "it)" for n in golden_wrote]
    for w in warnings:
        _note(f"[RUN]   warning: {w}", verbose)
    if knobs.bench_enabled():
        trace = getattr(sim, "trace", None)
        for line in knobs.bench_lines(dfx_artifacts.critical_path_us(sim),
                                      trace.est_us_serial() if trace is not None else None,
                                      replay=runtime_dir is not None):
            _note(line, verbose)

    # -- validate ------------------------------------------------------------------------
    report = None
    if shadow_args is not None:
        with clock.stage("shadow"):
            report = _shadow(compiled, shadow_args, platform, compile_cfg, runtime_cfg,
                             sim_config, warnings, verbose)
        del shadow_args
    base = dict(name=name, platform=platform, compiled=compiled, sim=sim, work_dir=work_dir,
                artifacts=produced, rings=rings, shadow=report)
    if golden is None:
        _note(f"[RUN] PASS ({clock.elapsed:.2f}s, validation skipped: no golden_fn or "
              "golden_data)", verbose)
        return RunResult(passed=True, execution_time=clock.elapsed, validated=False,
                         stages=clock.stages, warnings=warnings, **base)
    with clock.stage("validate"):
        checks = _validate(tensor_specs, scalars, host, golden, directions, rtol, atol,
                           compare_fn, torch_run, sim, verbose, uninit, kernel_names,
                           compiled.program)
    failed = [c for c in checks.values() if not c.passed]
    result = RunResult(passed=not failed, execution_time=clock.elapsed, outputs=checks,
                       stages=clock.stages, warnings=warnings, rtol=rtol, atol=atol,
                       cast_audit=_audit_casts(compiled, golden_fn, tensor_specs, report),
                       **base)
    for c in checks.values():
        if c.zero_fill is not None:
            _note(f"[RUN]   warning: '{c.name}' passes only because fresh memory on "
                  f"{requested or platform} reads as zeros: {c.zero_fill.count} element(s) "
                  f"{c.zero_fill.region_text(c.shape)} are never written (allocator "
                  f"residue: often zero on a2a3, NaN on a2a3sim); see result.report()",
                  verbose)
    if failed:
        result.error = (f"Output(s) does not match golden: {[c.name for c in failed]}\n"
                        + "\n".join("  " + ln for c in failed for ln in c.lines()))
        return result
    _note(f"[RUN] PASS ({clock.elapsed:.2f}s)", verbose)
    return result






SHADOW_ENV = "PYPTO_SIM_SHADOW"  # the default of runtime_cfg["sim_shadow"]


def shadow_request(runtime_cfg: dict) -> str | None:
    """The precision shadow a run asks for: runtime_cfg["sim_shadow"] (pypto-sim's
    `--shadow`), else $PYPTO_SIM_SHADOW; None for none, `ValueError` for one we do not
    have."""
    value = runtime_cfg.get("sim_shadow")
    if value is None:
        value = os.environ.get(SHADOW_ENV) or None
    if value in (None, False, "", "off", "none"):
        return None
    if value not in knobs.SHADOW_PRECISIONS:
        raise ValueError(f"sim_shadow={value!r}: the precision shadow runs in "
                         f"{' or '.join(knobs.SHADOW_PRECISIONS)} (or is off: None)")
    return str(value)


def _shadow(compiled: Any, args: list, platform: str, compile_cfg: dict, runtime_cfg: dict,
            sim_config: dict | None, warnings: list, verbose: bool) -> ShadowReport | None:
    """The float64 shadow comparison of the run (`pypto.precision.shadow`), printed; a
    kernel the shadow cannot run leaves a warning saying why, and the verdict as it was."""
    devices = _devices(compile_cfg, runtime_cfg)
    options = dict(sim_config or {})
    options.update(platform=platform, device_ids=tuple(devices) if devices else None)
    try:
        report = shadow_run(compiled, args, SimConfig.from_any(options))
    except PyptoError as err:
        text = str(err).splitlines()[0]
        warnings.append(f"the precision shadow did not run: {text}")
        _note(f"[RUN]   warning: the precision shadow did not run: {text}", verbose)
        return None
    _note(report.text(), verbose)
    return report


def _audit_casts(compiled: Any, golden_fn: Callable | None, tensor_specs: list,
                 shadow: ShadowReport | None) -> cast_audit.CastAudit | None:
    """The cast audit of a program compiled from source (None for a stand-in program
    that has no IR to read), with the exact ties the shadow run counted."""
    if not isinstance(getattr(compiled, "program", None), Program):
        return None
    return cast_audit.audit(compiled.program, golden_fn, _emitted_dtypes(tensor_specs),
                            shadow.ties() if shadow is not None else None)


def _emitted_dtypes(tensor_specs: list) -> dict[str, DType]:
    """The dtype the kernel emits each output in (the binding made the spec's agree)."""
    out = {}
    for s in tensor_specs:
        if s.is_output:
            try:
                out[s.name] = dtypes.from_numpy(s.np_dtype)
            except TypeError:  # a dtype with no pl counterpart: nothing to audit there
                continue
    return out


def _announce(written: list, verbose: bool) -> list:
    """Print what each artifact is and how to view it (as pypto's runner does)."""
    for a in written:
        _note(f"[RUN]   {a.message}", verbose)
    return written


def _validate(tensor_specs: list, scalars: dict, host: dict, golden: dict, directions: dict,
              rtol: float, atol: float, compare_fn: dict, torch_run: bool, sim: Any,
              verbose: bool, uninit: str = "residue", kernel_names: dict | None = None,
              program: Any = None) -> dict[str, OutputCheck]:
    out_specs = [s for s in tensor_specs if s.is_output]
    actual = {s.name: host[s.name] for s in out_specs}
    inputs: dict[str, Any] = {s.name: host[s.name] for s in tensor_specs if not s.is_output}
    inputs.update({n: s.value for n, s in scalars.items()})
    wrap = (lambda d: {k: io.to_torch(v) if isinstance(v, np.ndarray) else v
                       for k, v in d.items()}) if torch_run else (lambda d: d)
    if not torch_run:
        inputs = {k: io.to_numpy(v) for k, v in inputs.items()}
    verdicts = check_outputs(wrap(actual), wrap(golden), rtol, atol, compare_fn, wrap(inputs),
                             echo=verbose)
    checks = {}
    for s in out_specs:
        ok, detail, label = verdicts[s.name]
        check = OutputCheck(name=s.name, passed=ok, comparator=label, detail=detail,
                            actual=actual[s.name], expected=golden[s.name],
                            direction=directions.get(s.name),
                            rule=ElementRule(compare_fn.get(s.name), rtol, atol,
                                             wrap(actual), wrap(inputs)))
        tensor = (kernel_names or {}).get(s.name, s.name)  # its name in the sim's trace
        if not ok:
            diagnose(check, s, sim, compare_fn.get(s.name, default_compare), rtol, atol,
                     tensor, program)
        elif uninit == "zero" and check.direction == "Out":
            check_zero_fill(check, s, sim, golden, rtol, atol, compare_fn, inputs, wrap,
                            tensor)
        checks[s.name] = check
    diagnose_through_unwritten(checks, sim, golden, rtol, atol, compare_fn, inputs, wrap,
                               kernel_names)
    return checks


# ----------------------------------------------------------------------------------------
# public entry points


def run_jit(fn: Any, specs: list, golden_fn: Callable | None = None,
            golden_data: str | None = None, compile_cfg: dict | None = None,
            runtime_cfg: dict | None = None, rtol: float = 1e-5, atol: float = 1e-5,
            compare_fn: dict | None = None, compile_only: bool = False,
            runtime_dir: str | None = None, save_data: bool = False, *,
            verbose: bool = True, **extra: Any) -> RunResult:
    """Compile a `@pl.jit` kernel, run it on the simulator and validate it.

    specs        TensorSpec / ScalarSpec per entry parameter, in parameter order
    golden_fn    golden_fn(values): fill the output entries of `values` in place
                 (pure outputs start as zeros, scalars are numbers); values are torch
                 tensors when the specs use torch (the inputs the simulator read, not
                 clones: a write into one is reported), else numpy arrays (copies)
    golden_data  a directory written by save_data (`in/`, `out/`, .npy or .pt files):
                 replaces input generation and golden_fn
    compile_cfg  pypto-lib RunConfig fields: `output_dir` / `save_kernels_dir` (the work
                 dir, default build_output/<name>_<timestamp>), `dump_passes`
                 (passes_dump/), `distributed_config`; the others print a note
    runtime_cfg  `platform` (a2a3/a5 run on their simulator twins), device_id, the DFX
                 knobs written under <work_dir>/dfx_outputs/ (`enable_dep_gen`,
                 `enable_dump_args`, `enable_chip_swimlane` and `enable_pmu` estimated;
                 docs/dfx.md); a knob the simulator does not honour prints a note
    rtol, atol   default tolerances (allclose, and comparators given None)
    compare_fn   {output name: comparator} replacing allclose for that output
    compile_only stop after compiling
    runtime_dir  must exist (pypto-lib reuses a build there); the simulator recompiles
    save_data    write inputs and goldens under <work_dir>/data/{in,out}/ for replay
    verbose      print the stage lines and per-output verdicts (pypto-lab extension)
    config       how to simulate (pypto-lab extension): a `pypto.sim.SimConfig` or a dict
                 of its options; its checks, strict, seed, padding, max_work, max_while
                 and batch are used (over PYPTO_SIM_CHECKS; runtime_cfg's sim_checks /
                 sim_strict win over it). Options the harness decides (platform,
                 devices, args dump, fresh memory, tracing) are refused with their knob.
    """
    return emit(_harness("run_jit", fn, specs, golden_fn, golden_data, compile_cfg,
                         runtime_cfg, rtol, atol, compare_fn, compile_only, runtime_dir,
                         save_data, verbose, extra))


def run(program: Any, specs: list, golden_fn: Callable | None = None,
        golden_data: str | None = None, compile_cfg: dict | None = None,
        runtime_cfg: dict | None = None, rtol: float = 1e-5, atol: float = 1e-5,
        compare_fn: dict | None = None, compile_only: bool = False,
        runtime_dir: str | None = None, save_data: bool = False, *,
        verbose: bool = True, **extra: Any) -> RunResult:
    """`run_jit` for a `@pl.program` class (or an already compiled program)."""
    return emit(_harness("run", program, specs, golden_fn, golden_data, compile_cfg,
                         runtime_cfg, rtol, atol, compare_fn, compile_only, runtime_dir,
                         save_data, verbose, extra))
