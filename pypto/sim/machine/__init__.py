"""The simulated machine while it runs: one call's state (`run`), the frame of each
task or block (`frame`), and blocks that meet at barriers (`interleave`)."""
