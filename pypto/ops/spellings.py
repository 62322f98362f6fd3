"""Public spellings whose signature is not their op's type rule's.

One op has one type rule (`pypto.ops.registry`) and often several public names
(`pl.row_sum`, `pl.tensor.row_sum`, `pl.tile.row_sum`), and the real toolchain gives
each name its own wrapper with its own parameters: `pl.row_sum(input, tmp_tile=None)`,
`pl.tensor.row_sum(input)`, `pl.tile.row_sum(tile, tmp_tile)`. A kernel's call binds
its arguments to the signature of the name it calls, as Python binds a call of the real
wrapper (the real parser calls it): keyword names, order, defaults and `*` markers are
the real ones. `SPELLINGS` holds each public name whose signature differs from its
rule's, written as a parameter list in which an annotation names the rule parameter
that receives the value::

    "pl.tile.read": "(tile: src, indices: offset)"

A parameter with no annotation has the rule's name. `_` as the annotation marks a
parameter that is accepted and has no effect here (`span=`: pypto-lab takes every
call's location from its source; `pl.tile.transpose`'s `tmp_tile`: the real
compiler's lowered form only, the simulator transposes in numpy and needs no scratch).
Only the arguments a call gives reach the rule; a parameter the call leaves out takes
the rule's default, which means what the public default says (`pad_value=None` is
`PadValue.zero`, `atomic=None` is `AtomicType.None_`). Rule parameters a spelling does
not name (`pl.tile.matmul` has no `a_trans`) keep their defaults.

`tests/frontend/test_signatures.py` compares every public signature with the real
package's, read from its source by `tools/real_pypto/signatures.py`.
"""
from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Iterable
from typing import Any

from pypto.ir.options import AtomicType, PadValue, TensorLayout
from pypto.ir.types import MemorySpace

SPELLINGS: dict[str, str] = {}


def _spell(names: Iterable[str], text: str) -> None:
    for n in names:
        if n in SPELLINGS:
            raise ValueError(f"spelling of {n} given twice")
        SPELLINGS[n] = text


def _each(template: str, ops: Iterable[str]) -> list[str]:
    return [template.format(op) for op in ops]


# --- elementwise ------------------------------------------------------------------------

_UNARY = ("abs", "cos", "exp", "neg", "not_", "sin", "sqrt", "col_max", "col_min", "col_prod")
for _op in _UNARY:
    _spell((f"pl.{_op}", f"pl.tensor.{_op}"), "(input: x)")
    _spell((f"pl.tile.{_op}",), "(tile: x)")
_spell(("pl.relu", "pl.tile.relu"), "(tile: x)")
_spell(("pl.lrelu", "pl.tile.lrelu"), "(tile: x, slope)")
_spell(("pl.cast", "pl.tensor.cast"), "(input: x, target_type, mode='round')")
_spell(("pl.tile.cast",), "(tile: x, target_type, mode='round')")
# rsqrt / recip / log: the tensor option high_precision=; the tile form of rsqrt takes
# the scratch tile of the real high-precision lowering instead (no effect on values here:
# numpy computes in fp32 or better either way)
for _op in ("rsqrt", "recip", "log"):
    _spell((f"pl.{_op}", f"pl.tensor.{_op}"), "(input: x, high_precision=False)")
_spell(("pl.tile.rsqrt",), "(tile: x, tmp=None)")
_spell(("pl.tile.recip", "pl.tile.log"), "(tile: x, high_precision=False)")
_spell(("pl.tensor.xor", "pl.tensor.xors"), "(lhs, rhs)")
_spell(("pl.tile.xor", "pl.tile.xors"), "(lhs, rhs, tmp)")
_spell(_each("pl.tile.part_{}", ("add", "max", "min", "mul")), "(src0: lhs, src1: rhs)")

# --- reductions and broadcasts ------------------------------------------------------------

for _op in ("row_max", "row_min", "row_prod", "row_sum", "row_argmax", "row_argmin",
            "col_argmax", "col_argmin"):
    _spell((f"pl.{_op}",), "(input: x, tmp_tile=None)")
    _spell((f"pl.tensor.{_op}",), "(input: x)")
    _spell((f"pl.tile.{_op}",), "(tile: x, tmp_tile)")
_spell(("pl.col_sum",), "(input: x, tmp_tile=None)")
_spell(("pl.tensor.col_sum",), "(input: x)")
_spell(("pl.tile.col_sum",), "(tile: x, tmp_tile=None)")

_EXPAND = ("div", "expdif", "max", "min", "mul", "sub")
_spell(_each("pl.row_expand_{}", _EXPAND) + _each("pl.col_expand_{}", (*_EXPAND, "add")),
       "(lhs: x, rhs: vec)")
_spell(("pl.row_expand_add",), "(lhs: x, rhs: vec, tmp=None)")
_spell(_each("pl.tensor.row_expand_{}", (*_EXPAND, "add")), "(tensor: x, row_vec: vec)")
_spell(_each("pl.tensor.col_expand_{}", (*_EXPAND, "add")), "(tensor: x, col_vec: vec)")
_spell(_each("pl.tile.row_expand_{}", _EXPAND), "(tile: x, row_vec: vec)")
_spell(("pl.tile.row_expand_add",), "(tile: x, row_vec: vec, tmp=None)")
_spell(_each("pl.tile.col_expand_{}", (*_EXPAND, "add")), "(tile: x, col_vec: vec)")
_spell(("pl.row_expand",), "(lhs: target, rhs: row_vec)")
_spell(("pl.col_expand",), "(lhs: target, rhs: col_vec)")
_spell(("pl.tensor.col_expand",), "(tensor: target, col_vec)")

# --- views, shapes, element access ----------------------------------------------------------

for _space, _first in (("pl", "input"), ("pl.tensor", "tensor"), ("pl.tile", "tile")):
    _spell((f"{_space}.reshape",), f"({_first}: x, shape)")
    _spell((f"{_space}.set_validshape",), f"({_first}: x, valid_rows, valid_cols)")
_spell(("pl.transpose",), "(input: x, axis1, axis2)")
_spell(("pl.tensor.transpose",), "(tensor: x, axis1, axis2)")
_spell(("pl.tile.transpose",), "(tile: x, axis1, axis2, tmp_tile: _ = None)")
_spell(("pl.slice",), "(input: x, shape, offset, valid_shape=None, drop_dims=None, "
                      "pad_value=None, clamp=False)")
_spell(("pl.tensor.slice",), "(tensor: x, shape, offset, valid_shape=None, drop_dims=None, "
                             "pad_value=None, clamp=False)")
_spell(("pl.tile.slice",), "(tile: x, shape, offset, valid_shape=None, drop_dims=None, "
                           "pad_value=None)")
_spell(("pl.reinterpret_view", "pl.tensor.reinterpret_view", "pl.tile.reinterpret_view"),
       "(data: x, dtype, *, shape=None)")
_spell(("pl.dim", "pl.tensor.dim"), "(tensor: x, axis)")
_spell(("pl.tensor.read",), "(tensor: src, indices: offset)")
_spell(("pl.tile.read",), "(tile: src, indices: offset)")
_spell(("pl.tensor.write",), "(tensor: dst, indices: offset, value)")
_spell(("pl.tile.write",), "(tile: dst, indices: offset, value)")
_spell(("pl.fillpad",), "(value: x, pad_value=PadValue.zero)")
_spell(("pl.tensor.fillpad",), "(tensor: x, pad_value=PadValue.zero)")
_spell(("pl.tile.fillpad",), "(tile: x, pad_value=PadValue.zero)")
_spell(("pl.fillpad_expand",), "(value: x, shape, pad_value=PadValue.zero)")
_spell(("pl.tensor.fillpad_expand",), "(tensor: x, shape, pad_value=PadValue.zero)")
_spell(("pl.tile.fillpad_expand",), "(tile: x, shape, pad_value=PadValue.zero)")
_spell(("pl.tile.fillpad_inplace",), "(tile, pad_value=PadValue.zero)")
_spell(("pl.tile.transpose_view",), "(tile: tile_)")

# --- memory ---------------------------------------------------------------------------------

_spell(("pl.move", "pl.tile.move"), "(tile: tile_, target_memory, blayout=None, slayout=None)")
_spell(("pl.store", "pl.tile.store"),
       "(tile: tile_, offsets, output_tensor, shapes=None, *, atomic=AtomicType.None_)")
_spell(("pl.assemble", "pl.tensor.assemble"),
       "(target, source, offset, *, atomic=AtomicType.None_)")
_spell(("pl.tile.assemble",), "(target, source, offset)")
_spell(("pl.create_tensor", "pl.tensor.create", "pl.tensor.create_tensor"),
       "(shape, dtype, layout=TensorLayout.ND, manual_dep=False, init_value=None)")
_spell(("pl.create_tile", "pl.tile.create", "pl.tile.create_tile"),
       "(shape, dtype, target_memory=MemorySpace.Vec, transpose=None, *, flat_layout=None)")
_spell(("pl.tensor.gather_row",), "(acc: dst, src, dst_offset, src_offset, shapes, "
                                  "transpose=False, *, valid_shape=None)")
_spell(("pl.tile.extract",), "(src, index_row, index_col, shape, *, target_memory)")
_spell(("pl.tile.gather_compare",),
       "(src, kvalue, tmp, *, cmp_mode='eq', offset=0, out_cols, count_dtype=None)")
_spell(("pl.tensor.mrgsort",),
       "(src0, src1=None, src2=None, src3=None, *, exhausted=False, block_len=None)")
_spell(("pl.tile.mrgsort",),
       "(src0, src1=None, src2=None, src3=None, tmp=None, exhausted=False, *, block_len=None)")
# the real unified wrapper forwards everything to the tensor / tile form
_spell(("pl.scatter_update", "pl.tensor.scatter_update", "pl.tile.scatter_update"),
       "(input, *args, **kwargs)")
_spell(("pl.tile.matmul",), "(lhs, rhs)")
_spell(("pl.tile.matmul_acc",), "(acc, lhs, rhs, init_cond=None)")
_spell(("pl.prefetch.wait",), "(event, session_handle: session)")

# --- cross-core pipes and system ops: the real wrappers also take the IR span -------------

# aiv_shard / aic_gather: `split` is the enclosing pl.split_aiv loop's (or, outlined, given
# as split=); the parser supplies it, as the real parser does, so the signature has no split
_spell(("pl.aiv_shard", "pl.tile.aiv_shard", "pl.aic_gather", "pl.tile.aic_gather"),
       "(x, span: _ = None)")
_PIPE_INIT = ("(c2v_consumer_buf=0, v2c_consumer_buf=0, *, dir_mask, slot_size, slot_num=None, "
              "local_slot_num=None, id=None, span: _ = None)")
_spell(("pl.aic_initialize_pipe", "pl.system.aic_initialize_pipe", "pl.aiv_initialize_pipe",
        "pl.system.aiv_initialize_pipe"), _PIPE_INIT)
_spell(("pl.import_peer_buffer", "pl.system.import_peer_buffer"),
       "(*, name, peer_func, span: _ = None)")
_spell(("pl.reserve_buffer", "pl.system.reserve_buffer"),
       "(*, name, size, base=AUTO, span: _ = None)")
for _space in ("pl", "pl.system", "pl.tile"):
    _spell((f"{_space}.tpop_from_aic",),
           "(*, shape=None, dtype=None, split=0, lane_stride=None, id=None, span: _ = None)")
    _spell((f"{_space}.tpop_from_aiv",),
           "(*, shape=None, dtype=None, split=0, id=None, span: _ = None)")
    _spell((f"{_space}.tpush_to_aic",), "(tile, *, split, id=None, span: _ = None)")
    _spell((f"{_space}.tpush_to_aiv",),
           "(tile, *, split, lane_stride=None, id=None, span: _ = None)")
for _space in ("pl", "pl.system"):
    for _op in ("tfree_to_aic", "tfree_to_aiv"):
        _spell((f"{_space}.{_op}",), "(tile, span: _ = None, *, split=None, id=None)")
for _op in ("available_aiv_count", "available_cluster_count", "bar_all", "bar_m", "bar_v",
            "fence", "task_invalid"):
    _spell((f"pl.system.{_op}",), "(*, span: _ = None)")
_spell(("pl.system.cacheinvalid",), "(tensor=None, shapes=None, offsets=None, *, span: _ = None)")
_spell(("pl.system.set_ffts",), "(workspace, *, span: _ = None)")
_spell(("pl.system.sync_src", "pl.system.sync_dst"),
       "(*, set_pipe, wait_pipe, event_id, span: _ = None)")
_spell(("pl.system.sync_set",),
       "(event_id, *, pipe, ffts_mode=None, core_type=None, span: _ = None)")
_spell(("pl.system.sync_wait",), "(event_id, *, pipe, core_type=None, span: _ = None)")
_spell(("pl.system.syncall",),
       "(*, core_type='mix', mode='hard', gm_workspace=None, used_cores=None, span: _ = None)")
_spell(("pl.system.task_dummy",), "(*, deps)")


# --- reading a spelling ------------------------------------------------------------------


class Spelling:
    """One public name's signature and where each of its parameters goes in the rule."""

    def __init__(self, public: str, signature: inspect.Signature, to_rule: dict[str, str | None]):
        self.public = public
        self.signature = signature
        self.to_rule = to_rule  # public parameter -> rule parameter (None: no effect)
        self.from_rule = {r: p for p, r in to_rule.items() if r is not None}

    def rule_arguments(self, bound: inspect.BoundArguments) -> tuple[list, dict]:
        """The rule's (args, kwargs) for a call bound to this spelling: the arguments it
        gave, under the rule's names; `*args` / `**kwargs` pass through as given."""
        args: list = []
        kwargs: dict = {}
        params = self.signature.parameters
        star = any(q.kind is q.VAR_POSITIONAL for q in params.values())
        for name, value in bound.arguments.items():
            kind = params[name].kind
            if kind is inspect.Parameter.VAR_POSITIONAL:
                args.extend(value)
            elif kind is inspect.Parameter.VAR_KEYWORD:
                kwargs.update(value)
            elif self.to_rule[name] is None:
                continue
            elif star and kind is not inspect.Parameter.KEYWORD_ONLY:
                args.append(value)  # the parameters before *args stay positional
            else:
                kwargs[self.to_rule[name]] = value
        return args, kwargs

    def index_of(self, rule_param: str) -> int | None:
        """Position of the parameter receiving `rule_param` (for carets on an argument)."""
        public = self.from_rule.get(rule_param)
        if public is None:
            return None
        names = list(self.signature.parameters)
        return names.index(public)


def identity(public: str, rule_signature: inspect.Signature) -> Spelling:
    return Spelling(public, rule_signature, {n: n for n in rule_signature.parameters})


@functools.cache
def parse(public: str, rule_params: tuple[str, ...]) -> Spelling:
    """The spelling `SPELLINGS[public]` declares, checked against the rule's parameters."""
    text = SPELLINGS[public]
    fn = ast.parse(f"def f{text}: pass").body[0]
    assert isinstance(fn, ast.FunctionDef)
    a = fn.args
    kinds = inspect.Parameter
    ns = _defaults_namespace()
    params: list[inspect.Parameter] = []
    to_rule: dict[str, str | None] = {}

    def add(arg: ast.arg, kind: Any, default: ast.expr | None) -> None:
        target = arg.annotation.id if isinstance(arg.annotation, ast.Name) else arg.arg
        if kind in (kinds.VAR_POSITIONAL, kinds.VAR_KEYWORD):
            target = arg.arg
        elif target == "_":
            to_rule[arg.arg] = None
        elif target not in rule_params:
            raise ValueError(f"spelling of {public}: {arg.arg} -> {target}, which the rule "
                             f"does not have (it has {', '.join(rule_params)})")
        else:
            to_rule[arg.arg] = target
        value = kinds.empty if default is None else \
            eval(compile(ast.Expression(default), public, "eval"), {"__builtins__": {}}, ns)
        params.append(inspect.Parameter(arg.arg, kind, default=value))

    positional = [*a.posonlyargs, *a.args]
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for i, arg in enumerate(positional):
        add(arg, kinds.POSITIONAL_ONLY if i < len(a.posonlyargs) else kinds.POSITIONAL_OR_KEYWORD,
            defaults[i])
    if a.vararg is not None:
        add(a.vararg, kinds.VAR_POSITIONAL, None)
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        add(arg, kinds.KEYWORD_ONLY, d)
    if a.kwarg is not None:
        add(a.kwarg, kinds.VAR_KEYWORD, None)
    return Spelling(public, inspect.Signature(params), to_rule)


def _defaults_namespace() -> dict[str, Any]:
    # AUTO: pl.system.AUTO, the "place it for me" base of reserve_buffer
    return {"AtomicType": AtomicType, "PadValue": PadValue, "MemorySpace": MemorySpace,
            "TensorLayout": TensorLayout, "AUTO": -1}
