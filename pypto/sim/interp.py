"""The interpreter: IR functions compiled once into Python closures, run by a `Machine`.

Compilation turns every expression into a closure `f(env) -> value` and every
statement into a closure `s(env) -> signal` (None, or BREAK / CONTINUE /
RETURN), so running a kernel does no isinstance dispatch on IR nodes: the
decisions (which op, which arguments are constants, how to cast the result,
whether the site is inside a region) are taken once, at compile time. `env` is a
plain dict keyed by variable name (the IR's naming contract). The valid shape of
a value whose valid region is smaller than its physical shape rides on the value
itself (`pypto.ops.numeric.ValidArray`, shared with the op impls); a result whose
type rule declares a valid shape is tagged with it when the impl did not.

The memory ops (slice/load/store/assemble/read/write, tensor and tile
creation, valid-shape ops, task handles) are *intrinsics* here: they implement
the simulated memory model (views vs copies, residue, padding, bounds checks,
access recording). Every other op runs its registry `impl` and the result is cast
to the dtype its type rule declared.

The implementation is split by responsibility: `values` (signals, UNDEF, the execution
context, scalar casters), `machine` (per-run state, buffers, access recording, the entry),
`tasks` (launches, blocks, budget), `compiler` (expressions, calls, op calls), `statements`,
`costs` (trace-mode accounting), `intrinsics` (the memory model's ops) and `batch` (running
the independent blocks of a parallel launch loop / SPMD launch as one vectorised pass).
This module keeps the historical import path.
"""
from __future__ import annotations

from pypto.sim.compiler import CompiledFunction, FnCompiler  # noqa: F401
from pypto.sim.machine import (Machine, _is_mixed, _mark_partial_outputs, _merge,  # noqa: F401
                               _strided_like)
from pypto.sim.values import (BREAK, CONTINUE, RETURN, UNDEF, ExecContext,  # noqa: F401
                              _flatten_deps, _ints, _pad_mode, _pyint, _scalar_caster)

__all__ = ["Machine", "ExecContext", "CompiledFunction", "FnCompiler", "UNDEF"]
