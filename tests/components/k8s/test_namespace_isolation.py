"""Team namespaces and ``slurm`` are closed to other namespaces (tenants never escape their lane; defense in depth):
what the stack's NetworkPolicies let in, judged by the NetworkPolicy model of ``tests/support/kube/network_policy.py``.
"""

from __future__ import annotations

from tests.support.helm.examples import recording
from tests.support.kube.admission import k8s_objects
from tests.support.kube.network_policy import Peer, ingress_allowed


def _policies(stack: str) -> list[dict]:
    return [o for o in k8s_objects(recording(stack)) if o["kind"] == "NetworkPolicy"]


def test_another_team_cannot_reach_a_teams_pods():
    netpols = _policies("gke-kueue")
    notebook = Peer("research", {"app": "jupyter"})
    assert not ingress_allowed(netpols, Peer("product-ml", {"app": "x"}), notebook, 8888)
    assert not ingress_allowed(netpols, Peer("default", {}), notebook, 8888)
    assert ingress_allowed(netpols, Peer("research", {"job": "worker-1"}), Peer("research", {"job": "worker-0"}), 29500)


def test_no_tenant_reaches_slurm_daemons_or_its_database():
    netpols = _policies("gke-h100-512")
    for port, target in (
        (6817, {"app.kubernetes.io/name": "slurmctld"}),
        (3306, {"app": "mariadb"}),
        (6820, {"app.kubernetes.io/name": "slurmrestd"}),
    ):
        assert not ingress_allowed(netpols, Peer("default", {}), Peer("slurm", target), port)
    slurmd = Peer("slurm", {"app.kubernetes.io/name": "slurmd"})
    assert ingress_allowed(netpols, slurmd, Peer("slurm", {"app.kubernetes.io/name": "slurmctld"}), 6817)
    operator = Peer("slinky", {"app.kubernetes.io/name": "slurm-operator"})
    assert ingress_allowed(netpols, operator, Peer("slurm", {"app.kubernetes.io/name": "slurmrestd"}), 6820)


def test_eks_team_namespaces_are_isolated_and_enforced():
    objects = k8s_objects(recording("eks-kueue"))
    netpols = [o for o in objects if o["kind"] == "NetworkPolicy"]
    assert not ingress_allowed(netpols, Peer("finetune", {}), Peer("pretraining", {}), 80)
