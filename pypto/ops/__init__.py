"""Op families. Importing this package registers every op in `registry.REGISTRY` and
tells the IR printer how each op is spelled."""
from pypto.ir.printer import OpSpelling, use_op_spellings
from pypto.ops import (  # noqa: F401
    cast,
    creation,
    distributed,
    elementwise,
    gather,
    handles,
    lanes,
    matmul,
    memory,
    mx,
    padding,
    pipes,
    probe,
    reduce,
    scalar,
    scatter,
    select,
    sort,
    sync,
    system,
    views,
)
from pypto.ops.facts import Matmul, Role, Ufunc, View, Window  # noqa: F401
from pypto.ops.registry import REGISTRY, OpDef, OpError, Unit, all_ops, defop, get  # noqa: F401


def _spelling(name: str) -> OpSpelling | None:
    """How the printer writes a call of op `name`: its first public name, each rule
    argument under the name that spelling gives it (a rule parameter the spelling does
    not name prints as a keyword of the rule's name; only a non-default value prints)."""
    op = REGISTRY.get(name)
    if op is None:
        return None
    spelling = op.spelling()
    params = []
    for r in op.signature.parameters.values():
        public = spelling.from_rule.get(r.name)
        if public is None:
            params.append(r.replace(kind=r.KEYWORD_ONLY))
        else:
            kind = spelling.signature.parameters[public].kind
            params.append(r.replace(name=public, kind=kind))
    return OpSpelling(op.names[0] if op.names else name, tuple(params), op.symbol)


use_op_spellings(_spelling)
