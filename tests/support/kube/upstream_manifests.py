"""Documents with the shape of the upstream Katib / Kubeflow Pipelines manifests at the pinned tags, as the kustomize
Directory would hand them to its transforms: Katib v0.18.0 ``components/mysql/secret.yaml``; KFP 2.5.0
``third-party/minio/base/mlpipeline-minio-artifact-secret.yaml``, ``base/installs/generic/mysql-secret.yaml`` and
``third-party/mysql/base/mysql-deployment.yaml``. Under mocks the Directory is never expanded, so tests run its
recorded transforms over these."""

from __future__ import annotations

SECRET, DEPLOYMENT = "kubernetes:core/v1:Secret", "kubernetes:apps/v1:Deployment"

KATIB_SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "type": "Opaque",
    "metadata": {"name": "katib-mysql-secrets"},
    "data": {"MYSQL_ROOT_PASSWORD": "dGVzdA=="},
}
MINIO_SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "mlpipeline-minio-artifact"},
    "stringData": {"accesskey": "minio", "secretkey": "minio123"},
}
MYSQL_SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "mysql-secret"},
    "stringData": {"username": "root", "password": ""},
}
MYSQL_DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "mysql"},
    "spec": {
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "mysql",
                        "image": "mysql:8.4",
                        "env": [{"name": "MYSQL_ALLOW_EMPTY_PASSWORD", "value": "true"}],
                    }
                ]
            }
        }
    },
}

# The images gpu-cluster replaces (outdated or moving images in a tenant's path): Katib v0.18.0
# ``components/mysql/mysql.yaml`` (``mysql:8.0``, a moving tag); KFP 2.5.0
# ``third-party/minio/base/minio-deployment.yaml`` (MinIO of 2019, credentials in the 2019 variables).
KATIB_MYSQL_DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "katib-mysql", "namespace": "kubeflow"},
    "spec": {
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "katib-mysql",
                        "image": "mysql:8.0",
                        "env": [
                            {
                                "name": "MYSQL_ROOT_PASSWORD",
                                "valueFrom": {
                                    "secretKeyRef": {"name": "katib-mysql-secrets", "key": "MYSQL_ROOT_PASSWORD"}
                                },
                            }
                        ],
                    }
                ]
            }
        }
    },
}
MINIO_DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "minio"},
    "spec": {
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "minio",
                        "image": "gcr.io/ml-pipeline/minio:RELEASE.2019-08-14T20-37-41Z-license-compliance",
                        "args": ["server", "/data"],
                        "env": [
                            {
                                "name": "MINIO_ACCESS_KEY",
                                "valueFrom": {
                                    "secretKeyRef": {"name": "mlpipeline-minio-artifact", "key": "accesskey"}
                                },
                            },
                            {
                                "name": "MINIO_SECRET_KEY",
                                "valueFrom": {
                                    "secretKeyRef": {"name": "mlpipeline-minio-artifact", "key": "secretkey"}
                                },
                            },
                        ],
                    }
                ]
            }
        }
    },
}

# A container holding a generated Secret on the manifest's own image: Katib v0.18.0
# ``components/db-manager/db-manager.yaml`` (the DB manager reads the MySQL root password; the kustomization tags it).
KATIB_DB_MANAGER = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "katib-db-manager", "namespace": "kubeflow"},
    "spec": {
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "katib-db-manager",
                        "image": "docker.io/kubeflowkatib/katib-db-manager",
                        "env": [
                            {"name": "DB_NAME", "value": "mysql"},
                            {
                                "name": "DB_PASSWORD",
                                "valueFrom": {
                                    "secretKeyRef": {"name": "katib-mysql-secrets", "key": "MYSQL_ROOT_PASSWORD"}
                                },
                            },
                        ],
                        "command": ["./katib-db-manager"],
                    }
                ]
            }
        }
    },
}

UPSTREAM: dict[str, list[tuple[str, dict]]] = {
    "katib": [(SECRET, KATIB_SECRET)],
    "pipelines": [(SECRET, MINIO_SECRET), (SECRET, MYSQL_SECRET), (DEPLOYMENT, MYSQL_DEPLOYMENT)],
}
"""Install -> (type token, document) of every upstream object that carries a known default credential."""

# What a tenant's ways in through Katib's UI and the Pipelines API go through, same shapes at the pinned tags: Katib's
# ``components/ui/ui.yaml`` and ``components/namespace/namespace.yaml``; KFP's
# ``base/cache-deployer/cache-deployer-deployment.yaml``, ``base/cache/cache-deployment.yaml`` and
# ``base/cache-deployer/cluster-scoped/cache-deployer-clusterrole.yaml``.
CLUSTER_ROLE, NAMESPACE = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "kubernetes:core/v1:Namespace"
KATIB_UI = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "katib-ui", "namespace": "kubeflow"},
    "spec": {
        "replicas": 1,
        "template": {
            "spec": {
                "containers": [
                    {
                        "name": "katib-ui",
                        "image": "docker.io/kubeflowkatib/katib-ui",
                        "ports": [{"name": "ui", "containerPort": 8080}],
                    }
                ]
            }
        },
    },
}
KUBEFLOW_NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kubeflow"}}
CACHE_DEPLOYER = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "cache-deployer-deployment"},
    "spec": {
        "replicas": 1,
        "template": {
            "spec": {
                "serviceAccountName": "kubeflow-pipelines-cache-deployer-sa",
                "containers": [{"name": "main", "image": "ghcr.io/kubeflow/kfp-cache-deployer:2.5.0"}],
            }
        },
    },
}
CACHE_SERVER = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "cache-server"},
    "spec": {
        "replicas": 1,
        "template": {"spec": {"containers": [{"name": "server", "image": "ghcr.io/kubeflow/kfp-cache-server:2.5.0"}]}},
    },
}
CACHE_DEPLOYER_ROLE = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRole",
    "metadata": {"name": "kubeflow-pipelines-cache-deployer-clusterrole"},
    "rules": [
        {
            "apiGroups": ["certificates.k8s.io"],
            "verbs": ["create", "delete", "get", "update"],
            "resources": ["certificatesigningrequests", "certificatesigningrequests/approval"],
        },
        {
            "apiGroups": ["admissionregistration.k8s.io"],
            "resources": ["mutatingwebhookconfigurations"],
            "verbs": ["create", "get"],
        },
        {
            "apiGroups": ["certificates.k8s.io"],
            "resources": ["signers"],
            "resourceNames": ["kubernetes.io/*"],
            "verbs": ["approve"],
        },
    ],
}
