"""How to simulate: the user's `SimConfig` and the `Settings` a run derives from it.

`SimConfig` is what a caller passes (`kernel(x, y, config=...)`, `simulate(...)`);
`Settings` is the immutable per-run configuration every part of the simulator reads:
the config with its platform resolved, the check switches as booleans, and the
decisions that follow from them (the race check traces; the uninit check runs block by
block). One `Settings` serves any number of runs, concurrently.
"""
from __future__ import annotations

import dataclasses
import functools
import os
from dataclasses import dataclass
from typing import Any

from pypto.errors import ConfigError
from pypto.platform import Platform, get_platform
from pypto.sim.options import CHECKS, SOURCE_MODES, check_names, did_you_mean, shown, validated


@dataclass(frozen=True)
class SimConfig:
    """How to simulate.

    platform: "a2a3sim" (default: the compiled program's platform) or "a5sim".
    checks:   any of "oob" (bounds of every slice/load/store/assemble/read/write), "ub"
              (on-chip budget of every region), "race" (accesses of the same elements
              by tasks the runtime does not order; implies trace=True and "window"),
              "window" (a multi-card run's window elements touched by two ranks
              that no notify -> wait orders, `pypto.sim.cluster.happens`; traces the
              ranks; nothing to check in a one-rank run), "uninit"
              (reads of memory nothing wrote) and "div" (integer division by zero,
              which has one defined result either way: `pypto.ops.intdiv`); see
              `pypto.sim.checks`. The core's default is ("oob", "ub", "window", "div").
              Argument checks and the work limits are always on. Given as a tuple (or list / set) of
              names or as one string; a string may hold several names separated by
              commas or spaces ("oob,ub"); names are case-insensitive. The config holds
              them as a tuple of lower-case names in the order above.
    strict:   a race, an uninitialized read or an integer division by zero raises
              (`RaceError` after the run with every race in `err.report`;
              `UninitializedReadError` / `DivisionByZeroError` where it happens). With
              strict=False they are collected into `SimResult.races` /
              `SimResult.uninit_reads` / `SimResult.zero_divisions` and the run
              completes.
    trace:    record tasks, accesses, the task graph, costs and last writers.
    seed:     seeds the garbage pattern of uninitialised integer memory.
    padding:  what a load puts in the part of a tile outside its valid shape when no
              pad_value is given: "zero" (like the reference CPU backend) or "nan"
              (poison, to catch kernels that read padding).
    uninit:   contents of fresh device memory (`pl.Out` buffers under
              out_start="fresh", `pl.create_tensor` without init_value,
              `pl.create_tile`): "residue" (NaN / garbage, like hardware) or "zero".
    out_start: what a pure `pl.Out` parameter holds when the kernel starts. "caller"
              (a direct call's default): the caller's array, as the real runtime works
              on the caller's tensor when a `@pl.jit` kernel is called directly (the
              real `tests/st/runtime/ops/test_atomic_add.py` pre-fills one and expects
              `baseline + x`). "fresh": fresh device memory, per `uninit` - the L2
              guide's rule for the harness (`TensorSpec`: "the host buffer is not
              uploaded"), which `pypto.golden` runs with.
    oob_reads: what a read past the end of a global tensor does under the "oob" check:
              "fault" (raise, naming tensor, region, block and window) or "warn" (record
              it in `SimResult.oob_reads` and read fresh memory - residue or zeros, per
              `uninit` - for the overhang, as the device reads whatever follows the
              tensor). Writes past the end always fault.
    max_work: fail fast past this many loop iterations + blocks in total; a loop or a
              `pl.parallel` launch nest whose trip count is known on entry fails before
              it runs when it would pass the limit.
    max_while: the most work one execution of a `pl.while_` loop may do - its
              iterations plus the loop iterations and blocks run inside them (a bare
              loop: its iterations); past it the loop is taken for an endless one (the
              error names the loop and its iteration count).
    batch:    run the independent blocks of a `pl.parallel` launch loop / an SPMD launch
              as one vectorised pass when they only differ by affine offsets (same
              outputs and trace as block by block; see `pypto.sim.batch`).
    device_ids: the devices a multi-card (`@pl.jit.host`) program runs on, one simulated
              rank each (rank r is `device_ids[r]`; `pld.world_size()` is their number);
              None: one device, as `DistributedConfig()`. A RunConfig-like config gives
              them as its `distributed_config`.
    dump_args: the runtime's args dump level (`enable_dump_args`): 0 off; 1 the
              arguments tagged by `pl.dump_tag` / `dumps=`; 2 every task's arguments;
              3 every task's metadata, payload for the tagged ones. The snapshots are
              taken at each task's boundary (`pypto.sim.machine.capture`) into
              `SimResult.arg_dumps`; it traces and runs block by block.
    source:   how the code the simulator generates runs (`pypto.sim.engine.source`):
              "generated" (the op calls, statement lists and batched region bodies
              written as Python source, named `<pypto:KIND:NAME#N>` in tracebacks) or
              "plain" (the closures that source stands in for: the same results,
              slower; for debugging the generator). None: the environment variable
              PYPTO_SIM_SOURCE (generated / plain), else "generated".
    source_dump: a directory the generated source is written to, one file per
              function (`KIND.NAME.N.py`); None: PYPTO_SIM_SOURCE_DUMP, else none.
    """

    platform: str | None = None
    checks: tuple = ("oob", "ub", "window", "div")
    strict: bool = True
    trace: bool = False
    seed: int = 0
    padding: str = "zero"
    uninit: str = "residue"
    out_start: str = "caller"
    oob_reads: str = "fault"
    max_work: int = 10 ** 8
    max_while: int = 10 ** 6
    batch: bool = True
    device_ids: tuple | None = None
    dump_args: int = 0
    source: str | None = None
    source_dump: str | None = None

    def __post_init__(self) -> None:
        # every option is validated (and put in its one spelling) here, so a config that
        # exists is one the simulator understands: nothing is silently ignored
        for name, value in validated(self).items():
            object.__setattr__(self, name, value)

    @staticmethod
    def from_any(config: Any, **overrides: Any) -> SimConfig:
        """A `SimConfig` from a SimConfig, a dict of its options, a RunConfig-like
        object (one with a `platform` attribute, e.g. `pypto.runtime.RunConfig`) or
        None; anything else, and a dict key that is not an option, is a `ConfigError`."""
        if isinstance(config, SimConfig):
            base = config
        elif config is None:
            if not overrides:
                return DEFAULT_CONFIG  # sim speed: no per-call construct + replace
            base = SimConfig()
        elif isinstance(config, dict):
            unknown = sorted(map(str, set(config) - set(SimConfig.__dataclass_fields__)))
            if unknown:
                raise ConfigError(
                    f"unknown simulator option(s) {', '.join(map(repr, unknown))} in config=",
                    hint=did_you_mean(unknown[0], list(SimConfig.__dataclass_fields__)) +
                    "the options are " + ", ".join(SimConfig.__dataclass_fields__))
            base = SimConfig(**config)
        elif _run_config_like(config):
            given = {k: getattr(config, k) for k in SimConfig.__dataclass_fields__
                     if getattr(config, k, None) is not None}
            dist = getattr(config, "distributed_config", None)  # pypto.runtime.RunConfig
            if dist is not None and "device_ids" not in given:
                given["device_ids"] = getattr(dist, "device_ids", None)
            base = SimConfig(**given)
        else:
            raise ConfigError(
                f"config= takes a pypto.sim.SimConfig, a dict of its options or None, not "
                f"{shown(config)}",
                hint="e.g. config=pypto.sim.SimConfig(checks=('oob', 'ub', 'race')) or "
                     "config={'trace': True}")
        overrides = {k: v for k, v in overrides.items() if v is not None}
        return dataclasses.replace(base, **overrides) if overrides else base


def _checked_init(init: Any) -> Any:
    """The dataclass's `__init__`, refusing an unknown option by name with the list of
    the options (Python's own TypeError names neither)."""
    fields = tuple(SimConfig.__dataclass_fields__)

    @functools.wraps(init)
    def __init__(self: SimConfig, *args: Any, **kwargs: Any) -> None:
        unknown = [k for k in kwargs if k not in SimConfig.__dataclass_fields__]
        if unknown:
            raise ConfigError(f"SimConfig got unknown option(s) {', '.join(map(repr, unknown))}",
                              hint=did_you_mean(unknown[0], fields) + "the options are " +
                              ", ".join(fields))
        if len(args) > len(fields):
            raise ConfigError(f"SimConfig takes at most {len(fields)} options, got "
                              f"{len(args)} positional values",
                              hint="name them: SimConfig(checks=..., trace=...)")
        init(self, *args, **kwargs)

    return __init__


SimConfig.__init__ = _checked_init(SimConfig.__init__)  # type: ignore[method-assign]


def _run_config_like(config: Any) -> bool:
    return not isinstance(config, (str, bytes, int, float, list, tuple, set)) and \
        isinstance(getattr(config, "platform", None), (str, type(None)))


DEFAULT_CONFIG = SimConfig()


def config_platform(config: Any) -> str | None:
    """The platform a run config asks for (the whole config validated), or None for the
    default."""
    if config is None:
        return None
    return SimConfig.from_any(config).platform


@dataclass(frozen=True)
class Settings:
    """The immutable configuration of a run: what every part of the simulator reads."""

    config: SimConfig  # as resolved: platform named, trace on when the race check is
    platform: Platform
    trace: bool
    check_oob: bool
    check_ub: bool
    check_race: bool
    check_uninit: bool
    batch: bool  # batched blocks (off under PYPTO_SIM_BATCH=0 and the uninit check)
    zero_fresh: bool  # fresh device memory holds zeros, not residue
    warn_oob_reads: bool  # oob_reads="warn"
    strict: bool
    seed: int
    max_work: int
    check_div: bool = False
    max_while: int = 10 ** 6
    dump_args: int = 0  # the args dump level (`pypto.sim.machine.capture`)
    check_window: bool = False  # races between ranks on windows (a multi-card run)
    # the caller asked for the trace (trace=True, the "race" check that reads it, the args
    # dump that names tasks by it); a trace taken only for the window check is dropped
    # after the run
    keep_trace: bool = True
    # why `batch` is off (the run's launches report it as their decision), else ""
    no_batch: str = ""
    source: str = "generated"  # generated source or plain closures (`engine.source`)
    source_dump: str | None = None  # the directory generated source is written to
    # a pure pl.Out parameter starts from the caller's array (out_start="caller")
    out_from_caller: bool = False

    @staticmethod
    def of(cfg: SimConfig, default_platform: str | None, ranks: int = 1) -> Settings:
        """The settings of `cfg` for a program running on `ranks` ranks (a host
        program's devices; 1 for any other)."""
        platform = get_platform(cfg.platform or default_platform)
        checks = set(cfg.checks or ())
        window = ranks > 1 and ("window" in checks or "race" in checks)
        # the race checks read the trace (a rank's own window accesses are in it); the
        # args dump names tasks by it
        keep = bool(cfg.trace) or "race" in checks or cfg.dump_args > 0
        trace = keep or window
        cfg = dataclasses.replace(cfg, platform=platform.name, trace=trace,
                                  checks=tuple(cfg.checks or ()))
        # (the written-bitmaps and the task-boundary snapshots are taken by the per-block
        # path)
        no_batch = "SimConfig(batch=False)" if not cfg.batch else \
            "PYPTO_SIM_BATCH=0" if os.environ.get("PYPTO_SIM_BATCH", "1") == "0" else \
            "the uninit check runs block by block" if "uninit" in checks else \
            "the args dump runs block by block" if cfg.dump_args else ""
        batch = not no_batch
        return Settings(cfg, platform, trace, "oob" in checks, "ub" in checks,
                        "race" in checks, "uninit" in checks, batch, cfg.uninit == "zero",
                        cfg.oob_reads == "warn", bool(cfg.strict),
                        int(cfg.seed), int(cfg.max_work), check_div="div" in checks,
                        max_while=int(cfg.max_while), dump_args=int(cfg.dump_args),
                        check_window=window, keep_trace=keep,
                        no_batch=f"batching is off: {no_batch}" if no_batch else "",
                        source=cfg.source or _source_from_environment(),
                        source_dump=cfg.source_dump or os.environ.get(SOURCE_DUMP) or None,
                        out_from_caller=cfg.out_start == "caller")


SOURCE_MODE = "PYPTO_SIM_SOURCE"  # the default of SimConfig.source
SOURCE_DUMP = "PYPTO_SIM_SOURCE_DUMP"  # the default of SimConfig.source_dump


def _source_from_environment() -> str:
    """PYPTO_SIM_SOURCE (case-insensitive), else "generated"; another value is a
    `ConfigError` (a knob must not be ignored silently)."""
    value = os.environ.get(SOURCE_MODE, "generated")
    mode = value.strip().lower()
    if mode not in SOURCE_MODES:
        raise ConfigError(f"{SOURCE_MODE}={value!r} is not a source mode; choose from "
                          f"{', '.join(SOURCE_MODES)}",
                          hint="'generated' runs the written source (the default), 'plain' "
                               "the closures it stands in for; SimConfig(source=...) "
                               "overrides the variable")
    return mode


__all__ = [
    "CHECKS",
    "DEFAULT_CONFIG",
    "Settings",
    "SimConfig",
    "check_names",
    "config_platform",
]
