"""Precision: the float64 shadow run that finds the first op whose result drifts from
its exact value (`shadow`, over the programs `instrument` makes), the measures it and
`error_distribution` share (`measures`), and the cast audit (`cast_audit`)."""
