"""Registry-wide invariants and the public `pl` surface."""
from __future__ import annotations

import inspect

import pytest

import pypto.language as pl
from pypto.ops.registry import BY_PUBLIC_NAME, Unit, all_ops

TIER_1_2_OPS = [
    "pl.add", "pl.col_expand_mul", "pl.create_tensor", "pl.exp", "pl.full", "pl.matmul",
    "pl.matmul_acc", "pl.mul", "pl.reshape", "pl.row_expand_div", "pl.row_expand_mul",
    "pl.row_expand_sub", "pl.row_max", "pl.row_sum", "pl.rsqrt", "pl.sqrt", "pl.sub", "pl.abs",
    "pl.arange", "pl.array.create", "pl.assemble", "pl.cast", "pl.col_expand",
    "pl.col_expand_add", "pl.col_expand_expdif", "pl.col_max", "pl.col_sum", "pl.concat",
    "pl.create_l1", "pl.create_tile", "pl.div", "pl.fillpad", "pl.gather", "pl.gather_row",
    "pl.load", "pl.log", "pl.max", "pl.maximum", "pl.min", "pl.minimum", "pl.mrgsort", "pl.neg",
    "pl.prefetch.async_prefetch", "pl.prefetch.make_context", "pl.read", "pl.recip",
    "pl.row_expand", "pl.set_validshape", "pl.slice", "pl.sort32", "pl.store",
    "pl.system.syncall", "pl.system.task_dummy", "pl.tensor.dim", "pl.tensor.read",
    "pl.tensor.scatter", "pl.tile.arange", "pl.tile.assemble", "pl.tile.create", "pl.tile.full",
    "pl.tile.gather", "pl.tile.get_block_idx", "pl.tile.load", "pl.tile.store",
    "pl.tile.transpose_view", "pl.transpose", "pl.write",
]

TIER_3_AND_CATALOG = [
    "pl.row_argmax", "pl.row_min", "pl.cmp", "pl.row_expand_add", "pl.tile.write",
    "pl.tensor.arange", "pl.tensor.gather", "pl.tensor.mrgsort", "pl.tensor.set_validshape",
    "pl.tensor.sort32", "pl.get_block_idx", "pl.cmps", "pl.sel", "pl.sels", "pl.part_add",
    "pl.part_mul", "pl.part_max", "pl.part_min", "pl.addc", "pl.subc", "pl.addsc", "pl.subsc",
    "pl.rem", "pl.rems", "pl.prelu", "pl.fillpad_expand", "pl.tile.fillpad_inplace",
    "pl.expand_clone", "pl.tile.gather_mask", "pl.tile.gather_compare", "pl.gatherb",
    "pl.mgather", "pl.scatter", "pl.tile.scatter", "pl.tile.scatter_mask", "pl.mscatter",
    "pl.scatter_update", "pl.paged_gather", "pl.reinterpret_view", "pl.tensor.view",
    "pl.tile.extract", "pl.tri", "pl.random", "pl.tile.random", "pl.tile.read",
    "pl.tensor.write", "pl.gemv", "pl.gemv_acc", "pl.gemv_bias", "pl.matmul_bias",
    "pl.tile.batch_matmul_acc", "pl.col_argmax", "pl.col_argmin", "pl.row_argmin",
    "pl.tile.cmp", "pl.tile.sort32", "pl.tile.mrgsort", "pl.lrelu", "pl.relu",
]


def _resolve(name: str):
    obj = pl
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("name", TIER_1_2_OPS + TIER_3_AND_CATALOG)
def test_public_name_is_exposed(name):
    assert _resolve(name) is not None


def test_every_op_has_impl_doc_and_unit():
    missing = []
    for name, op in all_ops().items():
        if op.impl is None or not op.doc.strip() or not isinstance(op.unit, Unit):
            missing.append(name)
    assert not missing, f"ops without impl/doc/unit: {missing}"


def test_writes_names_a_parameter():
    for name, op in all_ops().items():
        if op.writes is not None:
            assert op.writes in op.params, name


def test_public_names_are_unique_and_registered():
    ops = all_ops()
    for public, op in BY_PUBLIC_NAME.items():
        assert op in ops
        assert public in ops[op].names


def test_impl_accepts_every_parameter_positionally():
    # The interpreter passes evaluated arguments in signature order.
    for name, op in all_ops().items():
        params = [p for p in inspect.signature(op.impl).parameters.values()
                  if p.kind is not p.KEYWORD_ONLY or p.name != "ctx"]
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                      p.POSITIONAL_OR_KEYWORD)]
        has_var = any(p.kind is p.VAR_POSITIONAL for p in params)
        assert has_var or len(positional) >= len(op.params), name


def test_import_language_is_clean():
    import importlib

    importlib.reload(pl)
