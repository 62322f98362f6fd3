"""The built-in simulator: runs compiled `pl` kernels on numpy.

    softmax(x, y)                      # a @pl.jit call runs here; y (pl.Out) is filled
    r = pypto.sim.simulate(softmax, x, y, platform="a5sim")
    r.outputs["y"], r.trace.tasks, r.trace.edges, r.blame("y", (3, 7))

Execution model: the orchestration function runs as Python control flow; every
launch of an outlined region is one task (an SPMD launch of N blocks is one task
whose blocks run with their real `get_block_idx()`), executed when it is reached
(program order is a valid topological order). Blocks meeting at
`pl.system.syncall` run interleaved. Memory: `pl.Tensor` arguments are uploaded
and never copied back, `pl.Out` buffers start as allocator residue (NaN /
garbage) and are copied back, `pl.InOut` both. An argument or compile error touches no
array; a run that faults leaves `pl.In` arrays intact and names, in
`SimulationError.partial_outputs`, the Out/InOut arrays it was writing in place (they
hold a partial result). See `pypto.sim.interp` for the
interpreter and the execution-context contract, `pypto.sim.intrinsics` for the
memory model, `pypto.sim.trace` for the trace and cost model.

Execution context (`ctx=` for impls with `wants_ctx=True`): `in_region`,
`block_idx`, `block_num`, `subblock_idx`, `platform` (`.clusters`, `.aiv_cores`,
...), `task_id`, `valid_shapes` (per positional argument: its runtime valid shape
or None when fully valid), `span`, and the methods `new_task_id()`, `barrier()`.
"""
from pypto.errors import SimulationError  # noqa: F401
from pypto.sim.api import (SimConfig, SimResult, config_platform, host_args,  # noqa: F401
                           run_compiled, simulate)
from pypto.sim.platform import A2A3SIM, A5SIM, PLATFORMS, Platform, get_platform  # noqa: F401
from pypto.sim.trace import COST_MODEL, Trace, TaskRecord  # noqa: F401

__all__ = ["SimulationError", "run_compiled", "simulate", "SimConfig", "SimResult", "Platform", "get_platform",
           "PLATFORMS", "A2A3SIM", "A5SIM", "Trace", "TaskRecord", "COST_MODEL"]
