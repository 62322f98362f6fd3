"""Op facts live on the registry entries, they are true, and only `pypto.ops` knows op names.

The passes and the simulator ask an op's entry what it is (a view, a window, a matmul,
a ufunc, batchable, a role) instead of comparing its name: a module outside
`pypto/ops` that compares `call.op` with an op name, looks it up in a table of op names
or fetches an entry by a literal name is a second copy of op knowledge, and fails here.
The facts the simulator relies on for speed (`ufunc`, `batchable`) are checked against
the impls themselves, bit for bit.
"""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from pypto.ir import dtypes
from pypto.ops.facts import Family, TagRule, View
from pypto.ops.registry import Unit, all_ops

ROOT = Path(__file__).resolve().parents[2] / "pypto"
OP_NAMES = frozenset(all_ops())


def _names_ops(node: ast.AST, tables: set) -> bool:
    """Does `node` spell one or more op names (a literal, a collection of them, or a name
    bound to such a collection in this module)?"""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in OP_NAMES
    if isinstance(node, ast.Name):
        return node.id in tables
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_ops(e, tables) for e in node.elts)
    if isinstance(node, ast.Dict):
        return any(k is not None and _names_ops(k, tables) for k in node.keys)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id in ("frozenset", "set", "tuple", "dict"):
        return any(_names_ops(a, tables) for a in node.args)
    return False


def _is_op_attr(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "op"


def op_name_checks(source: str) -> list[str]:
    """The places in `source` that decide something by an op's name."""
    tree = ast.parse(source)
    tables: set = set()
    for n in ast.walk(tree):
        targets = n.targets if isinstance(n, ast.Assign) else \
            [n.target] if isinstance(n, ast.AnnAssign) and n.value is not None else []
        value = getattr(n, "value", None)
        if targets and value is not None and not isinstance(value, ast.Constant) and \
                _names_ops(value, set()):
            tables.update(t.id for t in targets if isinstance(t, ast.Name))
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Compare):
            sides = [n.left, *n.comparators]
            if any(_is_op_attr(s) for s in sides) and any(_names_ops(s, tables) for s in sides):
                found.append(f"{n.lineno}: compares .op with op names")
        elif isinstance(n, ast.Subscript) and _is_op_attr(n.slice) and \
                isinstance(n.value, ast.Name) and n.value.id in tables:
            found.append(f"{n.lineno}: looks .op up in the op-name table {n.value.id}")
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                n.func.attr == "get" and isinstance(n.func.value, ast.Name) and \
                n.func.value.id in tables and any(_is_op_attr(a) for a in n.args):
            found.append(f"{n.lineno}: looks .op up in the op-name table {n.func.value.id}")
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "get" \
                and n.args and isinstance(n.args[0], ast.Constant) and n.args[0].value in OP_NAMES:
            found.append(f"{n.lineno}: fetches the registry entry of {n.args[0].value!r}")
    return found


def test_the_checker_finds_op_name_checks():
    src = '''
_VIEWS = {"reshape", "set_validshape"}
def f(e, n):
    if e.op == "slice" or n.call.op in ("load", "store"):
        pass
    if e.op in _VIEWS or _VIEWS.get(e.op) or _TABLE[e.op]:
        pass
    return get("create_tensor").params
_TABLE = {"matmul": (0, 1)}
'''
    assert len(op_name_checks(src)) == 6
    # building a call of an op by name, or an unrelated `.op` (a Python AST node's), is fine
    assert op_name_checks('Call("get_block_idx", (), (), t)\nisinstance(node.op, ast.Add)\n'
                          'x = {ast.Add: "+"}[type(node.op)]\nmode = "read"\n') == []


def test_no_module_outside_ops_compares_op_names():
    offenders = []
    for f in sorted(ROOT.rglob("*.py")):
        rel = f.relative_to(ROOT)
        if rel.parts[0] == "ops":
            continue
        offenders += [f"pypto/{rel}:{hit}" for hit in op_name_checks(f.read_text())]
    assert not offenders, "op knowledge outside pypto/ops (declare a fact on the op's " \
                          "registry entry instead):\n" + "\n".join(offenders)


# --- the facts are true ---------------------------------------------------------------------

M, N, K, B = 4, 8, 6, 3


def _args(op, rng: np.random.Generator, dt: np.dtype, batch: tuple = ()) -> list:
    """Arguments for the impl of a batchable / ufunc op, every array with `batch` axes."""

    def arr(*shape: int) -> np.ndarray:
        return rng.standard_normal(batch + shape).astype(dt)

    out = []
    for name, p in op.signature.parameters.items():
        if op.matmul is not None and name in (op.matmul.lhs, op.matmul.rhs, op.matmul.acc):
            out.append(arr(M, K) if name == op.matmul.lhs else arr(K, N)
                       if name == op.matmul.rhs else arr(M, N))
        elif name in ("x", "lhs", "rhs", "rhs2", "target"):
            out.append(arr(M, N))
        elif name in ("vec", "row_vec"):
            out.append(arr(M, 1))
        elif name == "col_vec":
            out.append(arr(1, N))
        elif name == "slope":
            out.append(0.25)
        elif name == "target_type":
            out.append(dtypes.FP16)
        elif p.default is not p.empty:
            out.append(p.default)
        else:
            raise AssertionError(f"{op.name}: no test argument for {name}")
    return out


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and \
        np.array_equal(np.ascontiguousarray(a).view(np.uint8),
                       np.ascontiguousarray(b).view(np.uint8))


UFUNC_OPS = sorted(n for n, op in all_ops().items() if op.ufunc is not None)
BATCHABLE_OPS = sorted(n for n, op in all_ops().items() if op.batchable)


@pytest.mark.parametrize("name", UFUNC_OPS)
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_ufunc_fact_is_the_impl(name, dt):
    op = all_ops()[name]
    uf = op.ufunc
    args = _args(op, np.random.default_rng(0), np.dtype(dt))
    with np.errstate(all="ignore"):
        got = op.impl(*args)
        if uf.reduce_axis is not None:
            want = uf.fn.reduce(args[0], axis=uf.reduce_axis, keepdims=True)
        else:
            want = uf.fn(*args[:uf.arity])
    assert _same_bits(got, want)


@pytest.mark.parametrize("name", BATCHABLE_OPS)
def test_batchable_fact_stacks_leading_axes(name):
    op = all_ops()[name]
    stacked = _args(op, np.random.default_rng(1), np.dtype(np.float32), (B,))
    with np.errstate(all="ignore"):
        whole = op.impl(*stacked)
        parts = [op.impl(*[a[b] if isinstance(a, np.ndarray) else a for a in stacked])
                 for b in range(B)]
    assert _same_bits(whole, np.stack(parts))


def test_untagged_fact_is_the_impl():
    # an op whose tag rule drops the tag makes a plain array of a partially valid operand
    from pypto.ops.numeric import with_valid

    rules = {n: op.batch.tag_rule for n, op in all_ops().items()
             if op.batch is not None and op.batch.family is Family.TAG_ONLY}
    assert rules == {"fillpad": TagRule.PAD, "transpose": TagRule.TRANSPOSE,
                     "set_validshape": TagRule.SET}
    assert all(op.batch is None or (op.batch.tag_rule is not None) ==
               (op.batch.family is Family.TAG_ONLY) for op in all_ops().values())
    x = with_valid(np.arange(32, dtype=np.float32).reshape(4, 8), (2, 5))
    assert getattr(x, "valid", None) == (2, 5)
    t = all_ops()["transpose"].impl(x, 0, 1)
    f = all_ops()["fillpad"].impl(x)
    assert type(t) is np.ndarray and type(f) is np.ndarray
    np.testing.assert_array_equal(t, np.arange(32, dtype=np.float32).reshape(4, 8).T)
    assert f[1, 4] == 12 and f[1, 5] == 0 and f[2, 0] == 0


def test_views_are_meta_or_windows():
    for name, op in all_ops().items():
        if op.view is View.ALIAS:
            assert op.unit is Unit.META, name
        if op.window_write is not None:
            assert op.writes == op.window_write.tensor, name  # it writes its tensor


def test_a_fact_naming_no_parameter_is_refused():
    from pypto.ops.facts import WindowRead
    from pypto.ops.registry import defop

    with pytest.raises(ValueError, match="fact names 'offsets', not a parameter"):
        defop("_test_bad_window", unit=Unit.MTE,
              window=WindowRead("x", "offsets", "shape"))(lambda x, shape, offset: x)


def test_batching_facts_are_typed_and_where_they_belong():
    # (the batch engine's facts were untyped `extra` keys once: a misspelt one was
    # silently ignored; no op may carry them there now)
    old = {"batched", "untagged", "int_array", "batchable", "batching"}
    assert [n for n, op in all_ops().items() if old & set(op.extra)] == []
    def having(pred):
        return sorted(n for n, op in all_ops().items() if op.batch is not None and pred(op))

    assert having(lambda op: op.batch.family is Family.MATMUL) == ["matmul", "matmul_acc"]
    assert having(lambda op: op.batch.family is Family.EXPAND) == ["col_expand", "row_expand"]
    assert having(lambda op: op.batch.tag_arity is not None) == ["log", "recip", "rsqrt"]
    assert having(lambda op: op.batch.family is Family.FORM) == ["gather"]
    assert having(lambda op: op.batch.form is not None) == ["gather"]
    assert having(lambda op: op.batch.int_array is not None) == ["cast", "max", "min"]
    # a family's other facts agree with it: a window's rule with its window, a reduction
    # with its ufunc's axis, a product with its matmul fact, index arithmetic with its
    # operator
    for name, op in all_ops().items():
        fam = op.batch.family if op.batch is not None else None
        assert (fam is Family.WINDOW_READ) == (op.window_read is not None), name
        assert (fam is Family.WINDOW_WRITE) == (op.window_write is not None), name
        if fam is Family.REDUCE:
            assert op.ufunc is not None and op.ufunc.reduce_axis is not None, name
        if fam is Family.MATMUL:
            assert op.matmul is not None, name
        if fam is Family.INDEX_SCALAR and op.role is None:
            assert op.symbol in ("+", "-", "*", "//", "%") and len(op.params) == 2, name


def test_an_unknown_fact_is_refused():
    from pypto.ops.registry import defop

    with pytest.raises(ValueError, match=r"unknown facts \['batchable'\]"):
        defop("_test_old_fact", unit=Unit.VECTOR, batchable=True)


def test_mask_rules_are_the_impls():
    from pypto.ops.numeric import with_valid

    x = with_valid(np.arange(1, 33, dtype=np.float32).reshape(4, 8), (2, 5))
    for name in ("log", "recip", "rsqrt"):  # a ufunc of the first operand alone
        op = all_ops()[name]
        assert _same_bits(op.impl(x), op.impl(x, True)), name
    # an expand is a fresh, untagged array of the first operand's shape
    vec = np.arange(4, dtype=np.float32).reshape(4, 1)
    r = all_ops()["row_expand"].impl(x, vec)
    assert type(r) is np.ndarray and r.shape == (4, 8) and r[3, 7] == 3.0
