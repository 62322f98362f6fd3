"""The SoC model of `pypto.backend` (what the real toolchain's tests read core counts
from): its counts and capacities are the platform table's, so a kernel sized from the
model is sized for what the simulator checks."""
from __future__ import annotations

import pytest

from pypto import backend
from pypto.ir.types import MemorySpace
from pypto.platform import A2A3SIM, A5SIM
from pypto.pypto_core import backend as core_backend
from pypto.pypto_core import ir as core_ir


def _walk_count(bk: backend.Backend, core_type) -> int:
    """Count cores the way test code does: over dies, clusters and cores."""
    total = 0
    for die, die_n in bk.soc.die_counts.items():
        for cluster, cluster_n in die.cluster_counts.items():
            for core, core_n in cluster.core_counts.items():
                if core.core_type == core_type:
                    total += core_n * cluster_n * die_n
    return total


@pytest.mark.parametrize("cls, plat", [(backend.Backend910B, A2A3SIM),
                                       (backend.Backend950, A5SIM)])
def test_core_counts_and_capacities_are_the_platforms(cls, plat):
    bk = cls.instance()
    assert bk is cls.instance()
    cube, vector = core_ir.CoreType.CUBE, core_ir.CoreType.VECTOR
    assert (int(cube), int(vector)) == (0, 1)  # the runtime's task core types
    assert _walk_count(bk, vector) == bk.get_core_count(vector) == plat.aiv_cores
    assert _walk_count(bk, cube) == bk.get_core_count(cube) == plat.aic_cores
    assert bk.soc.total_core_count() == plat.aic_cores + plat.aiv_cores
    for space in ("Vec", "Mat", "Left", "Right", "Acc", "Bias"):
        assert bk.get_mem_size(MemorySpace[space]) == plat.capacity(space)
    assert bk.get_mem_size(MemorySpace.DDR) == 0


def test_the_two_families_are_laid_out_as_the_real_chips():
    b910 = backend.Backend910B.instance().soc
    assert b910.total_die_count() == 1 and b910.total_cluster_count() == 72  # 24 + 48
    b950 = backend.Backend950.instance().soc
    assert b950.total_die_count() == 2 and b950.total_cluster_count() == 36
    (die,) = b950.die_counts
    (cluster,) = die.cluster_counts
    assert sorted(c.core_type for c, n in cluster.core_counts.items() for _ in range(n)) == \
        [core_ir.CoreType.CUBE, core_ir.CoreType.VECTOR, core_ir.CoreType.VECTOR]


def test_the_configured_backend_gives_its_model():
    backend.reset_for_testing()
    try:
        with pytest.raises(ValueError, match="has not been configured"):
            backend.get_backend_instance()
        backend.set_backend_type(backend.BackendType.Ascend950)
        assert backend.get_backend_instance() is backend.Backend950.instance()
        assert core_backend.get_backend_instance() is backend.Backend950.instance()
    finally:
        backend.reset_for_testing()
