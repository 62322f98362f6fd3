"""Op families. Importing this package registers every op in `registry.REGISTRY`."""
from pypto.ops import (cast, elementwise, gather, matmul, memory, reduce, scalar, select,  # noqa: F401
                       sort, system)
from pypto.ops.registry import REGISTRY, OpDef, OpError, Unit, all_ops, defop, get  # noqa: F401
