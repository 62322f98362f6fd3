"""The runtime's DFX artifacts (deps.json, args dumps, swimlanes, scope stats, pmu.csv),
made from a simulated run in the formats hw-native-sys/simpler writes, so that its
viewers read them unchanged."""
