"""The batch engine: the independent blocks of a launch run as one vectorised pass.

`plan` decides statically whether a region can run batched for a set of block-varying
parameters; `compiler` (with `ufuncs`, `scalars`, `codegen`) compiles it for all blocks
at once; `run` runs a batched launch and replays the trace per task; `nest` recognises
the `pl.parallel` launch loop nests of orchestration; `fills` defers the fill of fresh
output buffers a batched launch overwrites. See `run` for the execution model.
"""
