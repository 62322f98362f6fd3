"""Issue 31, item 8: a multi-card run reports its progress as one line for the world (the
host's run, counting every rank's tasks and work), not one line per rank."""
from __future__ import annotations

import rank_kernels as rk

import pypto.sim.runtime.executable as executable
from pypto.sim import SimConfig


def test_one_progress_report_for_the_world_with_the_ranks_counted(monkeypatch):
    # what the progress monitor is asked to watch (it reports a watched run once it has
    # taken its delay: which runs are watched decides how many lines there are)
    watched = []
    real = executable.watch

    def recording(run, name):
        watched.append((run, name))
        return real(run, name)

    monkeypatch.setattr(executable, "watch", recording)
    res = rk.mark_every_rank(config=SimConfig(device_ids=tuple(range(8)), trace=True))
    (world, name), = watched  # one watched run, not one per rank (nine before)
    assert "@rank" not in name
    # its counters are the world's: the host launches no task itself
    rank_tasks = sum(r.task_count for r in res.ranks)
    assert rank_tasks >= 8 and world.next_tid >= rank_tasks
    assert world.work >= sum(r.work for r in res._world.runs if r is not None)
