"""NetworkPolicies of the ``kubeflow`` namespace (Katib, Kubeflow Pipelines): default-deny ingress, then only what
the components need. Pure: no Pulumi.

Neither the Katib UI nor the Kubeflow Pipelines API authenticates anyone (standalone installs), and both act with
cluster-wide rights (katib-controller creates trial Jobs and reads Secrets in any namespace; the Pipelines API starts
runs as any ServiceAccount of ``kubeflow``). So nothing outside ``kubeflow`` may reach them: operators use
``kubectl port-forward`` (which the API server proxies into the pod, past NetworkPolicy, and which needs RBAC on
``pods/portforward`` in ``kubeflow``). What stays open: the namespace to itself (pipeline pods run there and report
to the API), the API server to the Katib webhook, and trial pods in the team namespaces to the Katib DB manager
(their metrics collectors push results). Enforced by Dataplane V2 on GKE and by the VPC CNI's network policy agent
on EKS (``components/eks/cluster.py`` turns it on).
"""

from __future__ import annotations

from typing import Any, Sequence

NAMESPACE = "kubeflow"
LABELS = {"app.kubernetes.io/part-of": "gpu-cluster"}
KATIB_WEBHOOK_PORT = 8443
"""katib-controller's ``webhook`` container port (manifests/v1beta1/components/controller/controller.yaml)."""
KATIB_DB_MANAGER_PORT = 6789
KATIB_COMPONENT = "katib.kubeflow.org/component"


def _policy(name: str, selector: dict[str, Any], ingress: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": dict(LABELS)},
        "spec": {"podSelector": selector, "policyTypes": ["Ingress"], **({"ingress": ingress} if ingress else {})},
    }


def _policy_in(namespace: str, name: str, selector: dict[str, Any], ingress: list[dict[str, Any]]) -> dict[str, Any]:
    out = _policy(name, selector, ingress)
    out["metadata"]["namespace"] = namespace
    return out


def isolated_namespace(namespace: str, also_from: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Default-deny ingress with the namespace open to itself (a job's pods talk to each other; a team's services
    to the team) and to the namespaces ``also_from``: another team's pods cannot reach a team's notebooks, TensorBoards
    or job ports, and no tenant reaches Slurm's daemons or MariaDB. Egress is not restricted."""
    peers: list[dict[str, Any]] = [{"podSelector": {}}]
    if also_from:
        peers.append(
            {
                "namespaceSelector": {
                    "matchExpressions": [
                        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": list(also_from)}
                    ]
                }
            }
        )
    return [
        _policy_in(namespace, "default-deny-ingress", {}, []),
        _policy_in(namespace, "allow-same-ns", {}, [{"from": peers}]),
    ]


def kubeflow_policies(team_namespaces: Sequence[str], katib: bool) -> list[dict[str, Any]]:
    """The policies for the ``kubeflow`` namespace; ``team_namespaces``: where Katib runs trials (the queues')."""
    out = [_policy("default-deny-ingress", {}, []), _policy("allow-same-ns", {}, [{"from": [{"podSelector": {}}]}])]
    if katib:
        out.append(
            _policy(
                "katib-webhook-from-api-server",
                {"matchLabels": {KATIB_COMPONENT: "controller"}},
                [{"ports": [{"protocol": "TCP", "port": KATIB_WEBHOOK_PORT}]}],
            )
        )
        if team_namespaces:
            out.append(
                _policy(
                    "katib-db-manager-from-trials",
                    {"matchLabels": {KATIB_COMPONENT: "db-manager"}},
                    [
                        {
                            "from": [
                                {
                                    "namespaceSelector": {
                                        "matchExpressions": [
                                            {
                                                "key": "kubernetes.io/metadata.name",
                                                "operator": "In",
                                                "values": list(team_namespaces),
                                            }
                                        ]
                                    }
                                }
                            ],
                            "ports": [{"protocol": "TCP", "port": KATIB_DB_MANAGER_PORT}],
                        }
                    ],
                )
            )
    return out
