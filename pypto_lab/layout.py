"""Deterministic layered layout for DAGs: topological generations, then a fixed order."""
from __future__ import annotations

import networkx as nx


def layered_positions(graph: nx.DiGraph, *, horizontal: bool = True
                      ) -> dict[str, tuple[float, float]]:
    """Node positions: one column (or row) per topological generation.

    Nodes inside a generation keep their `order` attribute (then their name), so the
    same graph always gets the same picture. Cycles are broken by dropping back edges
    of a DFS in sorted order.
    """
    dag = _acyclic(_layout_edges(graph))
    pos: dict[str, tuple[float, float]] = {}
    for layer, nodes in enumerate(nx.topological_generations(dag)):
        ordered = sorted(nodes, key=lambda n: (graph.nodes[n].get("order", 0), str(n)))
        for i, n in enumerate(ordered):
            offset = i - (len(ordered) - 1) / 2
            pos[n] = (float(layer), -offset) if horizontal else (offset, -float(layer))
    return pos


def _layout_edges(graph: nx.DiGraph) -> nx.DiGraph:
    """`graph` without the edges marked `layout=False` (overlays such as race edges)."""
    if all(d.get("layout", True) for _, _, d in graph.edges(data=True)):
        return graph
    g = nx.DiGraph()
    g.add_nodes_from(graph.nodes(data=True))
    g.add_edges_from((u, v) for u, v, d in graph.edges(data=True) if d.get("layout", True))
    return g


def _acyclic(graph: nx.DiGraph) -> nx.DiGraph:
    if nx.is_directed_acyclic_graph(graph):
        return graph
    dag = nx.DiGraph()
    dag.add_nodes_from(sorted(graph.nodes))
    for u, v in sorted(graph.edges):
        dag.add_edge(u, v)
        if not nx.is_directed_acyclic_graph(dag):
            dag.remove_edge(u, v)
    return dag
