"""Several simulated cards in one process (`pypto.language.distributed`, `pld`).

A `@pl.jit.host` program runs its host function (`host.py`: window buffers, dispatches
on ranks, host collectives), then its ranks (`world.py`): one `Run` per rank from the
same compiled program, stepped one at a time by a deterministic scheduler
(`scheduler.py`) so that a wait blocks only its own rank. A rank's kernels reach the
others through `ctx.comm` (`rank.py`): signals (`signals.py`), one-sided transfers
(`rma.py`) and the collectives (`collectives.py`) over symmetric window buffers
(`windows.py`). Vector clocks carried by the signals order the ranks for the window
race check (`happens.py`). `run.py` is the entry the simulator calls for a host
program; `result.py` the `ClusterResult` it returns.
"""
