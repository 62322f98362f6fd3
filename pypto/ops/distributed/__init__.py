"""The cross-rank ops of `pypto.language.distributed` (`pld`): window buffers and
communication contexts, signals, one-sided transfers and the collectives.

Every impl hands the work to the simulated ranks' runtime (`ctx.comm`), which owns the
windows of every rank and the scheduler that lets a waiting rank block while the
others run.
"""
from pypto.ops.distributed import collectives, signal, transfer, window  # noqa: F401
