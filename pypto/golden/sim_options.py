"""How a harness run asks the simulator to run: the checks and fresh memory the
environment selects (PYPTO_SIM_CHECKS, PYPTO_SIM_UNINIT), the platform's fresh-memory
rule, and which options of a `config=` the harness honours or refuses with its own knob.
"""
from __future__ import annotations

import os
from typing import Any

from pypto.errors import ConfigError
from pypto.sim.config import SimConfig


def sim_checks() -> tuple | None:
    """PYPTO_SIM_CHECKS: the simulator checks to run ("oob,ub" by default; "none")."""
    raw = os.environ.get("PYPTO_SIM_CHECKS")
    if raw is None:
        return None
    names = tuple(c.strip() for c in raw.replace(" ", ",").split(",") if c.strip())
    return () if names in ((), ("none",)) else names


def sim_options() -> dict:
    """Simulator options taken from the environment: PYPTO_SIM_CHECKS and
    PYPTO_SIM_UNINIT ("residue" or "zero": what fresh pl.Out / create_tensor memory
    holds, overriding the platform's own, see `fresh_memory`)."""
    opts: dict[str, Any] = {}
    checks = sim_checks()
    if checks is not None:
        opts["checks"] = checks
    uninit = os.environ.get("PYPTO_SIM_UNINIT", "").strip()
    if uninit:
        if uninit not in ("residue", "zero"):
            raise ValueError(f"PYPTO_SIM_UNINIT must be 'residue' or 'zero', got {uninit!r}")
        opts["uninit"] = uninit
    return opts


# device platforms: the device pool's fresh pages are "often zero" (the guide); the
# simulator platforms' are garbage or NaN
ZERO_FILL_PLATFORMS = ("a2a3", "a5")


def fresh_memory(requested: str | None, runtime_cfg: dict | None = None) -> str:
    """What fresh device memory (pl.Out, create_tensor) holds in a harness run:
    runtime_cfg["sim_uninit"], else PYPTO_SIM_UNINIT, else the requested platform's
    own - "residue" (NaN / garbage) on the simulator platforms and when no platform is
    named (the simulator's default is a2a3sim), "zero" on a device (a2a3, a5), where a
    pass resting on those zeros is reported."""
    cfg = runtime_cfg or {}
    if cfg.get("sim_uninit") is not None:
        if cfg["sim_uninit"] not in ("residue", "zero"):
            raise ValueError(f"runtime_cfg sim_uninit must be 'residue' or 'zero', got "
                             f"{cfg['sim_uninit']!r}")
        return cfg["sim_uninit"]
    env = sim_options().get("uninit")
    if env is not None:
        return env
    return "zero" if requested in ZERO_FILL_PLATFORMS else "residue"


# what a `config=` of run_jit / run may set: how to simulate. What the harness decides
# itself has its own knob, named in the error when a config sets it differently.
_CONFIG_OPTIONS = ("checks", "strict", "seed", "padding", "max_work", "max_while", "batch")
_HARNESS_KNOBS = {
    "platform": "runtime_cfg={'platform': ...}",
    "device_ids": "compile_cfg={'distributed_config': ...} or runtime_cfg={'device_ids': ...}",
    "dump_args": "runtime_cfg={'enable_dump_args': N}",
    "uninit": "runtime_cfg={'sim_uninit': 'residue' | 'zero'}",
    "trace": "nothing: the harness always traces (its diagnosis reads the trace)",
    "oob_reads": "nothing: the harness reports reads past a tensor's end as warnings, "
                 "as the device reads whatever follows",
    "out_start": "nothing: the harness starts a pure pl.Out from fresh memory (the "
                 "TensorSpec's host buffer is not uploaded)",
    "source": "the environment variable PYPTO_SIM_SOURCE",
    "source_dump": "the environment variable PYPTO_SIM_SOURCE_DUMP",
}


def config_options(config: Any) -> dict:
    """The simulator options of a `config=` (a `SimConfig`, a dict of its options or a
    RunConfig-like object) that a harness run honours; a `ConfigError` naming the
    harness's own knob for an option the harness decides itself."""
    if config is None:
        return {}
    cfg = SimConfig.from_any(config)
    plain = SimConfig()
    for name, knob in _HARNESS_KNOBS.items():
        if getattr(cfg, name) != getattr(plain, name):
            raise ConfigError(
                f"config= sets {name}={getattr(cfg, name)!r}, which the harness decides "
                f"itself", hint=f"use {knob}")
    return {name: getattr(cfg, name) for name in _CONFIG_OPTIONS}
