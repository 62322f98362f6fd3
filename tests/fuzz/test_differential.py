"""A small slice of the differential fuzzer (issue 16, item 10) in every test run:
random valid kernels against their independent numpy models, batched against block by
block, several layouts, four threads. `python tools/fuzz_report.py --differential N`
runs more (docs/reliability.md states the offline count)."""
from __future__ import annotations

import dataclasses

import differential
import diffgen
import numpy as np
import pytest

from pypto.ops import registry


def test_random_kernels_match_their_models():
    rep = differential.run(12, seed=1600)
    assert rep.mismatches == []
    assert rep.calls == 12 * 12
    assert rep.batched_calls >= 24  # the batched path is exercised, not only block by block


def test_recipes_cover_every_form_and_op_kind():
    recipes = [diffgen.recipe(s) for s in range(200)]
    assert {r.form for r in recipes} == {"nest", "rnest", "dyn", "spmd", "acc"}
    assert {st.kind for r in recipes for st in r.steps} == {"unary", "binary", "scalar",
                                                           "row", "col"}
    assert diffgen.recipe(7).source() == diffgen.recipe(7).source()  # seeded


def test_typed_recipes_cover_every_dtype_and_integer_tails():
    recipes = [diffgen.recipe(s) for s in range(300)]
    assert {r.dtype for r in recipes} == {"FP32", *diffgen.TYPED}
    assert {r.form for r in recipes if r.dtype != "FP32"} == {"nest", "rnest", "spmd"}
    tails = {r.dtype for r in recipes if r.tail}
    assert {"INT8", "INT16", "INT32", "INT64", "UINT8"} <= tails
    literals = [st for r in recipes if r.dtype in ("FP16", "BF16") for st in r.steps
                if st.kind == "scalar" and st.const != "s"]
    assert {st.name for st in literals} == {"add", "sub", "mul", "div", "maximum", "minimum"}
    src = next(r for r in recipes if r.dtype == "INT8" and r.tail).source()
    assert "valid_shape=[rows, TN]" in src and "pl.INT8" in src


def test_typed_kernels_match_their_rounding_models():
    seeds = [s for s in range(2000, 2200) if diffgen.recipe(s).dtype != "FP32"][:8]
    rep = differential.Report()
    for s in seeds:
        rep.add(differential.run(1, seed=s))
    assert rep.kernels == 8 and rep.mismatches == []


def test_the_old_scalar_rule_is_caught(monkeypatch):
    """Issue 31, item 3, as the fuzzer sees it: the FP32 result of a float literal on an
    FP16 / BF16 tile (the rule before) differs from the per-op-rounding model."""
    from pypto.ir import dtypes
    from pypto.ops import elementwise
    real = elementwise._tensor_scalar_dtype
    monkeypatch.setattr(elementwise, "_tensor_scalar_dtype", lambda a, rhs: dtypes.FP32
                        if a.dtype in (dtypes.FP16, dtypes.BF16) else real(a, rhs))
    seeds = [s for s in range(400) if diffgen.recipe(s).dtype in ("FP16", "BF16") and any(
        st.kind == "scalar" and st.name in ("add", "mul") for st in diffgen.recipe(s).steps)]
    rep = differential.Report()
    for s in seeds[:6]:
        rep.add(differential.run(1, seed=s))
    assert rep.mismatches, seeds[:6]


def test_a_wrong_op_is_caught(monkeypatch):
    """The comparison is not vacuous: an op whose impl is off by 1e-3 shows up."""
    op = registry.REGISTRY["row_max"]
    monkeypatch.setitem(registry.REGISTRY, "row_max", dataclasses.replace(
        op, impl=lambda x, *_: np.max(x, axis=-1, keepdims=True) + np.float32(1e-3),
        ufunc=None))
    seeds = [s for s in range(100) if diffgen.recipe(s).dtype == "FP32" and any(
        st.reduce == "row_max" for st in diffgen.recipe(s).steps)][:3]
    rep = differential.Report()
    for s in seeds:
        rep.add(differential.run(1, seed=s))
    assert rep.mismatches, seeds
    assert "the model says" in rep.mismatches[0]


def test_a_wrong_model_is_caught(monkeypatch):
    """And the other way round: the model is what the outputs are compared with - a model
    of pl.mul off by one part in 10^3 disagrees with the simulator."""
    monkeypatch.setitem(diffgen._BINARY, "mul", (diffgen._BINARY["mul"][0],
                                                  lambda x, y: x * y * np.float32(1.001)))
    seeds = [s for s in range(100) if diffgen.recipe(s).dtype == "FP32" and any(
        st.kind == "binary" and st.name == "mul" for st in diffgen.recipe(s).steps)][:3]
    rep = differential.Report()
    for s in seeds:
        rep.add(differential.run(1, seed=s))
    assert len(seeds) == 3 and rep.mismatches, seeds
    assert {m.split(" ")[1] for m in rep.mismatches} <= {str(s) for s in seeds}
    assert "the model says" in rep.mismatches[0]


@pytest.mark.parametrize("layout", differential.LAYOUTS)
def test_layouts_hold_the_same_values(layout):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    v = differential._laid_out(a, layout)
    np.testing.assert_array_equal(v, a)
    assert v.flags.c_contiguous == (layout == "C")
