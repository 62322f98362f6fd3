"""The simulator's one source writer (`pypto.sim.engine.source`): generated functions
are named `<pypto:KIND:NAME#N>` with their lines in `linecache` (a traceback shows the
generated line), `SimConfig.source_dump` / PYPTO_SIM_SOURCE_DUMP write them to a
directory, and `SimConfig.source` / PYPTO_SIM_SOURCE choose the generated source or the
plain closures (`test_op_closures` runs every equivalence kernel both ways)."""
from __future__ import annotations

import gc
import linecache
import traceback

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import ConfigError
from pypto.sim import SimConfig
from pypto.sim.checks.divide import DivisionByZeroError
from pypto.sim.config import Settings
from pypto.sim.engine.source import keep_lines, run_source
from pypto.sim.entry import run_compiled


@pl.jit
def halve(x: pl.Tensor[[4], pl.INT32], y: pl.Out[pl.Tensor[[4], pl.INT32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="halve"):
        for i in pl.range(4):
            d = pl.read(x, [i])
            pl.write(y, [i], pl.cast(100 // d, pl.INT32))
    return y


@pl.jit
def shifted(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    for r in pl.parallel(0, 64, 16):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            y[r:r + 16, :] = pl.add(x[r:r + 16, :], 1.0)
    return y


def _frames(exc: BaseException) -> list[traceback.FrameSummary]:
    return [f for f in traceback.extract_tb(exc.__traceback__)
            if f.filename.startswith("<pypto:")]


def _halve_zero(config: SimConfig) -> DivisionByZeroError:
    """The error of halving by a zero, raised below `run_compiled` (a kernel's call
    drops the simulator's frames from a user error's traceback)."""
    x = np.array([5, 4, 0, 2], np.int32)
    with pytest.raises(DivisionByZeroError) as e:
        run_compiled(halve.compile(), [x, np.zeros(4, np.int32)], {}, config)
    return e.value


def test_a_traceback_through_generated_code_shows_its_lines():
    err = _halve_zero(SimConfig(seed=11))
    frames = [(f.filename.split(":")[1], f.line) for f in _frames(err)]
    # the region's loop, written out, calls the write; the write's value is an op call
    # (cast) whose operand is one (the division, which finds the zero)
    assert frames == [("statements", "k1(env)"), ("op-call", "a0 = x0(env)"),
                      ("op-call", "found(env[FRAME], at)")]
    assert _frames(err)[0].filename.startswith("<pypto:statements:halve_halve#")
    text = "".join(traceback.format_exception(err))
    assert "    found(env[FRAME], at)\n" in text


def test_plain_closures_have_no_generated_frames():
    err = _halve_zero(SimConfig(source="plain"))
    assert _frames(err) == []
    assert str(err) == str(_halve_zero(SimConfig(seed=11)))


def test_dump_writes_each_generated_function(tmp_path):
    x = np.ones((64, 64), np.float32)
    y = np.zeros_like(x)
    shifted(x, y, config=SimConfig(source_dump=tmp_path / "src"))
    assert np.array_equal(y, x + 1)
    h = np.zeros(4, np.int32)
    halve(np.array([1, 2, 4, 5], np.int32), h, config=SimConfig(source_dump=str(tmp_path)))
    assert h.tolist() == [100, 50, 25, 20]
    batched = sorted(p.name.rsplit(".", 2)[0] for p in (tmp_path / "src").iterdir())
    # (the region's body and call; the orchestration's `r + 16`, an op call)
    assert batched == ["batch-body.shifted_rows", "batch-call.shifted_rows",
                       "op-call.expr_const"]
    body = next((tmp_path / "src").glob("batch-body.*")).read_text()
    assert body.startswith("# <pypto:batch-body:shifted_rows#") and "def body(env):" in body
    kinds = {p.name.split(".")[0] for p in tmp_path.glob("*.py")}
    assert kinds == {"statements", "op-call"}
    stmts = next(tmp_path.glob("statements.*")).read_text()
    assert "for i0 in rng0:" in stmts


def test_the_environment_chooses_the_mode_and_the_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_SIM_SOURCE", "Plain")
    monkeypatch.setenv("PYPTO_SIM_SOURCE_DUMP", str(tmp_path))
    s = Settings.of(SimConfig(), None)
    assert (s.source, s.source_dump) == ("plain", str(tmp_path))
    s = Settings.of(SimConfig(source="generated", source_dump="elsewhere"), None)
    assert (s.source, s.source_dump) == ("generated", "elsewhere")
    h = np.zeros(4, np.int32)
    halve(np.array([1, 2, 4, 5], np.int32), h, config=SimConfig(seed=12))
    assert h.tolist() == [100, 50, 25, 20]
    assert list(tmp_path.iterdir()) == []  # (plain: nothing generated, nothing written)


def test_a_bad_source_mode_is_refused(monkeypatch):
    monkeypatch.setenv("PYPTO_SIM_SOURCE", "dump")
    with pytest.raises(ConfigError, match=r"PYPTO_SIM_SOURCE='dump' is not a source mode; "
                                          r"choose from generated, plain"):
        Settings.of(SimConfig(), None)
    with pytest.raises(ConfigError, match=r"SimConfig.source must be one of 'generated', "
                                          r"'plain', got 'fast' \(str\)"):
        SimConfig(source="fast")
    with pytest.raises(ConfigError, match=r"SimConfig.source_dump must be a directory"):
        SimConfig(source_dump=3)


def test_lines_live_as_long_as_the_function():
    ns: dict = {}
    name = run_source("test", "twice", "def twice(v):\n    return v * 2\n", ns)
    assert name.startswith("<pypto:test:twice#")
    assert linecache.getline(name, 2) == "    return v * 2\n"
    keep_lines(ns["twice"], name)
    assert ns.pop("twice")(4) == 8
    gc.collect()
    assert linecache.getline(name, 2) == ""
