"""Precision: the float64 shadow run that finds the first op whose result drifts from
its exact value (`shadow`), and the measures it and `error_distribution` share
(`measures`)."""
