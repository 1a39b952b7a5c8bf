"""Documents with the shape of the upstream Katib / Kubeflow Pipelines manifests at the pinned tags, as the kustomize
Directory would hand them to its transforms: Katib v0.18.0 ``components/mysql/secret.yaml``; KFP 2.5.0
``third-party/minio/base/mlpipeline-minio-artifact-secret.yaml``, ``base/installs/generic/mysql-secret.yaml`` and
``third-party/mysql/base/mysql-deployment.yaml``. Under mocks the Directory is never expanded, so tests run its
recorded transforms over these."""
from __future__ import annotations

SECRET, DEPLOYMENT = "kubernetes:core/v1:Secret", "kubernetes:apps/v1:Deployment"

KATIB_SECRET = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": {"name": "katib-mysql-secrets"},
                "data": {"MYSQL_ROOT_PASSWORD": "dGVzdA=="}}
MINIO_SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "mlpipeline-minio-artifact"},
                "stringData": {"accesskey": "minio", "secretkey": "minio123"}}
MYSQL_SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "mysql-secret"},
                "stringData": {"username": "root", "password": ""}}
MYSQL_DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "mysql"},
    "spec": {"template": {"spec": {"containers": [{
        "name": "mysql", "image": "mysql:8.4", "env": [{"name": "MYSQL_ALLOW_EMPTY_PASSWORD", "value": "true"}]}]}}}}

UPSTREAM: dict[str, list[tuple[str, dict]]] = {
    "katib": [(SECRET, KATIB_SECRET)],
    "pipelines": [(SECRET, MINIO_SECRET), (SECRET, MYSQL_SECRET), (DEPLOYMENT, MYSQL_DEPLOYMENT)],
}
"""Install -> (type token, document) of every upstream object that carries a known default credential."""
