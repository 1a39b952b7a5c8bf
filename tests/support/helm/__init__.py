"""Real Helm: binaries, rendering recorded releases, checks over values and rendered objects."""
