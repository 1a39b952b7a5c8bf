"""Workloads: parametric profiles, explicit job lists and trace adapters (Alibaba openb, Helios/Acme, Philly)."""
