"""Issue 31, item 8: a multi-card run reports its progress as one line for the world (the
host's run, counting every rank's tasks and work), not one line per rank."""
from __future__ import annotations

import rank_kernels as rk

from pypto.sim import SimConfig, on_progress


def test_one_progress_report_for_the_world_with_the_ranks_counted():
    got = []
    with on_progress(got.append, delay=0.0, every=0.01):
        res = rk.mark_every_rank(config=SimConfig(device_ids=tuple(range(64)), trace=True))
    assert got and got[-1].done
    assert {p.run for p in got} == {got[0].run}  # one run reported, not one per rank
    assert all("@rank" not in p.program for p in got)
    # the last report counts the ranks' tasks: the host launches none itself
    rank_tasks = sum(r.task_count for r in res.ranks)
    assert rank_tasks >= 64 and got[-1].tasks >= rank_tasks
