"""Quota cannot be bypassed (a tenant's job that names no queue would run outside its quota): in the team namespaces
Kueue manages jobs and pods that name no queue, as the pinned Kueue chart renders our manager configuration with real
Helm; system namespaces stay outside its pod webhook."""

from __future__ import annotations

import yaml

from tests.support.helm.examples import rendered


def _config_and_pod_webhook(stack: str):
    objs = rendered(stack).objects
    cm = next(o for o in objs if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "kueue-manager-config")
    config = yaml.safe_load(cm["data"]["controller_manager_config.yaml"])
    hooks = next(o for o in objs if o["metadata"]["name"] == "kueue-mutating-webhook-configuration")
    pod_hook = next(w for w in hooks["webhooks"] if w["name"] == "mpod.kb.io")
    return config, pod_hook


def test_team_namespaces_jobs_without_a_queue_name_are_kueues():
    config, pod_hook = _config_and_pod_webhook("gke-kueue")
    assert config["manageJobsWithoutQueueName"] is True
    teams = ["research", "product-ml"]
    assert config["managedJobsNamespaceSelector"] == {
        "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": teams}]
    }
    assert "pod" in config["integrations"]["frameworks"]
    # the chart copies our selector onto the pod webhook: kube-system, kueue-system, kubeflow are never touched
    assert pod_hook["namespaceSelector"] == config["managedJobsNamespaceSelector"]
