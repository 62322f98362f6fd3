"""The precision ladder and drift map (issue 34, item 4): the workbench draws the core's
shadow comparison - every intermediate's rel-L2 error, the first divergence marked - and
`%%pypto --precision` asks for it."""
from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
import pypto_lab
from pypto.golden import TensorSpec, run_jit
from pypto_lab.args import ArgsError, MagicArgs
from pypto_lab.figures.typed import decode
from pypto_lab.runs import from_run_result

R, C = 64, 64


@pl.jit
def bf16_round_trip(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[R, C], pl.FP32]]):
    for r in pl.parallel(0, R, 32):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.cast(x[r:r + 32, :], pl.BF16)  # narrow
            y[r:r + 32, :] = pl.cast(pl.exp(t), pl.FP32)
    return y


def _run(shadow: bool):
    specs = [TensorSpec("x", [R, C], np.float32,
                        init_value=lambda: np.linspace(-2, 2, R * C, dtype=np.float32
                                                       ).reshape(R, C)),
             TensorSpec("y", [R, C], np.float32, is_output=True)]

    def golden(v):
        v["y"][:] = np.exp(v["x"])

    res = run_jit(bf16_round_trip, specs, golden, rtol=1e-3, atol=1e-3, verbose=False,
                  runtime_cfg={"sim_shadow": "fp64"} if shadow else None)
    return res, from_run_result(res, "bf16_round_trip", "a2a3sim")


def test_ladder_draws_every_stage_and_marks_the_first_divergence():
    res, run = _run(shadow=True)
    report = res.shadow
    view = pypto_lab.precision(run)
    ladder, drift = [p for p in view.parts() if p.has_figure()]
    errors = next(t for t in ladder.spec["data"] if t["name"].startswith("rel-L2"))
    ys = np.asarray(decode(errors["y"]), dtype=float)
    # exact stages sit on the axis floor; the others at their error
    for st, y in zip(report.stages, ys):
        assert y == pytest.approx(st.rel_l2) if st.rel_l2 > 0 else y < report.floor
    assert len(ys) == len(report.stages) == 4
    notes = [a["text"] for a in ladder.spec["layout"]["annotations"]]
    assert any("first divergence" in n and "cast→BF16" in n for n in notes)
    # the drift map is the first divergence's worst value, kernel - shadow
    st = report.first
    z = np.asarray(decode(drift.spec["data"][0]["z"]), dtype=float)
    expect = (st.worst.kernel.astype(np.float64) - st.worst.shadow).reshape(z.shape)
    assert np.allclose(z, expect)
    assert "through" in drift.spec["layout"]["title"]["text"]
    assert f"first divergence: {st.site.where()}" in view.text()


def test_a_stage_is_chosen_by_its_number_and_a_wrong_one_is_named():
    res, run = _run(shadow=True)
    last = res.shadow.stages[-1].site.number
    view = pypto_lab.precision(run, stage=last)
    drift = [p for p in view.parts() if p.has_figure()][1]
    assert f"[{last}]" in drift.spec["layout"]["title"]["text"]
    with pytest.raises(ValueError, match="no stage 99 in the precision shadow"):
        pypto_lab.precision(run, stage=99)


def test_a_run_without_the_shadow_says_how_to_get_it():
    _, run = _run(shadow=False)
    with pytest.raises(ValueError, match="--precision"):
        pypto_lab.precision(run)


class _NS:
    def __init__(self, **kw):
        self.__dict__.update(dict(show=None, run=None, kernel=None, platform=None, seed=0,
                                  rtol=1e-5, atol=1e-5, dump_args=0, checks=None,
                                  precision=False), **kw)


def test_the_magic_flag_asks_for_the_shadow_and_needs_a_run():
    args = MagicArgs.from_namespace(_NS(precision=True, run=["specs", "golden"]))
    assert "precision" in args.show
    with pytest.raises(ArgsError, match="precision needs a run"):
        MagicArgs.from_namespace(_NS(precision=True))


CELL = '''
import numpy as np
import pypto.language as pl
from pypto.golden import TensorSpec

@pl.jit
def half_exp(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        h = pl.cast(x[0:64, 0:64], pl.FP16)
        y[0:64, 0:64] = pl.cast(pl.exp(h), pl.FP32)
    return y

specs = [TensorSpec("x", [64, 64], np.float32,
                    init_value=lambda: np.linspace(-3, 3, 4096, dtype=np.float32).reshape(64, 64)),
         TensorSpec("y", [64, 64], np.float32, is_output=True)]

def golden(v):
    v["y"][:] = np.exp(v["x"])
'''


def test_a_precision_cell_runs_the_shadow_and_shows_the_ladder(tmp_path, monkeypatch):
    from pypto_lab.session import run_cell

    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    result = run_cell(CELL, MagicArgs(specs="specs", golden="golden", show=("precision",),
                                      rtol=1e-3, atol=1e-3), {}, number=7)
    run = result.kernels[-1].run
    assert run.shadow is not None and run.shadow.first.site.dtype.name == "FP16"
    # the cell's own line of the cast, as the notebook shows it (the %%pypto line is 1)
    cast_line = 1 + next(i for i, ln in enumerate(CELL.splitlines(), 1) if "h = pl.cast" in ln)
    assert run.shadow.first.site.span.line == cast_line
    titles = [v.title for v in result.views]
    assert "precision half_exp" in titles


def test_the_heatmap_blames_the_first_divergence_not_the_store():
    res, run = _run(shadow=True)
    view = pypto_lab.heatmap(run)
    first = res.shadow.first
    assert f"the values first drift at {first.site.where()}" in view.text()
    assert "first drift at" in view.spec["layout"]["title"]["text"]
    _, plain = _run(shadow=False)
    assert "first drift" not in pypto_lab.heatmap(plain).text()
