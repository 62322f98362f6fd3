"""ChooseL0Tile (pypto/pypto_core/l0_tile_chooser.py): the tiles the real compiler's
chooser is pinned to by its own runtime tests (a2a3: 64 KiB L0A/L0B, 128 KiB L0C), and
the legality rules."""
from __future__ import annotations

import pytest

from pypto.pypto_core.l0_tile_chooser import L0TileConfig, Stationarity, choose_l0_tile
from pypto.pypto_core.passes import l0_tile_chooser

OS, AS, BS = Stationarity.OutputStationary, Stationarity.AStationary, Stationarity.BStationary


def a2a3(m: int, k: int, n: int, nbytes: int, dbc: bool) -> L0TileConfig:
    return L0TileConfig(M=m, K=k, N=n, l0a_bytes=64 * 1024, l0b_bytes=64 * 1024,
                        l0c_bytes=128 * 1024, bytes_a=nbytes, bytes_b=nbytes, bytes_c=4,
                        allow_a_stationary=True, allow_b_stationary=True,
                        allow_double_buffer_c=dbc, allow_k_boundary=True)


@pytest.mark.parametrize("m,k,n,l0_k", [(16, 128, 128, 64), (64, 192, 128, 64),
                                          (64, 384, 256, 32), (128, 384, 64, 64)])
@pytest.mark.parametrize("dbc", [False, True])
def test_fp32_k_only_splits(m, k, n, l0_k, dbc):
    r = choose_l0_tile(a2a3(m, k, n, 4, dbc))
    assert (r.m, r.n, r.k) == (m, n, l0_k)
    assert r.stationarity is OS and not r.double_buffer_c


@pytest.mark.parametrize("m,k,n,dbc,tile,stat", [
    (256, 128, 544, False, (256, 128, 128), AS),
    (48, 352, 96, True, (48, 32, 352), AS),
    (192, 64, 512, False, (64, 512, 64), BS),
    (64, 80, 256, True, (32, 256, 80), BS),
])
def test_operand_stationary_schedules(m, k, n, dbc, tile, stat):
    r = choose_l0_tile(a2a3(m, k, n, 2, dbc))
    assert (r.m, r.n, r.k) == tile and r.stationarity is stat and r.double_buffer_c == dbc


@pytest.mark.parametrize("m,n,tile,count,stat", [
    (160, 160, (80, 128), 4, OS), (144, 144, (48, 128), 6, OS),
    (256, 256, (32, 256), 8, BS), (448, 448, (112, 128), 16, OS), (384, 256, (32, 256), 12, BS),
])
def test_fp32_double_buffered_l0c_grids(m, n, tile, count, stat):
    r = choose_l0_tile(a2a3(m, 64, n, 4, True))
    assert (r.m, r.n, r.k) == (*tile, 64) and r.stationarity is stat and r.double_buffer_c
    assert -(-m // r.m) * -(-n // r.n) == count


@pytest.mark.parametrize("m,n,tile,holds_a", [(16, 256, (16, 128), True),
                                              (256, 16, (128, 16), False)])
def test_a_singleton_outer_axis_still_double_buffers(m, n, tile, holds_a):
    r = choose_l0_tile(a2a3(m, 64, n, 4, True))
    assert (r.m, r.n, r.k) == (*tile, 64) and r.os_holds_a is holds_a and r.double_buffer_c


def test_a_tile_that_fits_is_left_whole_and_int32_rows_pad_to_32():
    r = choose_l0_tile(a2a3(64, 64, 64, 2, True))
    assert (r.m, r.n, r.k) == (64, 64, 64) and r.stationarity is OS and not r.double_buffer_c
    cfg = a2a3(16, 128, 2048, 1, False)
    cfg.bytes_c, cfg.l0c_align_m = 4, 32
    r = choose_l0_tile(cfg)
    assert 32 * r.n * 4 <= 128 * 1024 and r.m == 16  # M=16 charged as 32 physical rows


def test_bad_configurations_are_value_errors():
    with pytest.raises(ValueError, match="must all be positive"):
        choose_l0_tile(L0TileConfig(M=0, N=16, K=16, l0a_bytes=1, l0b_bytes=1, l0c_bytes=1))
    with pytest.raises(ValueError, match="below the cube minimum"):
        choose_l0_tile(a2a3(8, 64, 64, 2, False))


def test_the_real_module_name_answers():
    assert l0_tile_chooser.choose_l0_tile is choose_l0_tile
    assert l0_tile_chooser.Stationarity.BStationary is BS
