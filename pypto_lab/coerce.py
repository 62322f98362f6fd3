"""What the views accept: a kernel, a compiled program, a run (the workbench's `LabRun`
or the `RunResult` of `pypto.golden.run_jit`) or a `%%pypto` result."""
from __future__ import annotations

from typing import Any

from pypto_lab.runs import LabRun, from_run_result


def compiled_of(obj: Any) -> Any:
    """A `CompiledProgram` from a kernel, a compiled program or a result object."""
    if hasattr(obj, "program") and hasattr(obj, "records"):
        return obj
    if hasattr(obj, "compiled") and obj.compiled is not None:
        return obj.compiled
    if hasattr(obj, "kernels") and obj.kernels:
        return compiled_of(obj.kernels[-1])
    if hasattr(obj, "compile"):
        return obj.compile()
    raise TypeError(f"expected a @pl.jit kernel, a CompiledProgram or a %%pypto result, "
                    f"not {type(obj).__name__}")


def run_of(obj: Any) -> LabRun:
    """The `LabRun` held by `obj`: a `LabRun`, the `RunResult` of `pypto.golden.run_jit`
    (run with a trace, the default), a kernel result or a `%%pypto` cell result."""
    if isinstance(obj, LabRun):
        return obj
    if hasattr(obj, "outputs") and hasattr(obj, "sim") and hasattr(obj, "report"):
        return from_run_result(obj, obj.name or "kernel", obj.platform or "a2a3sim")
    run = getattr(obj, "run", None)
    if isinstance(run, LabRun):
        return run
    for k in getattr(obj, "kernels", ()):
        if isinstance(getattr(k, "run", None), LabRun):
            return k.run
    raise ValueError("no simulated run here: pass the result of pypto.golden.run_jit, or "
                     "run the kernel in a cell with %%pypto --run SPECS [GOLDEN]")
