"""Where every pinned upstream file the tests read from ``../shared`` comes from, for ``scripts/fetch-upstream.sh``.

``scripts/upstream-files.txt`` lists one file per line: ``<sha256> <path under ../shared> <public URL> [<sed
program>]``. The URL is the raw file at the pinned tag; the optional sed program repeats the packaging edit the
upstream release process makes (``../shared/charts/PROVENANCE.md``), so the fetched file equals the staged one. The
list is generated from ``../shared`` by ``expected_lines()`` (tests check it is current and complete).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

LIST_FILE = "scripts/upstream-files.txt"
RAW = "https://raw.githubusercontent.com"

SCHEMA_REPOS = {
    "kueue": "kubernetes-sigs/kueue",
    "slurm-operator": "SlinkyProject/slurm-operator",
    "kubeflow-trainer": "kubeflow/trainer",
    "k8s-device-plugin": "NVIDIA/k8s-device-plugin",
    "gpu-operator": "NVIDIA/gpu-operator",
    "eks-charts": "aws/eks-charts",
    "lws": "kubernetes-sigs/lws",
    "gateway-api-inference-extension": "kubernetes-sigs/gateway-api-inference-extension",
    "llm-d-router": "llm-d/llm-d-router",
    "keda": "kedacore/keda",
    "kedacore-charts": "kedacore/charts",
    "gateway-api": "kubernetes-sigs/gateway-api",
}
"""``schemas/<name>/<tag>/<path in the repository>``: the repository of each ``<name>``."""

CHART_SOURCES: dict[str, list[tuple[str, str, str, str]]] = {
    # staged folder -> (sub-folder of it, repository, tag, path in the repository); the longest sub-folder wins
    "nvidia-device-plugin-0.20.0": [
        ("", "NVIDIA/k8s-device-plugin", "v0.20.0", "deployments/helm/nvidia-device-plugin")
    ],
    "gpu-operator-v26.7.0": [("", "NVIDIA/gpu-operator", "v26.7.0", "deployments/gpu-operator")],
    "aws-efa-k8s-device-plugin-v0.5.30": [("", "aws/eks-charts", "v0.0.242", "stable/aws-efa-k8s-device-plugin")],
    "cluster-autoscaler-9.59.0": [
        ("", "kubernetes/autoscaler", "cluster-autoscaler-chart-9.59.0", "charts/cluster-autoscaler")
    ],
    "kueue-0.19.2": [("", "kubernetes-sigs/kueue", "v0.19.2", "charts/kueue")],
    "kubeflow-trainer-2.3.0": [
        ("", "kubeflow/trainer", "v2.3.0", "charts/kubeflow-trainer"),
        ("charts/jobset", "kubernetes-sigs/jobset", "v0.12.0", "charts/jobset"),
        ("charts/lws", "kubernetes-sigs/lws", "v0.8.0", "charts/lws"),
    ],
    "slurm-operator-1.2.1": [
        ("", "SlinkyProject/slurm-operator", "v1.2.1", "helm/slurm-operator"),
        ("charts/slurm-operator-crds", "SlinkyProject/slurm-operator", "v1.2.1", "helm/slurm-operator-crds"),
    ],
    "slurm-1.2.1": [("", "SlinkyProject/slurm-operator", "v1.2.1", "helm/slurm")],
    "nvidia-dra-driver-gpu-v25.8.1": [
        ("", "NVIDIA/k8s-dra-driver-gpu", "v25.8.1", "deployments/helm/nvidia-dra-driver-gpu")
    ],
    "dra-driver-nvidia-gpu-v0.4.0": [
        ("", "kubernetes-sigs/dra-driver-nvidia-gpu", "v0.4.0", "deployments/helm/dra-driver-nvidia-gpu")
    ],
    "lws-v0.10.0": [("", "kubernetes-sigs/lws", "v0.10.0", "charts/lws")],
    "inferencepool-v1.5.0": [
        ("", "kubernetes-sigs/gateway-api-inference-extension", "v1.5.0", "config/charts/inferencepool"),
        (
            "charts/inference-extension",
            "kubernetes-sigs/gateway-api-inference-extension",
            "v1.5.0",
            "config/charts/epplib",
        ),
    ],
    "llm-d-router-gateway-v0.10.0": [
        ("", "llm-d/llm-d-router", "v0.10.0", "config/charts/llm-d-router-gateway"),
        ("charts/router", "llm-d/llm-d-router", "v0.10.0", "config/charts/routerlib"),
    ],
    "keda-2.20.2": [("", "kedacore/charts", "v2.20.2", "keda")],
}

EDITS = {
    # the packaging edits of PROVENANCE.md, as sed programs over the tagged source
    "charts/gpu-operator-v26.7.0/Chart.yaml": 's/^version: .*/version: v26.7.0/;s/^appVersion: .*/appVersion: "v26.7.0"/',
    "charts/kueue-0.19.2/values.yaml": "/^  manager:$/,/pullPolicy:/{s#repository: .*#repository: registry.k8s.io/kueue/kueue#;"
    "s/tag: .*/tag: v0.19.2/;s/pullPolicy: .*/pullPolicy: IfNotPresent/}",
    "charts/kubeflow-trainer-2.3.0/charts/jobset/Chart.yaml": 's/^appVersion: .*/appVersion: "v0.12.0"/',
    "charts/kubeflow-trainer-2.3.0/charts/jobset/values.yaml": "s#^  repository: .*/jobset$#  repository: registry.k8s.io/jobset/jobset#;s/^  tag: .*/  tag: v0.12.0/",
    "charts/kubeflow-trainer-2.3.0/charts/lws/Chart.yaml": "s/^version: .*/version: 0.8.0/",
    "charts/kubeflow-trainer-2.3.0/charts/lws/values.yaml": "s/^    tag: .*/    tag: v0.8.0/",
    "charts/lws-v0.10.0/Chart.yaml": "s/^version: .*/version: v0.10.0/",
    "charts/lws-v0.10.0/values.yaml": "s/^    tag: main$/    tag: v0.10.0/;s/^    pullPolicy: Always$/    pullPolicy: IfNotPresent/",
    "charts/inferencepool-v1.5.0/Chart.yaml": 's/^version: .*/version: v1.5.0/;s/^appVersion: .*/appVersion: "v1.5.0"/',
    "charts/llm-d-router-gateway-v0.10.0/Chart.yaml": 's/^version: .*/version: v0.10.0/;s/^appVersion: .*/appVersion: "v0.10.0"/',
    # hack/push-chart.sh adds the release images with yq; the same lines after line 4 (checked offline: equal bytes)
    "charts/llm-d-router-gateway-v0.10.0/values.yaml": "4a\\"
    + "\\n".join(
        (
            "  # Added as hack/push-chart.sh does for a release tag (EXTRA_TAG=v0.10.0, LATENCY_PREDICTOR_TAG=v0.10.0).",
            "  epp:",
            "    image:",
            "      registry: ghcr.io/llm-d",
            "      repository: llm-d-router-endpoint-picker",
            "      tag: v0.10.0",
            "      pullPolicy: IfNotPresent",
            "  latencyPredictor:",
            "    trainingServer:",
            "      image:",
            "        registry: ghcr.io/llm-d",
            "        repository: llm-d-latency-predictor-training-server",
            "        tag: v0.10.0",
            "        pullPolicy: IfNotPresent",
            "    predictionServers:",
            "      image:",
            "        registry: ghcr.io/llm-d",
            "        repository: llm-d-latency-predictor-prediction-server",
            "        tag: v0.10.0",
            "        pullPolicy: IfNotPresent",
        )
    ),
}
"""Verified offline where ``../shared/schemas`` holds the untouched upstream file (GPU Operator Chart.yaml, Kueue
values.yaml); the jobset and lws edits follow PROVENANCE.md and are checked by the sha256 on the first fetch."""
FETCHED = ("schemas", "charts")
SKIPPED = {"schemas/README.md", "charts/PROVENANCE.md"}
"""Notes written for ``../shared``, not upstream files."""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def url_of(relative: str) -> str:
    top, rest = relative.split("/", 1)
    if top == "schemas":
        name, tag, path = rest.split("/", 2)
        return f"{RAW}/{SCHEMA_REPOS[name]}/{tag}/{path}"
    folder, inner = rest.split("/", 1)
    for sub, repo, tag, path in sorted(CHART_SOURCES[folder], key=lambda s: -len(s[0])):
        if not sub or inner.startswith(sub + "/"):
            tail = inner[len(sub) + 1 :] if sub else inner
            return f"{RAW}/{repo}/{tag}/{path}/{tail}"
    raise KeyError(relative)


def shared_files(shared: Path) -> list[str]:
    return sorted(
        str(p.relative_to(shared))
        for top in FETCHED
        for p in (shared / top).rglob("*")
        if p.is_file() and str(p.relative_to(shared)) not in SKIPPED
    )


def expected_lines(shared: Path) -> list[str]:
    out = []
    for rel in shared_files(shared):
        line = f"{sha256(shared / rel)} {rel} {url_of(rel)}"
        out.append(f"{line} {EDITS[rel]}" if rel in EDITS else line)
    return out
