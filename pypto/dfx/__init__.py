"""The runtime's DFX artifacts, written from a simulated run in the runtime's own formats
(`docs/dfx.md`): the build directory, the args dump, the estimated chip swimlane, the
PMU counters, the pass dumps, and the notes for the knobs the simulator does not honour.
One concept per module; the golden harness and `pypto-sim` call `artifacts.write`."""
