"""The simulated device memory: global buffers and views of them (`memory`, `views`),
fresh memory and padding (`fill`)."""
