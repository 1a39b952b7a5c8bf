"""Project guards: the import graph, private Pulumi SDK names."""
