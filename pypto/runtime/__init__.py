"""`pypto.runtime`: the run configuration and result names of the real toolchain.

`RunConfig` carries what a run is asked for (platform, tolerances, the DFX and
ring-sizing flags); on pypto-lab the platform picks the simulator and the tolerances
drive validation, the rest is accepted as the device runtime's business. `run` compiles
a program and runs it on the simulator (the real compile-and-call); harness runs with
goldens go through `pypto.golden` (`run`, `run_jit`). `ChipWorker` / `DeviceTensor`
are the real runtime's explicit dispatch and resident buffers, on the simulator.
"""
from pypto.runtime.pto_isa import pto_isa_include_dir
from pypto.runtime.runner import RunConfig, RunResult, run
from pypto.runtime.tensor_spec import ScalarSpec, TensorSpec
from pypto.runtime.worker import ChipWorker, DeviceTensor, RegistrationHandle

__all__ = ["ChipWorker", "DeviceTensor", "RegistrationHandle", "RunConfig", "RunResult",
           "ScalarSpec", "TensorSpec", "pto_isa_include_dir", "run"]
