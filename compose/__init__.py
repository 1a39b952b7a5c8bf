"""The only bridge from the spec to components: one module per cloud and layer, ``build_stack`` at the top."""
