"""The tutorial notebooks' sources, one module per notebook."""
