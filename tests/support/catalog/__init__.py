"""The catalog refresh: a loopback price-API server."""
