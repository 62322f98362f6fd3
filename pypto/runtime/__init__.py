"""`pypto.runtime`: the run configuration and result names of the real toolchain.

`RunConfig` carries what a run is asked for (platform, tolerances, the DFX and
ring-sizing flags); on pypto-lab the platform picks the simulator and the tolerances
drive validation, the rest is accepted as the device runtime's business. The runs
themselves go through `pypto.golden` (`run`, `run_jit`).
"""
from pypto.runtime.runner import RunConfig, RunResult
from pypto.runtime.tensor_spec import ScalarSpec, TensorSpec

__all__ = ["RunConfig", "RunResult", "ScalarSpec", "TensorSpec"]
