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
hold a partial result).

The house (see docs/architecture.md): `config` / `result` / `entry` are the public
face; `engine` compiles IR into closures that hold no run state; `machine` is the state
of one call (`Run`) and of each task (`TaskFrame`, also the execution context `ctx=`
of op impls); `runtime` makes programs runnable (`Executable`), binds arguments and
decides how each launch runs; `batch` runs independent blocks as one vectorised pass;
`checks` are the five checks; `trace` what a run leaves behind and the cost model;
`device` the simulated memory.
"""
from pypto.errors import SimulationError
from pypto.platform import A2A3SIM, A5SIM, PLATFORMS, Platform, get_platform
from pypto.sim.config import SimConfig, config_platform
from pypto.sim.device.fill import residue
from pypto.sim.entry import run_compiled, simulate
from pypto.sim.result import SimResult
from pypto.sim.runtime.progress import (
    Progress,
    get_progress,
    on_progress,
    set_progress,
    terminal_progress,
)
from pypto.sim.runtime.transfers import host_args
from pypto.sim.trace.trace import COST_MODEL, TaskRecord, Trace

__all__ = [
           "A2A3SIM",
           "A5SIM",
           "COST_MODEL",
           "PLATFORMS",
           "Platform",
           "Progress",
           "SimConfig",
           "SimResult",
           "SimulationError",
           "TaskRecord",
           "Trace",
           "config_platform",
           "get_platform",
           "get_progress",
           "host_args",
           "on_progress",
           "residue",
           "run_compiled",
           "set_progress",
           "simulate",
           "terminal_progress",
]
