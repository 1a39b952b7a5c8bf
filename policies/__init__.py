"""gpu-cluster's CrossGuard policy pack: cost, topology, cross-layer and security rules over concrete resources.

`__main__.py` only assembles the pack (the Pulumi CLI runs it); `pack.py` lists the rules; one rule per file in
`rules/`. Rules read the inputs of concrete resources (node pools, node groups, launch templates, Helm releases,
CustomResources), never component inputs, which policies cannot see.
"""
