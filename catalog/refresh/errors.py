"""The one error a refresh raises: what failed, where, and what to do; the catalog files stay as they were."""

from __future__ import annotations


class RefreshError(Exception):
    """A source could not be read or does not state a price the catalog has (nothing was written)."""
