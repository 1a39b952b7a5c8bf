"""Real Slurm: the Debian root, daemons, network namespaces, ports, job submission, Slinky emulation, configs."""
