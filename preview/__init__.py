"""Offline preview: run the unchanged Pulumi program under mocks, record every resource, price it, print it."""
