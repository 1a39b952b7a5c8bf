"""Stack configs and specs: valid baselines, error tables, mutations, the one edit helper, fixtures."""
