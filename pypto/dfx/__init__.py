"""The runtime's DFX artifacts (deps.json, args dumps, swimlanes, pmu.csv, pass dumps),
made from a simulated run in the formats hw-native-sys/simpler and pypto write, so that
their viewers read them unchanged (docs/dfx.md). One concept per module; the golden
harness and `pypto-sim` call `artifacts.write_run` / `artifacts.write_passes`; `knobs`
says what the simulator does with each runtime knob."""
