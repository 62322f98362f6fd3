"""What a simulated run leaves behind (`trace`: tasks, accesses, the task graph, last
writers; `index`: the dependency index) and the cost model's accounting (`costs`)."""
