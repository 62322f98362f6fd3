"""How a harness run's specs bind to the kernel's parameters - as pypto-lib's harness
passes them to the device, which differs by kind of program:

* a single-card program (L2) gets its arguments in spec order (`_execute_via_runner`
  builds the list from the specs as they are): spec i is parameter i whatever its name,
  and the names are only the golden's keys;
* a multi-card program (`@pl.jit.host`, L3) is compiled from dummies in spec order, but
  dispatched with each parameter looked up by its name among the specs
  (`_l3_ordered_args`): a spec list in another order still gives every parameter its
  own tensor, and a parameter no spec names is an error there.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pypto.ir.nodes import FunctionKind


@dataclass
class Binding:
    """Which spec feeds which parameter of the entry."""

    #: spec name -> the direction of the parameter it binds to ("In", "Out", "InOut")
    directions: dict[str, str] = field(default_factory=dict)
    #: spec name -> the name of the parameter it binds to
    kernel_names: dict[str, str] = field(default_factory=dict)
    #: the specs in parameter order: the arguments of the run, one per parameter
    ordered: list = field(default_factory=list)
    #: why the specs cannot bind ("" when they do)
    error: str = ""
    #: the note to print about the binding ("" when there is nothing to say)
    note: str = ""


def _refused(why: str, pnames: list[str], snames: list[str], fix: str) -> Binding:
    return Binding(error=f"specs do not match the kernel's parameters ({why}): kernel "
                         f"({', '.join(pnames)}), specs ({', '.join(snames)}); {fix}")


def bind_specs(compiled: Any, specs: list) -> Binding:
    """The binding of `specs` to the entry of `compiled` (see the module docstring)."""
    entry = compiled.program.entry_function
    params = list(entry.params)
    pnames = [p.var.name for p in params]
    snames = [s.name for s in specs]
    if entry.kind is FunctionKind.HOST:
        return _by_name(params, pnames, specs, snames)
    why = (f"{len(snames)} specs for {len(pnames)} parameters" if len(pnames) != len(snames)
           else "the same names in a different order"
           if sorted(pnames) == sorted(snames) and pnames != snames else "")
    if why:  # (the same names reordered would bind each spec to another's parameter)
        return _refused(why, pnames, snames, "list one spec per parameter, in parameter order")
    b = Binding(ordered=list(specs))
    for p, s in zip(params, specs):
        b.directions[s.name] = _direction(p)
        b.kernel_names[s.name] = p.var.name
    renamed = [f"'{s}' -> '{k}'" for s, k in b.kernel_names.items() if s != k]
    if renamed:
        b.note = "specs bind to the kernel's parameters by position: " + ", ".join(renamed)
    return b


def _by_name(params: list, pnames: list[str], specs: list, snames: list[str]) -> Binding:
    by_name = {s.name: s for s in specs}
    missing = [n for n in pnames if n not in by_name]
    if missing:
        return _refused(f"no spec named {', '.join(repr(n) for n in missing)}", pnames, snames,
                        "a multi-card (@pl.jit.host) program is dispatched with each "
                        "parameter looked up by its name among the specs")
    b = Binding(ordered=[by_name[n] for n in pnames])
    for p in params:
        b.directions[p.var.name] = _direction(p)
        b.kernel_names[p.var.name] = p.var.name
    moved = [n for i, n in enumerate(pnames) if i >= len(snames) or snames[i] != n]
    if moved:
        b.note = ("specs bind to the host program's parameters by name (pypto-lib dispatches "
                  "a @pl.jit.host program so); not in parameter order: " + ", ".join(moved))
    return b


def _direction(param: Any) -> str:
    d = param.direction
    return getattr(d, "value", str(d))


__all__ = ["Binding", "bind_specs"]
