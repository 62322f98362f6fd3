"""Sanitizers of simulated runs, selected by `simulate(..., checks=...)`:

* `"race"` (`races`): accesses of the same elements by tasks the runtime would not
  order (declared directions, `deps=`, manual scopes), by blocks of one SPMD task
  and by iterations of a `pl.parallel` loop; found after the run from the trace,
  collected into `SimResult.races` (a `RaceReport`), raised as `RaceError` when strict.
* `"uninit"` (`uninit`): reads of `pl.Out` residue and of never-written
  `pl.create_tensor` / `pl.create_tile` elements, checked during the run against
  per-buffer "written" bitmaps; `UninitializedReadError` at the culprit when strict,
  else collected into `SimResult.uninit_reads`.

The other two checks, `"oob"` (bounds of every access) and `"ub"` (on-chip budget of
every region), live in the interpreter; the core's default is `("oob", "ub")`. With
`SimConfig.oob_reads="warn"` a read past the end of a tensor is recorded (`oob`,
`SimResult.oob_reads`) instead of faulting.
"""
from pypto.sim.sanitizers.oob import OobRead  # noqa: F401
from pypto.sim.sanitizers.races import (Race, RaceError, RaceReport, RaceSide,  # noqa: F401
                                        find_races, happens_before)
from pypto.sim.sanitizers.uninit import (UninitializedReadError, UninitRead,  # noqa: F401
                                         UninitTracker)

ALL_CHECKS = ("oob", "ub", "race", "uninit")
DEFAULT_CHECKS = ("oob", "ub")

__all__ = ["ALL_CHECKS", "DEFAULT_CHECKS", "OobRead", "Race", "RaceError", "RaceReport", "RaceSide",
           "find_races", "happens_before", "UninitializedReadError", "UninitRead",
           "UninitTracker"]
