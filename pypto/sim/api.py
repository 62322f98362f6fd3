"""Entry points: `run_compiled` (what calling a `@pl.jit` kernel does) and `simulate`."""
from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from pypto.errors import SimulationError
from pypto.ir.nodes import Call, Const, Direction, DynDim, Function
from pypto.ir.types import ScalarType, ShapedType
from pypto.sim.memory import check_size
from pypto.sim.platform import Platform, get_platform


_CHOICES = {"padding": ("zero", "nan"), "uninit": ("residue", "zero"),
            "oob_reads": ("fault", "warn")}


@dataclass(frozen=True)
class SimConfig:
    """How to simulate.

    platform: "a2a3sim" (default: the compiled program's platform) or "a5sim".
    checks:   any of "oob" (bounds of every slice/load/store/assemble/read/write), "ub"
              (on-chip budget of every region), "race" (accesses of the same elements
              by tasks the runtime does not order; implies trace=True) and "uninit"
              (reads of memory nothing wrote); see `pypto.sim.sanitizers`. The core's
              default is ("oob", "ub"); the workbench runs all four. Argument checks
              and the work limits are always on.
    strict:   a race or an uninitialized read raises (`RaceError` after the run with
              every race in `err.report`; `UninitializedReadError` at the first read).
              With strict=False they are collected into `SimResult.races` /
              `SimResult.uninit_reads` and the run completes.
    trace:    record tasks, accesses, the task graph, costs and last writers.
    seed:     seeds the garbage pattern of uninitialised integer memory.
    padding:  what a load puts in the part of a tile outside its valid shape when no
              pad_value is given: "zero" (like the reference CPU backend) or "nan"
              (poison, to catch kernels that read padding).
    uninit:   contents of fresh device memory (`pl.Out` buffers, `pl.create_tensor`
              without init_value, `pl.create_tile`): "residue" (NaN / garbage, like
              hardware) or "zero".
    oob_reads: what a read past the end of a global tensor does under the "oob" check:
              "fault" (raise, naming tensor, region, block and window) or "warn" (record
              it in `SimResult.oob_reads` and read fresh memory - residue or zeros, per
              `uninit` - for the overhang, as the device reads whatever follows the
              tensor). Writes past the end always fault.
    max_work: fail fast past this many loop iterations + blocks in total.
    batch:    run the independent blocks of a `pl.parallel` launch loop / an SPMD launch
              as one vectorised pass when they only differ by affine offsets (same
              outputs and trace as block by block; see `pypto.sim.batch`).
    """

    platform: str | None = None
    checks: tuple = ("oob", "ub")
    strict: bool = True
    trace: bool = False
    seed: int = 0
    padding: str = "zero"
    uninit: str = "residue"
    oob_reads: str = "fault"
    max_work: int = 10 ** 8
    batch: bool = True

    def __post_init__(self) -> None:
        for field, allowed in _CHOICES.items():
            if getattr(self, field) not in allowed:
                raise ValueError(f"SimConfig.{field} must be one of "
                                 f"{', '.join(map(repr, allowed))}, got {getattr(self, field)!r}")

    @staticmethod
    def from_any(config: Any, **overrides: Any) -> "SimConfig":
        if isinstance(config, SimConfig):
            base = config
        elif config is None:
            if not overrides:
                return _DEFAULT_CONFIG  # sim speed: no per-call construct + replace
            base = SimConfig()
        elif isinstance(config, dict):
            base = SimConfig(**{k: v for k, v in config.items()
                                if k in SimConfig.__dataclass_fields__})
        else:  # a RunConfig-like object
            base = SimConfig(**{k: getattr(config, k) for k in SimConfig.__dataclass_fields__
                                if getattr(config, k, None) is not None})
        overrides = {k: v for k, v in overrides.items() if v is not None}
        if "checks" in overrides and overrides["checks"] is not None:
            overrides["checks"] = tuple(overrides["checks"])
        cfg = dataclasses.replace(base, **overrides)
        return dataclasses.replace(cfg, checks=check_names(cfg.checks))


CHECKS = ("oob", "ub", "race", "uninit")


def check_names(checks: Any) -> tuple:
    """`checks` as a tuple, rejecting unknown names."""
    if isinstance(checks, str):
        checks = tuple(c.strip() for c in checks.replace(" ", ",").split(",") if c.strip())
    checks = tuple(checks or ())
    bad = [c for c in checks if c not in CHECKS]
    if bad:
        raise ValueError(f"unknown simulator check(s) {', '.join(map(repr, bad))}; choose from "
                         f"{', '.join(CHECKS)}")
    return checks


_DEFAULT_CONFIG = SimConfig()


class SimResult:
    """The outcome of one simulated run."""

    def __init__(self, machine: Any, returns: tuple):
        self.platform: Platform = machine.platform
        self.config: SimConfig = machine.cfg
        self.returns = returns
        self.device: dict[str, np.ndarray] = {}
        self.outputs: dict[str, np.ndarray] = {}
        for buf in machine.buffer_list:
            self.device.setdefault(buf.name, buf.array)
            if buf.direction in ("Out", "InOut"):
                self.outputs[buf.name] = buf.array
        self.trace = machine.trace
        self.tasks = self.trace.tasks if self.trace is not None else []
        self.task_count = machine.next_tid
        #: checks=("race",): every race found (a `pypto.sim.sanitizers.RaceReport`), else None
        self.races = None
        #: checks=("uninit",) with strict=False: the reads of unwritten memory, else []
        self.uninit_reads: list = list(machine.uninit.reads) if machine.uninit is not None \
            else []
        #: oob_reads="warn": the reads past the end of a global tensor (`OobRead`), else []
        self.oob_reads: list = list(machine.oob_reads.values())

    def blame(self, tensor: str, index: Any) -> dict:
        if self.trace is None:
            raise ValueError("run with trace=True to know who wrote what")
        return self.trace.writers[tensor].blame(index)

    def __repr__(self) -> str:
        outs = ", ".join(f"{k}{list(v.shape)}" for k, v in self.outputs.items())
        return (f"<SimResult on {self.platform.name}: {self.task_count} tasks, "
                f"outputs: {outs or 'none'}>")


# --- arguments ----------------------------------------------------------------------


# torch dtypes numpy cannot hold: moved through a same-width integer view of their bits
_TORCH_BIT_VIEWS = {"bfloat16": "int16", "float8_e4m3fn": "uint8", "float8_e5m2": "uint8",
                    "float8_e8m0fnu": "uint8"}


def host_array(value: Any) -> Any:
    """A CPU torch tensor as a numpy array sharing its memory (so a kernel filling a
    `pl.Out` fills the tensor), bf16 / fp8 through a view of their bits as the
    `ml_dtypes` type; anything else is returned unchanged. torch is never imported:
    a tensor can only come from a caller that imported it."""
    if type(value).__module__.split(".")[0] != "torch" or not hasattr(value, "detach"):
        return value
    torch = sys.modules["torch"]
    t = value.detach()
    if t.device.type != "cpu":
        return value  # not host memory: left to the caller's error
    name = str(t.dtype).split(".", 1)[1]
    bits = _TORCH_BIT_VIEWS.get(name)
    if bits is not None and hasattr(ml_dtypes, name):
        return t.view(getattr(torch, bits)).numpy().view(getattr(ml_dtypes, name))
    return t.numpy()


def host_args(args: tuple) -> tuple:
    """`args` with every CPU torch tensor turned into a numpy array sharing its memory
    (`host_array`); the same tuple when there is none."""
    if all(type(a) is np.ndarray or type(a).__module__.split(".")[0] != "torch"
           for a in args):
        return args
    return tuple(host_array(a) for a in args)


def _as_host_array(value: Any, name: str, direction: str, span: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    value = host_array(value)
    if isinstance(value, np.ndarray):
        return value
    if direction != "In":
        raise SimulationError(
            f"argument '{name}' is pl.{direction}: pass a numpy array the kernel can fill in "
            f"place, not a {type(value).__name__}", span, tensor=name)
    try:
        return np.asarray(value)
    except Exception as exc:  # noqa: BLE001
        raise SimulationError(f"argument '{name}' cannot be read as an array: {exc}", span,
                              tensor=name) from None


def _eval_dim(d: Any, dyn: dict) -> int | None:
    if isinstance(d, int):
        return d
    if isinstance(d, Const):
        return int(d.value)
    if isinstance(d, DynDim):
        return dyn.get(d.name)
    if isinstance(d, Call):
        from pypto.ops.registry import get

        vals = [_eval_dim(a, dyn) for a in d.args]
        if any(v is None for v in vals):
            return None
        return int(get(d.op).impl(*vals))
    return None


def _dim_str(d: Any) -> str:
    return str(d)


def _static_spec(machine: Any, entry: Function) -> list | None:
    """Per parameter (name, numpy dtype, shape, direction) when every parameter is a
    tensor of static shape (the common case: `bind_arguments` checks those quickly)."""
    spec = machine.__dict__.get("_bind_spec", False)
    if spec is not False:
        return spec
    spec = []
    for p in entry.params:
        t = p.var.type
        if not isinstance(t, ShapedType) or not all(type(d) is int for d in t.shape):
            spec = None
            break
        try:
            check_size(tuple(t.shape), t.dtype.np, "", p.span)
        except SimulationError:
            spec = None
            break
        spec.append((p.var.name, np.dtype(t.dtype.np), tuple(t.shape), p.direction.value))
    machine.__dict__["_bind_spec"] = spec
    return spec


def _quick_hosts(machine: Any, entry: Function, args: tuple, kwargs: dict) -> dict | None:
    """The argument arrays by name when they pass every check at a glance (positional
    numpy arrays of the declared dtype and static shape, writable where written); None
    sends `bind_arguments` down the full path, which reports what is wrong."""
    spec = _static_spec(machine, entry)
    if spec is None or kwargs or len(args) != len(spec):
        return None
    hosts = {}
    nd = np.ndarray
    for (name, dt, shape, direction), v in zip(spec, args):
        if type(v) is not nd or v.dtype != dt or v.shape != shape or \
                (direction != "In" and not v.flags.writeable):
            return None
        hosts[name] = v
    return hosts


def bind_arguments(machine: Any, entry: Function, args: tuple, kwargs: dict) -> dict:
    hosts = _quick_hosts(machine, entry, args, kwargs)
    if hosts is not None:
        return _upload(machine, entry, hosts, hosts)
    params = entry.params
    kwargs = dict(kwargs or {})
    if len(args) > len(params):
        raise SimulationError(f"{entry.name}() takes {len(params)} arguments but "
                              f"{len(args)} were given", entry.span)
    values = {}
    for i, p in enumerate(params):
        name = p.var.name
        if i < len(args):
            values[name] = args[i]
        elif name in kwargs:
            values[name] = kwargs.pop(name)
        else:
            raise SimulationError(f"{entry.name}() is missing the argument '{name}'", p.span,
                                  tensor=name)
    if kwargs:
        raise SimulationError(f"{entry.name}() got unexpected keyword argument(s) "
                              f"{', '.join(sorted(kwargs))}", entry.span)
    dyn = machine.dyn
    dyn_src: dict[str, str] = {}
    hosts = {}
    # first pass: dtypes, ranks and dynamic dims
    for p in params:
        name, t, direction = p.var.name, p.var.type, p.direction.value
        v = values[name]
        if isinstance(t, ShapedType):
            host = _as_host_array(v, name, direction, p.span)
            hosts[name] = host
            want = t.dtype.np
            if host.dtype != want:
                raise SimulationError(
                    f"argument '{name}' has dtype {host.dtype} but the kernel declares "
                    f"{t.dtype!r} ({want})", p.span, tensor=name,
                    hint=f"convert it first, e.g. {name}.astype(" +
                         ("ml_dtypes.bfloat16" if t.dtype.name == "BF16" else f"np.{want}") + ")")
            if host.ndim != len(t.shape):
                raise SimulationError(
                    f"argument '{name}' has shape {list(host.shape)} (rank {host.ndim}) but the "
                    f"kernel declares {t} (rank {len(t.shape)})", p.span, tensor=name)
            for ax, d in enumerate(t.shape):
                if isinstance(d, DynDim):
                    got = int(host.shape[ax])
                    if d.name in dyn and dyn[d.name] != got:
                        raise SimulationError(
                            f"dynamic dim {d.name} is bound inconsistently: {dyn_src[d.name]} "
                            f"gives {dyn[d.name]} but '{name}' axis {ax} is {got}", p.span,
                            tensor=name, indices=[ax],
                            hint=f"every tensor sharing {d.name} must have the same extent there")
                    dyn[d.name] = got
                    dyn_src.setdefault(d.name, f"'{name}' axis {ax}")
    # second pass: check every remaining property of every argument before touching any,
    # so an argument error leaves all of the caller's arrays as they were
    for p in params:
        name, t, direction = p.var.name, p.var.type, p.direction.value
        v = values[name]
        if isinstance(t, ShapedType):
            host = hosts[name]
            for ax, d in enumerate(t.shape):
                want = _eval_dim(d, dyn)
                if want is not None and int(host.shape[ax]) != want:
                    raise SimulationError(
                        f"argument '{name}' has shape {list(host.shape)} but the kernel declares "
                        f"{t}: axis {ax} is {host.shape[ax]}, expected {want}"
                        + (f" ({_dim_str(d)})" if not isinstance(d, int) else ""),
                        p.span, tensor=name, indices=[ax])
            check_size(host.shape, host.dtype, f"argument '{name}'", p.span)
            if direction != "In" and not host.flags.writeable:
                raise SimulationError(f"argument '{name}' is pl.{direction} but the array is "
                                      "read-only", p.span, tensor=name,
                                      hint="pass a writable numpy array")
        elif isinstance(t, ScalarType):
            x = v.item() if isinstance(v, (np.ndarray, np.generic)) and np.ndim(v) == 0 else v
            if isinstance(x, np.ndarray) or hasattr(x, "shape"):
                raise SimulationError(f"argument '{name}' is a scalar parameter "
                                      f"({t}) but got an array", p.span, tensor=name)
            if t.dtype.is_int() and isinstance(x, float) and not float(x).is_integer():
                raise SimulationError(f"argument '{name}' is {t} but got the float {x}", p.span,
                                      tensor=name)
    return _upload(machine, entry, values, hosts)


def _upload(machine: Any, entry: Function, values: dict, hosts: dict) -> dict:
    # third pass: upload. Arguments are used in place (no
    # copy) when that cannot be observed: an In array nothing in the program writes is
    # read through a read-only view; Out / InOut arrays are the device buffers themselves
    # when they are C-contiguous, writable and overlap no other argument.
    bound: dict[str, Any] = {}
    written = machine.written_params
    overlapping = _overlapping(hosts)
    for name, t, direction, shaped, caster in _param_spec(machine, entry):
        v = values[name]
        if shaped:
            host = hosts[name]
            in_place = (host.flags.c_contiguous and name not in overlapping
                        and not (machine.buffers and machine.owns_root(host)))
            if direction == "In" and in_place and name not in written:
                dev = host.view()
                dev.flags.writeable = False
                keep = None
            elif direction != "In" and in_place and host.flags.writeable:
                dev = host
                keep = None
                if direction == "Out":
                    # deferred when a batched launch loop mentions it first (it may then
                    # fill only what that launch leaves unwritten)
                    machine.fill_fresh(dev, name in machine.deferrable)
            elif direction == "Out":
                keep = host
                if machine.cfg.uninit == "zero":
                    dev = np.zeros(host.shape, dtype=host.dtype)
                else:
                    dev = machine.new_residue(host.shape, host.dtype)
            else:
                keep = host
                dev = np.array(host, dtype=host.dtype, copy=True, order="C")
            machine.register(name, dev, direction, keep, "param")
            bound[name] = dev
        elif isinstance(t, ScalarType):
            x = v.item() if isinstance(v, (np.ndarray, np.generic)) and np.ndim(v) == 0 else v
            bound[name] = caster(x) if caster is not None else x
        else:
            bound[name] = v
    return bound


def _param_spec(machine: Any, entry: Function) -> list:
    """Per parameter of the entry (name, type, direction, is a tensor, scalar caster),
    kept on the machine (sim speed: the enum and attribute lookups cost ~1 us each)."""
    got = machine.__dict__.get("_param_spec")
    if got is not None and got[0] is entry:
        return got[1]
    from pypto.sim.interp import _scalar_caster

    spec = []
    for p in entry.params:
        t = p.var.type
        caster = _scalar_caster(t.dtype) if isinstance(t, ScalarType) else None
        spec.append((p.var.name, t, p.direction.value, isinstance(t, ShapedType), caster))
    machine.__dict__["_param_spec"] = (entry, spec)
    return spec


def _overlapping(hosts: dict) -> set:
    """Names of the argument arrays that may share memory with another argument."""
    items = list(hosts.items())
    out = set()
    for i in range(1, len(items)):
        for j in range(i):
            if np.may_share_memory(items[i][1], items[j][1]):
                out.add(items[i][0])
                out.add(items[j][0])
    return out


def copy_back(machine: Any) -> None:
    trace = machine.trace
    for buf in machine.buffer_list:
        if buf.direction in ("Out", "InOut") and buf.host is not None:
            host = buf.host
            if host.shape != buf.array.shape:
                continue
            try:
                host[...] = buf.array
            except ValueError as exc:
                raise SimulationError(f"cannot copy '{buf.name}' back to the caller's array: "
                                      f"{exc}", tensor=buf.name,
                                      hint="pass a writable, C-ordered numpy array") from None
        if trace is not None:
            from pypto.sim.trace import LastWriter

            trace.writers.setdefault(buf.name, LastWriter(buf.name, buf.writer, buf.array.shape,
                                                          trace))


# --- machines -----------------------------------------------------------------------


def _machine(compiled: Any, cfg: SimConfig) -> Any:
    cache = compiled.__dict__.setdefault("_sim_machines", {})
    # fast path (sim speed): the config as given is a key too, so a repeated call does no
    # replace / astuple (~100 us)
    try:
        m = cache.get(cfg)
    except TypeError:  # an unhashable field (e.g. checks given as a list)
        m, cfg = None, dataclasses.replace(cfg, checks=tuple(cfg.checks or ()))
    if m is not None:
        return m
    given = cfg
    from pypto.sim.interp import Machine

    platform = get_platform(cfg.platform or getattr(compiled, "platform", None))
    cfg = dataclasses.replace(cfg, platform=platform.name)
    if "race" in cfg.checks and not cfg.trace:  # the race check reads the trace
        cfg = dataclasses.replace(cfg, trace=True)
    key = dataclasses.astuple(cfg)
    m = cache.get(key)
    if m is None:
        m = Machine(compiled, cfg, platform)
        cache[key] = m
    cache[given] = m
    return m


def run_compiled(compiled: Any, args: tuple, kwargs: dict | None = None, config: Any = None
                 ) -> SimResult:
    """Run a compiled program on the simulator: `pl.Out` / `pl.InOut` arrays among `args`
    are filled in place; plain `pl.Tensor` arguments are never written."""
    if config is None:  # sim speed: no config hashing on the default path
        cfg = _DEFAULT_CONFIG
        m = compiled.__dict__.get("_sim_default")
        if m is None:
            m = compiled.__dict__["_sim_default"] = _machine(compiled, cfg)
    elif type(config) is SimConfig:  # frozen: the same object is the same config
        by_id = compiled.__dict__.setdefault("_sim_by_id", {})
        hit = by_id.get(id(config))
        if hit is not None and hit[0] is config:
            cfg, m = hit
        else:
            cfg = config
            m = _machine(compiled, cfg)
            if len(by_id) > 64:
                by_id.clear()
            by_id[id(config)] = (config, m)  # (holding the config keeps its id unique)
    else:
        cfg = SimConfig.from_any(config)
        m = _machine(compiled, cfg)
    rets = m.run(tuple(args), dict(kwargs or {}))
    result = SimResult(m, rets)
    if "race" in cfg.checks and m.trace is not None:
        from pypto.sim.sanitizers.races import RaceError, find_races

        result.races = find_races(m.trace, compiled)
        if result.races and cfg.strict:
            raise RaceError(result.races, result)
    return result


def config_platform(config: Any) -> str | None:
    """The platform a run config asks for (validated), or None for the default."""
    if config is None:
        return None
    p = config.get("platform") if isinstance(config, dict) else getattr(config, "platform", None)
    if p is None:
        return None
    return get_platform(p).name


def simulate(program: Any, *args: Any, platform: str = "a2a3sim",
             checks: tuple = ("oob", "ub"), trace: bool = True, seed: int = 0,
             padding: str = "zero", uninit: str = "residue", max_work: int = 10 ** 8,
             strict: bool = True, oob_reads: str = "fault", **kwargs: Any) -> SimResult:
    """Simulate `program` (a `@pl.jit` function, a `@pl.program` or a `CompiledProgram`)
    with `args`, tracing by default. `result.outputs` holds the device arrays of the
    `Out`/`InOut` parameters, `result.trace` the tasks, graph, costs and last writers.

    checks: any of "oob", "ub", "race", "uninit" (see `SimConfig`); with strict=False
    races and uninitialized reads are collected into `result.races` /
    `result.uninit_reads` instead of raising; oob_reads="warn" collects reads past the
    end of a tensor into `result.oob_reads`."""
    plat = get_platform(platform)
    args = host_args(args)
    if hasattr(program, "compile") and not hasattr(program, "records"):
        compiled = program.compile(*args, platform=plat.name)
    else:
        compiled = program
    cfg = SimConfig(platform=plat.name, checks=check_names(checks), trace=trace, seed=seed,
                    padding=padding, uninit=uninit, max_work=max_work, strict=strict,
                    oob_reads=oob_reads)
    return run_compiled(compiled, args, kwargs, cfg)
