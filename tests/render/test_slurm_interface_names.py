"""The real-Slurm test support names network interfaces after its probes and sessions; Linux refuses a name over 15
bytes with "Attribute failed policy validation", which the support would report as a kernel without bridges (a full
CI run's 28 real-Slurm tests failed so once the probe counter reached two digits). No real peer: names only."""

from __future__ import annotations

from tests.support.slurm.netns import IFNAME_MAX, NodeNetwork, probe_name


def test_probe_interfaces_fit_the_kernels_name_limit_however_many_probes_ran():
    for _ in range(2500):  # past every counter wrap
        name = probe_name()
        assert len(f"{name}b") <= IFNAME_MAX and len(f"{name}v") <= IFNAME_MAX, name


def test_node_network_interfaces_fit_the_kernels_name_limit():
    tag = NodeNetwork.__dataclass_fields__["tag"].default_factory  # type: ignore[misc]
    for _ in range(200):
        t = tag()
        assert len(f"{t}b") <= IFNAME_MAX and len(f"{t}v{127}") <= IFNAME_MAX, t
