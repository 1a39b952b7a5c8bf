"""One rule per module; each ends with ``RULE = register(Rule(...), order=N)`` (``policies/registry.py``), and
``policies.pack`` discovers them by scanning this package."""
