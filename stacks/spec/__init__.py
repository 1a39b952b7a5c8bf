"""The typed stack spec: pydantic models of ``Pulumi.<stack>.yaml`` (cluster, pools, GPU runtime, fabric, pod start,
capacity, maintenance, scheduling, Slurm), how one scalar is read, and the generator of docs/configuration.md.
Pure: no Pulumi. ``stacks/validate/`` builds it; ``stacks/plan/`` derives everything else from it."""
