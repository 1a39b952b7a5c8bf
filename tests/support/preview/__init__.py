"""Recordings and the stack diff: lookups over recordings, diff fixtures."""
