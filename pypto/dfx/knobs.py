"""The runtime's DFX and tuning knobs as a harness run receives them (pypto-lib's
`runtime_cfg` / `compile_cfg`, pypto's `RunConfig` fields), what the simulator makes of
each, and the `[RUN]   note:` line for every knob it does not honour (or honours in
part), naming what stands in for it or saying there is no simulator equivalent.

Honoured: `enable_dep_gen` (deps.json), `enable_dump_args` 1-3 (args dump),
`enable_chip_swimlane` 1-2 (an estimated swimlane; 3-4 are written as 2, noted),
`enable_pmu` (estimated pmu.csv; event types other than 2 get zero counters, noted),
`dump_passes` (passes_dump/), `enable_scope_stats` (scope_stats.jsonl from the ring
model), `ring_heap` / `ring_task_window` / `ring_dep_pool` and the `PTO2_RING_*`
environment (the ring model's capacities: a run that outgrows a ring fails with the
runtime's error). Not honoured, noted: `log_level`, `num_sub_workers`, and compile options
with no simulator meaning.
`PYPTO_BENCH` prints the runtime's own "no device-domain spans" line and a labelled
cost-model estimate (`bench_lines`) that CI's scrape (`effective_us .*mean=`) never
matches.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# pypto's bare `--enable-chip-swimlane` / `True` (`_SWIMLANE_FULL_LEVEL`)
SWIMLANE_FULL_LEVEL = 4
# a bare `--enable-pmu` (pypto-lib files: `nargs="?", const=2`): PIPE_UTILIZATION
PMU_DEFAULT = 2

_RUNTIME_NOTES = {
    "log_level": "log_level: no simulator equivalent (there is no device log; the "
                 "simulator's errors name the task, block and source line instead)",
    "num_sub_workers": "num_sub_workers: no simulator equivalent (every rank runs in this "
                       "process, deterministically)",
}
_COMPILE_NOTES = {
    "compile_profiling": "compile_cfg compile_profiling: no simulator equivalent (the pass "
                         "times are in compiled.records)",
    "profiling": "compile_cfg profiling: no simulator equivalent",
    "strategy": "compile_cfg strategy: no simulator equivalent (pypto-lab runs its one "
                "pass pipeline)",
    "skip_ptoas": "compile_cfg skip_ptoas: no simulator equivalent (there is no PTOAS "
                  "step; the simulator runs the IR)",
    "backend_type": "compile_cfg backend_type: stands in the platform's simulator twin",
}


def _level(value: Any, true_level: int) -> int:
    """A knob's level: True is `true_level`, False / None 0, an int itself."""
    if value is None or value is False:
        return 0
    if value is True:
        return true_level
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"expected a level (an integer or a bool), got {value!r}") from None


@dataclass(frozen=True)
class DfxRequest:
    """What a run's configuration asks of the DFX artifacts."""

    dep_gen: bool = False
    dump_args: int = 0
    swimlane: int = 0
    pmu: int = 0
    dump_passes: bool = False
    scope_stats: bool = False

    @staticmethod
    def of(runtime_cfg: dict, compile_cfg: dict) -> DfxRequest:
        """The request of a run's configs (`ValueError` for a level out of range)."""
        try:
            # (True is int(True) = 1 for the int-typed knobs, as pypto's RunConfig takes it)
            dump = _level(runtime_cfg.get("enable_dump_args"), 1)
            swim = _level(runtime_cfg.get("enable_chip_swimlane"), SWIMLANE_FULL_LEVEL)
            pmu = _level(runtime_cfg.get("enable_pmu"), 1)
        except ValueError as err:
            raise ValueError(f"runtime_cfg DFX knob: {err}") from None
        if not 0 <= dump <= 3:
            raise ValueError(f"runtime_cfg enable_dump_args must be 0-3 (0 off, 1 tagged, 2 "
                             f"all, 3 metadata + tagged payload), got {dump}")
        if not 0 <= swim <= 4:
            raise ValueError(f"runtime_cfg enable_chip_swimlane must be 0-4 (True = 4), got "
                             f"{swim}")
        if pmu < 0:
            raise ValueError(f"runtime_cfg enable_pmu must be a PMU event type >= 0, got {pmu}")
        return DfxRequest(bool(runtime_cfg.get("enable_dep_gen")), dump, swim, pmu,
                          bool(compile_cfg.get("dump_passes")),
                          bool(runtime_cfg.get("enable_scope_stats")))

    @property
    def any_dfx(self) -> bool:
        """Whether anything goes under dfx_outputs/."""
        return bool(self.dep_gen or self.dump_args or self.swimlane or self.pmu or
                    self.scope_stats)


def notes(runtime_cfg: dict, compile_cfg: dict, request: DfxRequest,
          env: Mapping[str, str] | None = None) -> list[str]:
    """The notes (without the `[RUN]   note: ` prefix) for the knobs a run sets that the
    simulator does not honour, or honours in part."""
    env = os.environ if env is None else env
    out = [text for key, text in _RUNTIME_NOTES.items() if runtime_cfg.get(key)]
    out += [text for key, text in _COMPILE_NOTES.items() if compile_cfg.get(key)]
    if request.swimlane > 2:
        out.append(f"enable_chip_swimlane={request.swimlane}: scheduler and orchestrator "
                   "phases (levels 3-4) have no simulator equivalent; the estimated "
                   "chip_swimlane_records.json carries level 2 (AICore + AICPU timing)")
    if request.pmu and request.pmu != PMU_DEFAULT:
        out.append(f"enable_pmu={request.pmu}: only event type 2 (PIPE_UTILIZATION) is "
                   "estimated from the cost model; this event type's counters are written "
                   "as 0")
    return out


EFFECTIVE_UNAVAILABLE = ("[RUN]   effective_us unavailable: no device-domain spans "
                         "(sim platform or non-profiling build)")
REPLAY_SKIPPED = "[RUN]   benchmark skipped: no live CompiledProgram (runtime_dir replay)"


def bench_enabled(env: Mapping[str, str] | None = None) -> bool:
    """PYPTO_BENCH set truthy (pypto-lib's `_bench_enabled`)."""
    env = os.environ if env is None else env
    return env.get("PYPTO_BENCH", "").strip() not in ("", "0", "false", "False")


def bench_lines(critical_path_us: float | None, serial_us: float | None,
                replay: bool = False) -> list[str]:
    """What PYPTO_BENCH prints on the simulator: the runtime's own line for a run without
    device spans, then the cost model's estimate, labelled, in a form that never matches
    CI's `effective_us .*mean=` scrape."""
    if replay:
        return [REPLAY_SKIPPED]
    lines = [EFFECTIVE_UNAVAILABLE]
    if critical_path_us is not None and serial_us is not None:
        lines.append(f"[RUN]   est_us (cost model, not a device time) "
                     f"critical_path={critical_path_us:.1f} serial={serial_us:.1f}")
    return lines



# -- the knobs as `pypto-sim FILE` flags ----------------------------------------------------

# flag -> (config, key, value of the bare flag or None for a plain switch), as pypto-lib's
# files and simpler's harness take them (`--enable-pmu [N]` bare 2, `--enable-chip-swimlane
# [N]` bare 4, `--enable-dump-args [N]` bare 1 like pypto-lib's `--dump-args`)
CLI_FLAGS: dict[str, tuple[str, str, int | str | None]] = {
    "--enable-dep-gen": ("runtime", "enable_dep_gen", None),
    "--enable-pmu": ("runtime", "enable_pmu", PMU_DEFAULT),
    "--enable-chip-swimlane": ("runtime", "enable_chip_swimlane", SWIMLANE_FULL_LEVEL),
    "--enable-dump-args": ("runtime", "enable_dump_args", 1),
    "--enable-scope-stats": ("runtime", "enable_scope_stats", None),
    "--dump-passes": ("compile", "dump_passes", None),
    # pypto-lab's own: the float64 precision shadow (`pypto.precision`); a word, not a level
    "--shadow": ("runtime", "sim_shadow", "fp64"),
}
SHADOW_PRECISIONS = ("fp64",)  # what `--shadow` / runtime_cfg["sim_shadow"] accept
ENV_OVERRIDES = "PYPTO_SIM_DFX"  # JSON {"runtime": {...}, "compile": {...}} for the harness


def declares(source: str, flag: str) -> bool:
    """Whether a kernel file's own argument parser takes `flag`."""
    return re.search(r"""add_argument\([^)]*(['"])""" + re.escape(flag) + r"\1", source) \
        is not None


def split_cli_flags(args: list[str], source: str) -> tuple[list[str], dict]:
    """The DFX flags among a file's `args` that the file does not declare, taken out:
    (the args left for the file, {"runtime": {...}, "compile": {...}}); `ValueError` for
    a level that is not an integer."""
    rest: list[str] = []
    taken: dict[str, dict] = {"runtime": {}, "compile": {}}
    i = 0
    while i < len(args):
        a = args[i]
        flag, eq, value = a.partition("=")
        spec = CLI_FLAGS.get(flag)
        if spec is None or declares(source, flag):
            rest.append(a)
            i += 1
            continue
        where, key, bare = spec
        if bare is None:
            if eq:
                raise ValueError(f"{flag} takes no value")
            taken[where][key] = True
        elif isinstance(bare, str):  # a word: --shadow, --shadow fp64, --shadow=fp64
            if eq:
                taken[where][key] = _cli_word(flag, value)
            elif i + 1 < len(args) and args[i + 1] in SHADOW_PRECISIONS:
                i += 1
                taken[where][key] = args[i]
            else:
                taken[where][key] = bare
        elif eq:
            taken[where][key] = _cli_level(flag, value)
        elif i + 1 < len(args) and args[i + 1].lstrip("-").isdigit() and \
                not args[i + 1].startswith("-"):
            i += 1
            taken[where][key] = _cli_level(flag, args[i])
        else:
            taken[where][key] = bare
        i += 1
    return rest, taken


def _cli_word(flag: str, text: str) -> str:
    if text not in SHADOW_PRECISIONS:
        raise ValueError(f"{flag} takes one of {', '.join(SHADOW_PRECISIONS)}, got {text!r}")
    return text


def _cli_level(flag: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{flag} takes an integer level, got {text!r}") from None


def apply_overrides(runtime_cfg: dict, compile_cfg: dict,
                    env: Mapping[str, str] | None = None) -> None:
    """Give a run the DFX flags `pypto-sim` took for the file ($PYPTO_SIM_DFX): each one
    the file's own config does not already set."""
    env = os.environ if env is None else env
    raw = env.get(ENV_OVERRIDES)
    if not raw:
        return
    given = json.loads(raw)
    for cfg, part in ((runtime_cfg, given.get("runtime", {})),
                      (compile_cfg, given.get("compile", {}))):
        for key, value in part.items():
            if not cfg.get(key):
                cfg[key] = value


__all__ = ["CLI_FLAGS", "EFFECTIVE_UNAVAILABLE", "ENV_OVERRIDES", "PMU_DEFAULT",
           "REPLAY_SKIPPED", "SHADOW_PRECISIONS", "SWIMLANE_FULL_LEVEL", "DfxRequest",
           "apply_overrides", "bench_enabled", "bench_lines", "declares", "notes",
           "split_cli_flags"]
