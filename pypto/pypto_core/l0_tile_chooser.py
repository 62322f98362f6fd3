"""ChooseL0Tile: the L0 tile `(m, n, k)` the real compiler's AutoTileMatmulL0 picks for a
Mat-resident matmul (reference §6 "Roofline used by ChooseL0Tile";
`docs/en/dev/passes/15-auto_tile_matmul_l0.md` of the real pypto).

An exhaustive search over the design space `(m, n, k, stationarity, dbC)` for the lowest
roofline wall, in core cycles:

    compute = max(C_load, C_mad)
    wall    = compute + C_drain                                   single L0C
            = max(compute, C_drain) + min(compute, C_drain) / T   double-buffered L0C

* `C_mad`: per output tile, one MAD issue per K block plus `cpr` passes over every
  16x16 output fractal and every K fractal actually run (a peeled K tail counts at
  its own width); `cpr` is 1 for 2-byte inputs, `mad_fp32_passes` for FP32.
* `C_load`: L1 -> L0 bytes over the port bandwidths. Split-K streams both operands per
  output tile; full-K output-stationary holds whichever operand is cheaper in cycles
  (`os_holds_a`); A- / B-stationary hold their operand.
* `C_drain`: per output tile a fixed FIXPIPE cost plus, per row, the larger of a floor
  and the byte throughput, plus a penalty per extra pass when the N-fractal count is
  not a power of two.

Legality: `m, n, k` multiples of the fractal, the physical accumulator (M rounded up to
`l0c_align_m`, 32 for INT32) within L0C (half with dbC), `m*k` / `n*k` within L0A / L0B
(halved for a moving, double-buffered operand). The output-stationary single-L0C optimum
is the baseline; the other regimes (when their gates are open) replace it only with a
strictly lower wall, and only when the baseline tiles at all. A- / B-stationary and
dbC need a full-K tile; dbC also two full tiles on the moving inner loop. Ties break by
padded volume, K blocks, load cycles, larger area, larger k.

The simulator needs no tiling to compute a product; this is the real compiler's choice,
under its real name (`pypto.pypto_core.passes.l0_tile_chooser`), for users and tests that
ask which schedule a shape gets. A pure hardware cost model: it imports nothing.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Stationarity(enum.Enum):
    """Which operand stays in L0 across the output grid."""

    OutputStationary = "output"
    AStationary = "a"
    BStationary = "b"


@dataclass
class L0TileConfig:
    """The problem, the hardware and the gates of one choice (defaults: a2a3 BF16)."""

    M: int = 0
    N: int = 0
    K: int = 0
    l0a_bytes: int = 0
    l0b_bytes: int = 0
    l0c_bytes: int = 0
    bytes_a: int = 2
    bytes_b: int = 2
    bytes_c: int = 4
    min_m: int = 16
    min_n: int = 16
    min_k: int = 16
    align_m: int = 16
    align_n: int = 16
    align_k: int = 16
    l0c_align_m: int = 16
    box_align_m: int = 1
    box_align_n: int = 1
    max_n: int = 0
    max_n_pipelined: int = 0
    max_n_nested_pipelined: int = 0
    allow_a_stationary: bool = False
    allow_b_stationary: bool = False
    allow_double_buffer_c: bool = False
    c_read: bool = False
    bw_a: float = 129.7
    bw_b: float = 85.4
    bw_drain: float = 118.0
    drain_fixed_cycles: float = 164.0
    drain_row_cycles: float = 4.45
    drain_penalty_cycles: float = 2.6
    drain_c0_bytes: int = 32
    mad_head: int = 21
    mad_k_fractal_bytes: int = 32
    mad_fp32_passes: int = 2
    allow_padding: bool = False
    allow_k_boundary: bool = False


@dataclass
class L0TileResult:
    m: int = 0
    n: int = 0
    k: int = 0
    estimated_traffic_bytes: int = 0
    estimated_cost_cycles: int = 0
    padded_compute_volume: int = 0
    stationarity: Stationarity = Stationarity.OutputStationary
    os_holds_a: bool = True
    double_buffer_c: bool = False
    perf_hint: str = field(default="")


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _up(x: int, a: int) -> int:
    return _cdiv(x, a) * a


def _odd(x: int) -> int:
    while x % 2 == 0:
        x //= 2
    return x


class _Model:
    """The cost terms of one configuration."""

    def __init__(self, cfg: L0TileConfig):
        self.c = cfg

    def grid(self, m: int, n: int) -> tuple[int, int]:
        return _cdiv(self.c.M, m), _cdiv(self.c.N, n)

    def held(self, m: int, n: int) -> tuple[float, float]:
        """Load cycles holding A (streaming B per row block) and holding B."""
        c = self.c
        gm, gn = self.grid(m, n)
        a_once, b_once = c.bytes_a * c.M * c.K / c.bw_a, c.bytes_b * c.K * c.N / c.bw_b
        return a_once + b_once * gm, a_once * gn + b_once

    def holds_a(self, m: int, n: int) -> bool:
        hold_a, hold_b = self.held(m, n)
        return hold_a <= hold_b

    def load(self, m: int, n: int, k: int, stat: Stationarity) -> float:
        hold_a, hold_b = self.held(m, n)
        if stat is Stationarity.AStationary:
            return hold_a
        if stat is Stationarity.BStationary:
            return hold_b
        if k >= self.c.K:
            return hold_a if hold_a <= hold_b else hold_b
        c = self.c
        gm, gn = self.grid(m, n)
        return c.bytes_a * c.M * c.K * gn / c.bw_a + c.bytes_b * c.K * c.N * gm / c.bw_b

    def mad(self, m: int, n: int, k: int) -> int:
        c = self.c
        kt = max(1, c.mad_k_fractal_bytes // c.bytes_a)
        passes = max(1, c.mad_fp32_passes) if c.bytes_a == 4 else max(1, c.bytes_a // 2)
        full, tail = divmod(c.K, k)
        blocks = full + (1 if tail else 0)
        fractals = full * _cdiv(k, kt) + (_cdiv(tail, kt) if tail else 0)
        gm, gn = self.grid(m, n)
        per_tile = blocks * c.mad_head + passes * _cdiv(m, c.align_m) * fractals * \
            _cdiv(n, c.align_n)
        return gm * gn * per_tile

    def drain(self, m: int, n: int) -> float:
        c = self.c
        gm, gn = self.grid(m, n)
        n1 = _cdiv(n, max(1, c.drain_c0_bytes // c.bytes_c))
        row = max(c.drain_row_cycles, c.bytes_c * n / c.bw_drain) + \
            c.drain_penalty_cycles * (_odd(n1) - 1)
        return gm * gn * (c.drain_fixed_cycles + m * row)

    def wall(self, m: int, n: int, k: int, stat: Stationarity, dbc: bool) -> int:
        compute = max(self.load(m, n, k, stat), float(self.mad(m, n, k)))
        drain = self.drain(m, n)
        if dbc:
            tiles = self.grid(m, n)[0] * self.grid(m, n)[1]
            w = max(compute, drain) + min(compute, drain) / tiles
        else:
            w = compute + drain
        return int(_round_half_away(w))

    def traffic(self, m: int, n: int, k: int, stat: Stationarity) -> int:
        c = self.c
        gm, gn = self.grid(m, n)
        a, b = c.bytes_a * c.M * c.K, c.bytes_b * c.K * c.N
        if stat is Stationarity.AStationary or (stat is Stationarity.OutputStationary and
                                                k >= c.K and self.holds_a(m, n)):
            a_t, b_t = a, b * gm
        elif stat is Stationarity.BStationary or k >= c.K:
            a_t, b_t = a * gn, b
        else:
            a_t, b_t = a * gn, b * gm
        return a_t + b_t + (2 if c.c_read else 1) * c.bytes_c * c.M * c.N

    def padded(self, m: int, n: int, k: int) -> int:
        c = self.c
        return _up(c.M, m) * _up(c.N, n) * _up(c.K, k)


def _round_half_away(x: float) -> float:
    return float(int(x + 0.5)) if x >= 0 else -float(int(-x + 0.5))


@dataclass
class _Point:
    m: int
    n: int
    k: int
    stat: Stationarity
    dbc: bool
    wall: int
    padded: int
    kblocks: int
    load: float

    def key(self) -> tuple:
        return (self.wall, self.padded, self.kblocks, self.load, -self.m * self.n, -self.k)


def _legal_ks(cfg: L0TileConfig, m: int, n: int, a_budget: int, b_budget: int) -> list[int]:
    bm, bn = _up(m, cfg.box_align_m), _up(n, cfg.box_align_n)
    cap = min(a_budget // bm, b_budget // bn)
    problem = max(_up(cfg.K, cfg.align_k), cfg.min_k) if cfg.allow_padding else cfg.K
    hi = min(cap, problem) // cfg.align_k * cfg.align_k
    peel = cfg.allow_k_boundary and cfg.K % cfg.align_k == 0
    return [k for k in range(cfg.min_k, hi + 1, cfg.align_k)
            if cfg.allow_padding or peel or cfg.K % k == 0]


def _physical_c(cfg: L0TileConfig, m: int, n: int) -> int:
    return _up(_up(m, cfg.box_align_m), cfg.l0c_align_m) * _up(n, cfg.box_align_n)


def _best(cfg: L0TileConfig, model: _Model, stat: Stationarity, dbc: bool,
          full_k_only: bool, inner_pair: bool) -> _Point | None:
    # a moving operand is double-buffered (half its L0), a held one single-buffered
    a_moves = stat is not Stationarity.AStationary
    b_moves = stat is not Stationarity.BStationary
    a_budget = cfg.l0a_bytes // (cfg.bytes_a * (2 if a_moves else 1))
    b_budget = cfg.l0b_bytes // (cfg.bytes_b * (2 if b_moves else 1))
    c_budget = cfg.l0c_bytes // (cfg.bytes_c * (2 if dbc else 1))
    m_hi = _up(cfg.M, cfg.align_m) if cfg.allow_padding else cfg.M
    n_hi = _up(cfg.N, cfg.align_n) if cfg.allow_padding else cfg.N
    if cfg.max_n > 0:
        n_hi = min(n_hi, cfg.max_n)
    best: _Point | None = None
    for m in range(cfg.min_m, m_hi + 1, cfg.align_m):
        rows = _up(_up(m, cfg.box_align_m), cfg.l0c_align_m)
        if rows * _up(cfg.min_n, cfg.box_align_n) > c_budget:
            break
        for n in range(cfg.min_n, min(n_hi, c_budget // rows) + 1, cfg.align_n):
            if _physical_c(cfg, m, n) > c_budget:
                continue
            if inner_pair:
                rows_outer = stat is Stationarity.AStationary or (
                    stat is Stationarity.OutputStationary and model.holds_a(m, n))
                if (cfg.N // n if rows_outer else cfg.M // m) < 2:
                    continue
            for k in _legal_ks(cfg, m, n, a_budget, b_budget):
                if full_k_only and k != cfg.K:
                    continue
                if not _n_caps_allow(cfg, model, m, n, k, stat):
                    continue
                p = _Point(m, n, k, stat, dbc, model.wall(m, n, k, stat, dbc),
                           model.padded(m, n, k), _cdiv(cfg.K, k), model.load(m, n, k, stat))
                if best is None or p.key() < best.key():
                    best = p
    return best


def _n_caps_allow(cfg: L0TileConfig, model: _Model, m: int, n: int, k: int,
                  stat: Stationarity) -> bool:
    if cfg.max_n > 0 and n > cfg.max_n:
        return False
    output_grid = k == cfg.K and (m != cfg.M or n != cfg.N)
    if not output_grid:
        return True
    os_ = stat is Stationarity.OutputStationary
    if cfg.max_n_pipelined > 0 and (os_ or stat is Stationarity.AStationary) and \
            n > cfg.max_n_pipelined:
        return False
    return not (cfg.max_n_nested_pipelined > 0 and os_ and model.holds_a(m, n)
                and n > cfg.max_n_nested_pipelined)


def choose_l0_tile(cfg: L0TileConfig) -> L0TileResult:
    """The minimum-wall L0 design point for `cfg` (see the module docstring)."""
    if min(cfg.M, cfg.N, cfg.K) <= 0:
        raise ValueError(f"ChooseL0Tile: M, N, K must all be positive (got {cfg.M}, {cfg.N}, "
                         f"{cfg.K})")
    if min(cfg.l0a_bytes, cfg.l0b_bytes, cfg.l0c_bytes) <= 0:
        raise ValueError("ChooseL0Tile: L0 capacities must be positive")
    if not cfg.allow_padding and (cfg.min_m > cfg.M or cfg.min_n > cfg.N or cfg.min_k > cfg.K):
        raise ValueError(f"ChooseL0Tile: allow_padding=false but the shape ({cfg.M}, {cfg.N}, "
                         f"{cfg.K}) is below the cube minimum tile dimension {cfg.min_m}")
    model = _Model(cfg)
    os_ = Stationarity.OutputStationary
    best = _best(cfg, model, os_, False, False, False)
    if best is None:
        raise ValueError(f"ChooseL0Tile: no legal (m, n, k) tile for M={cfg.M}, N={cfg.N}, "
                         f"K={cfg.K}; check the L0 capacities against the minimum tile")
    if (best.m, best.n, best.k) != (cfg.M, cfg.N, cfg.K):
        stats = [os_] + [s for s, on in ((Stationarity.AStationary, cfg.allow_a_stationary),
                                         (Stationarity.BStationary, cfg.allow_b_stationary))
                         if on]
        for stat in stats:
            for dbc in (False, True) if cfg.allow_double_buffer_c else (False,):
                if stat is os_ and not dbc:
                    continue
                c_budget = cfg.l0c_bytes // (cfg.bytes_c * (2 if dbc else 1))
                if _physical_c(cfg, cfg.min_m, cfg.min_n) > c_budget:
                    continue
                cand = _best(cfg, model, stat, dbc, stat is not os_ or dbc, dbc)
                if cand is not None and cand.wall < best.wall:
                    best = cand
    return L0TileResult(
        best.m, best.n, best.k, model.traffic(best.m, best.n, best.k, best.stat), best.wall,
        best.padded, best.stat, model.holds_a(best.m, best.n), best.dbc)


__all__ = ["L0TileConfig", "L0TileResult", "Stationarity", "choose_l0_tile"]
