"""Pulumi ComponentResources, one per file. Each turns a part of the StackSpec into provider resources."""
