"""`pypto.pypto_core`: in the real toolchain, its native (C++) module. pypto-lab has no
native code; this package holds the few configuration names that kernels and tests
import from it (`passes.MemoryPlanner`), with the meaning they have here."""
