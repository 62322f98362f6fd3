"""Validating the options of a `SimConfig`: every option has one type and one spelling.

A wrong option is a `ConfigError` naming it, what it got and what it accepts (with the
nearest valid name for a typo). Accepted spellings, each on purpose:

* `checks`: a tuple, list, set or frozenset of names, or one string; a string (alone
  or inside the tuple) may hold several names separated by commas or spaces; names are
  case-insensitive. Held as a tuple of lower-case names in `CHECKS` order.
* `padding` / `uninit` / `oob_reads`: one of their choices, case-insensitive.
* `platform`: None or a simulated platform's name (`pypto.platform.get_platform`
  names the valid ones; a real-hardware name says which simulator to use instead).
* `strict` / `trace` / `batch`: True or False (numpy booleans too); not 0 / 1 / "yes".
* `seed`: an integer (numpy integers too; not a bool, a float or a string).
* `max_work`, `max_while`: an integer >= 1.
* `dump_args`: an integer 0 to 3 (the runtime's `enable_dump_args` levels).
* `source`: None (the environment's `PYPTO_SIM_SOURCE`, else "generated"), "generated"
  or "plain", case-insensitive; `source_dump`: None or a directory (a str or a path).
"""
from __future__ import annotations

import difflib
import numbers
import os
from typing import Any

import numpy as np

from pypto.errors import ConfigError
from pypto.platform import get_platform

CHECKS = ("oob", "ub", "race", "window", "uninit", "div")
# how generated code runs (`pypto.sim.engine.source`): the written source, or the plain
# closures it stands in for
SOURCE_MODES = ("generated", "plain")
CHOICES = {"padding": ("zero", "nan"), "uninit": ("residue", "zero"),
           "oob_reads": ("fault", "warn"), "out_start": ("caller", "fresh")}
_BOOLS = ("strict", "trace", "batch")


def shown(value: Any) -> str:
    """A value as a message quotes it: its repr (shortened) and its type."""
    r = repr(value)
    if len(r) > 60:
        r = r[:57] + "..."
    return f"{r} ({type(value).__name__})"


def did_you_mean(name: str, valid: list[str] | tuple[str, ...]) -> str:
    """'did you mean X? ' for the valid name nearest to `name`, else ''."""
    near = difflib.get_close_matches(str(name).lower(), list(valid), n=1, cutoff=0.6)
    return f"did you mean {near[0]!r}? " if near else ""


def check_names(checks: Any) -> tuple:
    """`checks` (see the module docstring for the accepted forms) as a tuple of names
    in `CHECKS` order; unknown names are a `ConfigError` listing the valid ones."""
    if checks is None:
        return ()
    if isinstance(checks, str):
        items: list = [checks]
    elif isinstance(checks, (tuple, list, set, frozenset)):
        items = list(checks)
    else:
        raise ConfigError(f"SimConfig.checks must be a tuple of check names or a string, got "
                          f"{shown(checks)}", hint="the checks are " + ", ".join(CHECKS))
    names: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise ConfigError(f"SimConfig.checks names checks by strings, got {shown(item)}",
                              hint="the checks are " + ", ".join(CHECKS))
        names += [n.strip().lower() for n in item.replace(",", " ").split() if n.strip()]
    bad = [n for n in names if n not in CHECKS]
    if bad:
        raise ConfigError(f"unknown simulator check(s) {', '.join(map(repr, bad))}; choose from "
                          f"{', '.join(CHECKS)}",
                          hint=did_you_mean(bad[0], CHECKS) + "several checks: a tuple "
                          "such as ('oob', 'ub') or one string such as 'oob,ub'")
    return tuple(c for c in CHECKS if c in names)


def _boolean(name: str, value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ConfigError(f"SimConfig.{name} must be True or False, got {shown(value)}")


def _integer(name: str, value: Any, what: str = "an integer") -> int:
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    raise ConfigError(f"SimConfig.{name} must be {what}, got {shown(value)}")


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if isinstance(value, str) and value.lower() in allowed:
        return value.lower()
    raise ConfigError(f"SimConfig.{name} must be one of {', '.join(map(repr, allowed))}, got "
                      f"{shown(value)}", hint=did_you_mean(str(value), allowed).strip() or None)


def validated(cfg: Any) -> dict[str, Any]:
    """The options of the `SimConfig` `cfg` in their one spelling (raises `ConfigError`,
    or the platform table's error for a platform it does not simulate)."""
    out: dict[str, Any] = {}
    if cfg.platform is not None:
        if not isinstance(cfg.platform, str):
            raise ConfigError(f"SimConfig.platform must be a platform name or None, got "
                              f"{shown(cfg.platform)}")
        out["platform"] = get_platform(cfg.platform).name
    out["checks"] = check_names(cfg.checks)
    for name in _BOOLS:
        out[name] = _boolean(name, getattr(cfg, name))
    out["seed"] = _integer("seed", cfg.seed)
    for name, what in (("max_work", "loop iterations + blocks"),
                       ("max_while", "loop iterations + blocks of one pl.while_ loop")):
        n = _integer(name, getattr(cfg, name), f"an integer >= 1 ({what})")
        if n < 1:
            raise ConfigError(f"SimConfig.{name} must be an integer >= 1 ({what}), got {n}")
        out[name] = n
    for name, allowed in CHOICES.items():
        out[name] = _choice(name, getattr(cfg, name), allowed)
    out["device_ids"] = _devices(cfg.device_ids)
    level = _integer("dump_args", cfg.dump_args, "an args dump level 0, 1, 2 or 3")
    if not 0 <= level <= 3:
        raise ConfigError(f"SimConfig.dump_args must be an args dump level 0, 1, 2 or 3, got "
                          f"{level}", hint="0 off, 1 tagged, 2 all, 3 metadata (+ tagged payload)")
    out["dump_args"] = level
    if cfg.source is not None:
        out["source"] = _choice("source", cfg.source, SOURCE_MODES)
    if cfg.source_dump is not None:
        if not isinstance(cfg.source_dump, (str, os.PathLike)):
            raise ConfigError(f"SimConfig.source_dump must be a directory (a str or a path) "
                              f"or None, got {shown(cfg.source_dump)}")
        out["source_dump"] = os.fspath(cfg.source_dump)
    return out


def _devices(ids: Any) -> tuple[int, ...] | None:
    """`device_ids`: None, or distinct non-negative device indices (one rank each)."""
    if ids is None:
        return None
    if isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__"):
        raise ConfigError(f"SimConfig.device_ids must be a list of device indices, got "
                          f"{shown(ids)}", hint="e.g. device_ids=(0, 1) for two ranks")
    out = tuple(ids)
    if not out:
        raise ConfigError("SimConfig.device_ids must not be empty",
                          hint="e.g. device_ids=(0, 1) for two ranks")
    if any(isinstance(d, bool) or not isinstance(d, int) or d < 0 for d in out):
        raise ConfigError(f"SimConfig.device_ids must be non-negative integers, got "
                          f"{list(out)}")
    if len(set(out)) != len(out):
        raise ConfigError(f"SimConfig.device_ids must be distinct (two ranks cannot share a "
                          f"card), got {list(out)}")
    return out


__all__ = ["CHECKS", "CHOICES", "SOURCE_MODES", "check_names", "did_you_mean", "shown", "validated"]
