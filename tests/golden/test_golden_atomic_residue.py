"""A kernel that atomically adds into a pure pl.Out it never plainly wrote: the sum
starts from allocator residue (the L2 guide's rule), and the run report names the
tensor, the task, the atomic store's line and the fixes; zero-filling first, or
pl.InOut with a zero init_value, passes."""
from pathlib import Path

import numpy as np
from golden_helpers import needs_sim

import pypto.language as pl
from pypto.golden import TensorSpec, run_jit

N = 32
HERE = __file__

pytestmark = needs_sim


@pl.jit
def accumulate(x: pl.Tensor[[N, N], pl.FP32], out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc"):
        t = pl.load(x, [0, 0], [N, N])
        pl.store(t, [0, 0], out, atomic=pl.AtomicType.Add)  # ATOMIC
    return out


@pl.jit
def zero_then_accumulate(x: pl.Tensor[[N, N], pl.FP32],
                         out: pl.Out[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc"):
        out = pl.assemble(out, pl.full([N, N], dtype=pl.FP32, value=0.0), [0, 0])
        t = pl.load(x, [0, 0], [N, N])
        pl.store(t, [0, 0], out, atomic=pl.AtomicType.Add)
    return out


@pl.jit
def accumulate_inout(x: pl.Tensor[[N, N], pl.FP32],
                     out: pl.InOut[pl.Tensor[[N, N], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc"):
        t = pl.load(x, [0, 0], [N, N])
        pl.store(t, [0, 0], out, atomic=pl.AtomicType.Add)
    return out


def _specs(init=None):
    return [TensorSpec("x", [N, N], np.float32,
                       init_value=lambda: np.random.default_rng(3).standard_normal((N, N))),
            TensorSpec("out", [N, N], np.float32, is_output=True, init_value=init)]


def _golden(t):
    t["out"][:] = t["out"] + t["x"]


def _line(tag: str) -> int:
    lines = Path(HERE).read_text().splitlines()
    return next(i + 1 for i, text in enumerate(lines) if text.rstrip().endswith(f"# {tag}"))


def test_an_atomic_add_onto_an_unwritten_out_is_diagnosed():
    r = run_jit(accumulate, _specs(), _golden, verbose=False)
    assert not r.passed
    hints = " ".join(r.outputs["out"].hints)
    assert "'out' is a pure pl.Out, and task 'acc' accumulates into 1024 element(s) " \
           "[0:32, 0:32] of it with an atomic add" in hints
    assert f"test_golden_atomic_residue.py:{_line('ATOMIC')}" in hints
    assert "pl.InOut[...] with a zero init_value" in hints and "zero-fill it" in hints
    assert "atomic add" in r.report()


def test_the_fixes_pass():
    assert run_jit(zero_then_accumulate, _specs(), _golden, verbose=False).passed
    assert run_jit(accumulate_inout, _specs(init=0.0), _golden, verbose=False).passed
