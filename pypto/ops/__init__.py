"""Op families. Importing this package registers every op in `registry.REGISTRY`."""
from pypto.ops import (cast, creation, elementwise, gather, matmul, memory, padding,  # noqa: F401
                       reduce, scalar, scatter, select, sort, system, views)
from pypto.ops.registry import REGISTRY, OpDef, OpError, Unit, all_ops, defop, get  # noqa: F401
