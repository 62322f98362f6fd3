"""What a multi-card result says about batching: the kernels run on the ranks, each
per-device function as an executable of its own, so `batch_refusals` and `batch_stats`
of a `ClusterResult` gather those of every rank (the host's alone said nothing about
the regions that cost the time)."""
from __future__ import annotations

import inspect

import numpy as np
import rank_kernels
from rank_kernels import NR, S, batching_on_ranks

from pypto.sim import SimConfig

CHAIN = "plus_one_then_chain_chain"


def _run():
    x = np.arange(NR * 8 * S, dtype=np.float32).reshape(NR, 8, S)
    y, acc = np.zeros_like(x), np.zeros_like(x)
    r = batching_on_ranks(x, y, acc, config=SimConfig(device_ids=(0, 1)))
    return r, x, y, acc


def test_the_ranks_refusals_and_batched_launches_are_reported():
    r, x, y, acc = _run()
    assert np.array_equal(y, x + 1)
    assert np.array_equal(acc[:, :, 0], np.tile(np.arange(8, dtype=np.float32), (NR, 1)))
    # the independent rows batch once per rank; the chain reads what the row before
    # wrote, so it runs block by block, and says why
    assert r.batch_stats == {"batched": NR, "fallback": 0}
    assert r.batch_refusals[CHAIN] == ("the windows of 'acc' may overlap from block to "
                                       "block (batch axis 0)")
    for rank in r.ranks:
        assert rank.batch_stats == {"batched": 1, "fallback": 0}
        assert dict(rank.batch_refusals) == {CHAIN: r.batch_refusals[CHAIN]}


def test_the_hosts_own_refusals_stay_in_the_result():
    r, *_ = _run()
    host = [k for k in r.batch_refusals if k.startswith("loop ")]
    assert len(host) == 1 and host[0].endswith("rank_kernels.py:" + str(_host_loop_line()))


def _host_loop_line() -> int:
    lines, start = inspect.getsourcelines(rank_kernels.batching_on_ranks)
    return start + next(i for i, ln in enumerate(lines) if "for r in pl.range" in ln)
