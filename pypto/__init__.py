"""pypto-lab's core: the `pl` language, its compiler passes, the simulator and the golden harness.

Nothing here imports IPython, ipywidgets, plotly or networkx; the workbench in
`pypto_lab` builds on the records this package leaves (pass records, traces).
"""
__version__ = "0.1.0"
