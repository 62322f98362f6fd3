"""Op families. Importing this package registers every op in `registry.REGISTRY`."""
from pypto.ops import cast, elementwise, matmul, memory, reduce, scalar, system  # noqa: F401
from pypto.ops.registry import REGISTRY, OpDef, OpError, Unit, all_ops, defop, get  # noqa: F401
