"""The batching rule table (issue 30): one rule per op family, in the module named after
the family, and every op with a batch fact resolving to exactly one of them."""
from __future__ import annotations

import pkgutil

import pytest

from pypto.ir import dtypes
from pypto.ir.nodes import Attr, Call, Var
from pypto.ir.types import ScalarType, TileType
from pypto.ops.facts import Family
from pypto.ops.registry import all_ops, get
from pypto.sim.batch import rules


def test_one_rule_per_family_in_the_module_named_after_it():
    assert set(rules.RULES) == set(Family)
    assert len(rules.MODULES) == len(Family)
    for m in rules.MODULES:
        assert m.__name__.rsplit(".", 1)[1] == m.RULE.family.value, m.__name__
    # the package holds the families' modules and what they share, nothing else
    names = {i.name for i in pkgutil.iter_modules(rules.__path__)}
    assert names == {f.value for f in Family} | {"rule", "trailing"}


def test_every_batchable_op_resolves_to_exactly_one_rule():
    batchable = {n: op for n, op in all_ops().items() if op.batch is not None}
    assert len(batchable) > 60  # (windows, elementwise, reductions, scalars, ...)
    for name, op in all_ops().items():
        claiming = [m for m in rules.MODULES if op.batch is not None and
                    m.RULE.family is op.batch.family]
        if op.batch is None:
            assert claiming == [] and rules.of(op) is None, name
            continue
        assert len(claiming) == 1, name
        assert rules.of(op) is claiming[0].RULE, name
    # the ops the issue names, in their families' modules
    where = {n: rules.of(get(n)).family.value for n in  # type: ignore[union-attr]
             ("row_max", "add", "row_expand", "matmul", "slice", "store", "get_block_idx",
              "read", "scalar.lt", "reshape", "set_validshape", "max", "gather")}
    assert where == {"row_max": "reduce", "add": "ufunc", "row_expand": "expand",
                     "matmul": "matmul", "slice": "window_read", "store": "window_write",
                     "get_block_idx": "index_scalar", "read": "index_scalar",
                     "scalar.lt": "compare", "reshape": "reshape",
                     "set_validshape": "tag_only", "max": "per_block", "gather": "form"}
    # an op's batchable fact is its family's (the impl acts on trailing axes)
    assert {n for n, op in batchable.items() if op.batchable} == \
        {n for n, op in batchable.items() if op.batch.family in  # type: ignore[union-attr]
         (Family.UFUNC, Family.REDUCE, Family.EXPAND, Family.MATMUL)}


def _int(name: str) -> Var:
    return Var(name, ScalarType(dtypes.INT32))


def _tile(name: str) -> Var:
    return Var(name, TileType((8, 16), dtypes.FP32))


def _call(op: str, args: tuple, t) -> Call:
    return Call(op, args, type=t)


@pytest.mark.parametrize("op, args, t, family", [
    # a cast of a tile is elementwise; of an integer scalar (a gathered index) per block
    ("cast", (_tile("x"), Attr(dtypes.FP32)), TileType((8, 16), dtypes.FP32), Family.UFUNC),
    ("cast", (_int("i"), Attr(dtypes.INT32)), ScalarType(dtypes.INT32), Family.PER_BLOCK),
    # a comparison of integers is one bool per block; of floats it has no rule
    ("scalar.lt", (_int("i"), _int("j")), ScalarType(dtypes.BOOL), Family.COMPARE),
    ("scalar.lt", (Var("a", ScalarType(dtypes.FP32)), Var("b", ScalarType(dtypes.FP32))),
     ScalarType(dtypes.BOOL), None),
    # pl.max of integer scalars per block; a shift of integers (no family) per block too
    ("max", (_int("i"), _int("j")), ScalarType(dtypes.INT32), Family.PER_BLOCK),
    ("scalar.lshift", (_int("i"), _int("j")), ScalarType(dtypes.INT32), Family.PER_BLOCK),
    ("scalar.add", (_int("i"), _int("j")), ScalarType(dtypes.INT32), Family.INDEX_SCALAR),
    ("row_max", (_tile("x"),), TileType((8, 1), dtypes.FP32), Family.REDUCE),
    # an op without a family and not on integer scalars: no rule (block by block)
    ("prelu", (_tile("x"), _tile("s"), _tile("t")), TileType((8, 16), dtypes.FP32), None),
])
def test_a_call_resolves_to_its_rule(op, args, t, family):
    rule = rules.resolve(get(op), _call(op, args, t))
    assert (rule.family if rule is not None else None) is family
