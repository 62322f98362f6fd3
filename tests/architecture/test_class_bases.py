"""The simulator's classes are composed, not stacked (issue 30): no class of `pypto.sim`
has more than one base class of the project (a compiler *has* the parts it asks, as the
batch lowering has its block-by-block compiler), and no base asks which of its methods a
subclass overrides (`type(self).m is Base.m`)."""
from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

SIM = Path(__file__).resolve().parents[2] / "pypto" / "sim"


def _module_names() -> list[str]:
    out = []
    for f in sorted(SIM.rglob("*.py")):
        parts = f.relative_to(SIM.parents[1]).with_suffix("").parts
        out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


def _sim_classes() -> dict[str, type]:
    classes = {}
    for name in _module_names():
        mod = importlib.import_module(name)
        for n, c in vars(mod).items():
            if inspect.isclass(c) and c.__module__ == name:
                classes[f"{name}.{n}"] = c
    return classes


def test_no_sim_class_has_more_than_one_project_base():
    classes = _sim_classes()
    assert len(classes) > 100 and "pypto.sim.batch.compiler.BatchLowering" in classes
    stacked = {name: [b.__name__ for b in c.__bases__ if b.__module__.startswith("pypto")]
               for name, c in classes.items()}
    assert {n: bs for n, bs in stacked.items() if len(bs) > 1} == {}


def test_the_batch_lowering_has_its_compiler():
    from pypto.sim.batch.compiler import BatchLowering
    from pypto.sim.engine.compiler import FnCompiler

    assert BatchLowering.__bases__ == (object,)
    assert not issubclass(BatchLowering, FnCompiler)


def test_no_sim_base_probes_its_subclasses():
    probes = []
    for f in sorted(SIM.rglob("*.py")):
        for n in ast.walk(ast.parse(f.read_text(), str(f))):
            # type(self) / self.__class__, asked for one of its attributes
            if isinstance(n, ast.Attribute) and (
                    (isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name) and
                     n.value.func.id == "type" and len(n.value.args) == 1 and
                     isinstance(n.value.args[0], ast.Name) and n.value.args[0].id == "self")
                    or (isinstance(n.value, ast.Attribute) and n.value.attr == "__class__" and
                        isinstance(n.value.value, ast.Name) and n.value.value.id == "self")):
                probes.append(f"{f.relative_to(SIM)}:{n.lineno}")
    assert probes == []
