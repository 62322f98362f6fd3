"""The checks of simulated runs, selected by `SimConfig.checks` / `simulate(checks=...)`:

* `"oob"`: the bounds of every slice / load / store / assemble / read / write, checked by
  the memory intrinsics (`pypto.sim.engine.intrinsics`). With
  `SimConfig.oob_reads="warn"` a read past the end of a tensor is recorded (`oob`:
  `OobRead`, `SimResult.oob_reads`) instead of faulting.
* `"ub"` (`budget`): the on-chip budget of every region, at its first launch.
* `"race"` (`races`): accesses of the same elements by tasks the runtime would not
  order (declared directions, `deps=`, manual scopes), by blocks of one SPMD task
  and by iterations of a `pl.parallel` loop; found after the run from the trace,
  collected into `SimResult.races` (a `RaceReport`), raised as `RaceError` when strict.
* `"window"` (`pypto.sim.cluster.happens`): in a multi-card run, window elements two
  ranks touch with no notify -> wait ordering them (the ranks' vector clocks); found
  after the run from the ranks' window accesses (the check traces the ranks),
  collected into `ClusterResult.window_races`, raised as `WindowRaceError` when strict.
  On by default; `"race"` implies it. A pair that only the pace of the ranks' workers
  orders (a later host round overwriting a window a peer read in an earlier one: the
  runtime tracks no write-after-read edge) is reported by `"race"`; by default it is
  kept in `ClusterResult.window_races_by_timing`.
* `"uninit"` (`uninit`): reads of `pl.Out` residue and of never-written
  `pl.create_tensor` / `pl.create_tile` elements, checked during the run against
  per-buffer "written" bitmaps; `UninitializedReadError` at the culprit when strict,
  else collected into `SimResult.uninit_reads`.

* `"div"` (`divide`): integer division (and remainder) by zero, which has one defined
  result whether or not the check runs (`pypto.ops.intdiv`); `DivisionByZeroError` at
  the op when strict, else collected into `SimResult.zero_divisions`.

The core's default is `("oob", "ub", "window", "div")`; the workbench runs oob, ub, race and uninit,
not strictly.
"""
from pypto.sim.checks.divide import DivideLog, DivisionByZeroError, ZeroDivision
from pypto.sim.checks.oob import OobRead
from pypto.sim.checks.races import Race, RaceError, RaceReport, RaceSide, find_races, happens_before
from pypto.sim.checks.uninit import UninitializedReadError, UninitRead, UninitTracker
from pypto.sim.config import CHECKS as ALL_CHECKS

DEFAULT_CHECKS = ("oob", "ub", "window", "div")

__all__ = [
                                    "ALL_CHECKS",
                                    "DEFAULT_CHECKS",
                                    "DivideLog",
                                    "DivisionByZeroError",
                                    "OobRead",
                                    "Race",
                                    "RaceError",
                                    "RaceReport",
                                    "RaceSide",
                                    "UninitRead",
                                    "UninitTracker",
                                    "UninitializedReadError",
                                    "ZeroDivision",
                                    "find_races",
                                    "happens_before",
]
