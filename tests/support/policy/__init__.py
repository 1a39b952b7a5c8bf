"""The policy pack: example stacks with their violations, the harness driving the pack."""
