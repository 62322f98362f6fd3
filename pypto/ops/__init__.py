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
    op = REGISTRY.get(name)
    if op is None:
        return None
    return OpSpelling(op.names[0] if op.names else name,
                      tuple(op.signature.parameters.values()), op.symbol)


use_op_spellings(_spelling)
