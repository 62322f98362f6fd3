"""`DistributedConfig`: which devices a multi-card (`@pl.jit.host`) program runs on.

pypto-lib passes it as `run_jit(compile_cfg=dict(distributed_config=DistributedConfig(
device_ids=[0, 1], num_sub_workers=0)))`. On the simulator each device id is one
simulated rank: rank `r` is `device_ids[r]`, and `pld.world_size()` is their number.
The other fields configure the real runtime's worker processes; they are validated as
the real toolchain does and otherwise have no effect here.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class DistributedConfig:
    """The devices of a multi-card run (one simulated rank per id)."""

    device_ids: list = field(default_factory=lambda: [0])
    num_sub_workers: int = 0
    runtime: str = "tensormap_and_ringbuffer"
    aicpu_thread_num: int = 0

    def __post_init__(self) -> None:
        ids = self.device_ids
        if isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__"):
            raise ValueError(f"DistributedConfig.device_ids must be a list of device indices, "
                             f"got {ids!r}")
        ids = list(ids)
        if not ids:
            raise ValueError("DistributedConfig.device_ids must not be empty")
        if any(isinstance(d, bool) or not isinstance(d, int) for d in ids):
            raise ValueError(f"DistributedConfig.device_ids must be ints, got {ids}")
        if any(d < 0 for d in ids):
            raise ValueError(f"DistributedConfig.device_ids must be non-negative device "
                             f"indices, got {ids}")
        if len(set(ids)) != len(ids):
            raise ValueError(f"DistributedConfig.device_ids must be distinct (two ranks cannot "
                             f"share a card), got {ids}")
        if self.num_sub_workers < 0:
            raise ValueError(f"DistributedConfig.num_sub_workers must be non-negative, got "
                             f"{self.num_sub_workers}")
        if self.aicpu_thread_num < 0 or self.aicpu_thread_num == 1:
            raise ValueError("DistributedConfig.aicpu_thread_num must be 0 (architecture "
                             f"default) or at least 2, got {self.aicpu_thread_num}")
        self.device_ids = ids

    @property
    def world_size(self) -> int:
        return len(self.device_ids)


__all__ = ["DistributedConfig"]
