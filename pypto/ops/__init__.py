"""Op families. Importing this package registers every op in `registry.REGISTRY`."""
from pypto.ops import (cast, creation, distributed, elementwise, gather, lanes,  # noqa: F401
                       matmul, memory, padding, reduce, scalar, scatter, select, sort, system,
                       views)
from pypto.ops.registry import REGISTRY, OpDef, OpError, Unit, all_ops, defop, get  # noqa: F401
