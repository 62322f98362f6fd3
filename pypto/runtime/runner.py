"""`RunConfig` / `RunResult` with the real toolchain's fields and defaults."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pypto.backend import BackendType
from pypto.ir.pass_manager import OptimizationStrategy


@dataclass
class RunConfig:
    """What a run is asked for. `platform` picks the simulator (a2a3 / a5 run on their
    twins), `rtol` / `atol` are the default validation tolerances; the other fields
    (device, dumps, DFX capture, ring sizes, memory planner) configure the device
    runtime and the real code generator and have no effect on the simulator."""

    __test__ = False  # not a pytest test class

    platform: str = "a2a3sim"
    device_id: int = 0
    rtol: float = 1e-5
    atol: float = 1e-5
    strategy: OptimizationStrategy = OptimizationStrategy.Default
    backend_type: BackendType = BackendType.Ascend910B
    dump_passes: Any = False
    save_kernels: bool = False
    save_kernels_dir: str | None = None
    codegen_only: bool = False
    enable_chip_swimlane: int | bool = 0
    enable_dump_args: int = 0
    enable_pmu: int = 0
    enable_dep_gen: bool = False
    enable_scope_stats: bool = False
    compile_profiling: bool = False
    diagnostic_phase: Any = None
    disabled_diagnostics: Any = None
    golden_data_dir: str | None = None
    aicpu_thread_num: int | None = None
    ring_task_window: Any = None
    ring_heap: Any = None
    ring_dep_pool: Any = None
    distributed_config: Any = None
    analyze_auto_scopes_for_deps: bool = False
    memory_planner: Any = None
    dump_ptoas_passes: bool = False

    def runtime_cfg(self) -> dict:
        """The `runtime_cfg` of a `pypto.golden` run asking for the same thing."""
        return {"platform": self.platform, "device_id": self.device_id,
                "enable_chip_swimlane": self.enable_chip_swimlane,
                "enable_dump_args": self.enable_dump_args, "enable_pmu": self.enable_pmu,
                "enable_dep_gen": self.enable_dep_gen,
                "enable_scope_stats": self.enable_scope_stats}


@dataclass
class RunResult:
    """The outcome of one run (`passed`, and `error` when it did not)."""

    passed: bool
    test_name: str | None = None
    error: str | None = None
    execution_time: float | None = None
    profile: dict[str, Any] | None = field(default=None)

    def __str__(self) -> str:
        took = f" ({self.execution_time:.2f}s)" if self.execution_time is not None else ""
        if self.passed:
            return "PASS" + took
        return "FAIL" + (f": {self.error}" if self.error else "") + took


def run(program: Any, *tensors: Any, config: RunConfig | None = None) -> Any:
    """Compile `program` (a `@pl.program`, a `@pl.jit` function) and, given tensors, run
    it on the simulator with them, as the real `pypto.runtime.run`: the tensors are the
    entry's arguments in order (`pl.Out` / `pl.InOut` ones are filled in place; torch
    CPU tensors are shared, not copied). Returns the `CompiledProgram`, which a call
    runs again. `config.codegen_only` compiles only; a hardware platform (`a2a3`, `a5`)
    compiles for its numbers and refuses to run, naming its simulated twin."""
    config = config if config is not None else RunConfig()
    compiled = program.compile(*tensors, config=config)
    if tensors and not config.codegen_only:
        compiled(*tensors, config=config)
    return compiled
