"""Task graph: launch-argument directions and dependency edges."""
from __future__ import annotations

import pypto.language as pl


@pl.jit
def three(x: pl.Tensor[[128, 64], pl.FP32], y: pl.Out[pl.Tensor[[128, 64], pl.FP32]],
          z: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="top"):
        y[0:64, 0:64] = pl.exp(x[0:64, 0:64])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="bottom"):
        y[64:128, 0:64] = pl.exp(x[64:128, 0:64])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="use_top"):
        z[0:64, 0:64] = pl.add(y[0:64, 0:64], 1.0)
    return z


@pl.jit
def explicit(x: pl.Tensor[[128, 64], pl.FP32], y: pl.Out[pl.Tensor[[128, 64], pl.FP32]],
             z: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="top"):
        y[0:64, 0:64] = pl.exp(x[0:64, 0:64])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="bottom") as t_bottom:
        y[64:128, 0:64] = pl.exp(x[64:128, 0:64])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="use_top", deps=[t_bottom]):
        z[0:64, 0:64] = pl.add(y[0:64, 0:64], 1.0)
    return z


@pl.jit
def accumulate(x: pl.Tensor[[64, 64], pl.FP32], y: pl.InOut[pl.Tensor[[64, 64], pl.FP32]]):
    for i in pl.range(4):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="acc"):
            y[0:64, 0:64] = pl.add(y[0:64, 0:64], x[0:64, 0:64])
    return y


@pl.jit
def rows(x: pl.Tensor[[256, 64], pl.FP32], y: pl.Out[pl.Tensor[[256, 64], pl.FP32]]):
    for r in pl.parallel(0, 256, 64):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            y[r:r + 64, :] = pl.exp(x[r:r + 64, :])
    return y


def _graph(kernel):
    return kernel.compile().analyses["task_graph"]


def _dirs(node):
    return {a.root or a.param: a.direction for a in node.args}


def test_three_regions_edges_and_directions():
    g = _graph(three)
    assert [n.name_hint for n in g.nodes] == ["top", "bottom", "use_top"]
    top, bottom, use = g.nodes
    # top and bottom write disjoint halves of y; use_top reads only the top half
    assert g.edge_set() == {(0, 2, "RAW", "y", False)}
    assert all(e.origin == "data" for e in g.edges)
    assert _dirs(top) == {"x": "Input", "y": "OutputExisting"}
    # bottom writes y after a sibling already did (R-prior): InOut
    assert _dirs(bottom) == {"x": "Input", "y": "InOut"}
    assert _dirs(use) == {"y": "Input", "z": "OutputExisting"}
    ya = next(a for a in top.args if a.root == "y")
    assert ya.write == ((0, 64), (0, 64)) and not ya.reads
    yb = next(a for a in bottom.args if a.root == "y")
    assert yb.write == ((64, 128), (0, 64))
    yu = next(a for a in use.args if a.root == "y")
    assert yu.read == ((0, 64), (0, 64)) and not yu.writes


def test_explicit_deps_are_marked():
    g = _graph(explicit)
    assert g.nodes[1].task_var == "t_bottom"
    assert g.edge_set() == {(0, 2, "RAW", "y", False), (1, 2, "explicit", None, False)}
    origins = {(e.src, e.dst): e.origin for e in g.edges}
    assert origins == {(0, 2): "data", (1, 2): "explicit"}


def test_sequential_loop_gives_loop_carried_self_edges():
    g = _graph(accumulate)
    assert len(g.nodes) == 1
    assert [(lp.kind, lp.trip_count) for lp in g.nodes[0].loops] == [("range", 4)]
    assert g.edge_set() == {(0, 0, "RAW", "y", True), (0, 0, "WAW", "y", True)}
    assert _dirs(g.nodes[0]) == {"x": "Input", "y": "InOut"}


def test_parallel_loop_has_no_carried_edges():
    g = _graph(rows)
    assert len(g.nodes) == 1 and g.edges == ()
    # Out inside a parallel loop, first writer: OutputExisting
    assert _dirs(g.nodes[0])["y"] == "OutputExisting"
