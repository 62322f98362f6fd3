"""Helpers for the harness tests.

`fake_kernel` builds a stand-in for a compiled program (entry parameters with
directions plus a numpy body) and routes the harness's simulator call to a small
emulation of the device contract: `Out` parameters start as residue (NaN / a fixed
integer pattern), `In`/`InOut` are uploaded, and only `Out`/`InOut` come back.
That lets the harness logic be tested without the real simulator; tests that need
real kernels use `needs_sim`.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from pypto.ir.nodes import Direction, FunctionKind

INT_RESIDUE = 0x5A


def _residue(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f" or dtype.name.startswith(("bfloat", "float")):
        return np.full(shape, np.nan, dtype=dtype)
    return np.full(shape, INT_RESIDUE, dtype=dtype)


class FakeCompiled:
    def __init__(self, name, params, body, kind=FunctionKind.ORCHESTRATION):
        self.body = body
        self.analyses = {}
        ps = [SimpleNamespace(var=SimpleNamespace(name=n), direction=Direction(d))
              for n, d in params]
        self.program = SimpleNamespace(name=name,
                                       entry_function=SimpleNamespace(name=name, params=ps,
                                                                      kind=kind))
        self.__name__ = name
        self.calls = 0


def fake_simulate(compiled, args, platform, uninit="residue", runtime_cfg=None, devices=None,
                  config=None):
    compiled.calls += 1
    device = {}
    for p, a in zip(compiled.program.entry_function.params, args):
        if p.direction is Direction.OUT:
            shape, dtype = np.shape(a), np.asarray(a).dtype
            device[p.var.name] = np.zeros(shape, dtype) if uninit == "zero" else \
                _residue(shape, dtype)
        elif isinstance(a, np.ndarray):
            device[p.var.name] = a.copy()
        else:
            device[p.var.name] = a
    compiled.body(device)
    outputs = {p.var.name: device[p.var.name] for p in compiled.program.entry_function.params
               if p.direction in (Direction.OUT, Direction.INOUT)}
    return SimpleNamespace(outputs=outputs, trace=None, oob_reads=[])


def _sim_available() -> bool:
    try:
        from pypto.sim import simulate  # noqa: F401
    except ImportError:
        return False
    return True


needs_sim = pytest.mark.skipif(not _sim_available(), reason="pypto.sim.simulate not available")
