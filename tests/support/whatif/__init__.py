"""What-if simulator: stacks by size, scenarios, and the comparison with a real Slurm."""
