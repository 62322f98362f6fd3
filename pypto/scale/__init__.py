"""Scale-out: run a kernel corpus, or a tile-size sweep, as Dask tasks.

    pypto-sim models/ --workers 2 --json out.json --html out.html   # a LocalCluster
    pypto-sim --scheduler tcp://HOST:8786 --list benchmarks/tier2.txt --root CHECKOUT

    from pypto.scale import sweep
    result = sweep("examples/intermediate/gemm.py", {"M_TILE": [32, 64, 128]})
    result.best                                    # the fastest point that passes

Dask (`dask.distributed`, the `[scale]` extra) is imported only by `pypto.scale.cluster`
when a client is opened; everything else here - collecting files, running one file,
evaluating one sweep point - is plain Python a worker calls. See docs/scale.md.
"""
from pypto.scale.corpus import CorpusFile, collect
from pypto.scale.runfile import FileOptions, run_file

__all__ = ["CorpusFile", "FileOptions", "collect", "run_file"]
