"""KEDA can read what its triggers query: on GKE its operator's ServiceAccount (as the pinned chart renders it with
real Helm) is a Google service account with Monitoring Viewer; on EKS its Pod Identity role may query exactly the AMP
workspace the ScaledObjects name, and an AWS managed collector fills that workspace with vLLM's metrics from the
serving namespace, labelled as the queries filter them."""

from __future__ import annotations

import json

import pytest
import yaml

from catalog.cloud_limits import cloud_limit
from render.serving_identity import amp_scrape_config
from tests.support.helm.examples import rendered
from tests.support.policy.harness import example


def _inputs(resources, type_):
    return [r.inputs for r in resources if r.type == type_]


def test_gke_keda_operator_runs_as_a_google_account_with_monitoring_viewer():
    objs = rendered("gke-serving").objects
    sa = next(o for o in objs if o["kind"] == "ServiceAccount" and o["metadata"]["name"] == "keda-operator")
    email = sa["metadata"]["annotations"]["iam.gke.io/gcp-service-account"]
    resources = example("gke-serving")
    viewers = [
        i for i in _inputs(resources, "gcp:projects/iAMMember:IAMMember") if i["role"] == "roles/monitoring.viewer"
    ]
    assert [v["member"] for v in viewers] == [f"serviceAccount:{email}"]
    assert any(
        i["member"] == "serviceAccount:ml-platform-prod.svc.id.goog[keda/keda-operator]"
        and i["role"] == "roles/iam.workloadIdentityUser"
        for i in _inputs(resources, "gcp:serviceaccount/iAMMember:IAMMember")
    )


def test_eks_keda_queries_the_workspace_the_collector_fills():
    resources = example("eks-serving")
    scaled = _inputs(resources, "kubernetes:keda.sh/v1alpha1:ScaledObject")[0]
    address = scaled["spec"]["triggers"][0]["metadata"]["serverAddress"]
    workspace = f"arn:aws:aps:us-east-1:123456789012:workspace/{address.rsplit('/', 1)[-1]}"
    (assoc,) = [
        i
        for i in _inputs(resources, "aws:eks/podIdentityAssociation:PodIdentityAssociation")
        if i["namespace"] == "keda"
    ]
    assert assoc["serviceAccount"] == "keda-operator"
    role = assoc["roleArn"].rsplit("/", 1)[-1]
    (policy,) = [
        json.loads(r.inputs["policy"])
        for r in resources
        if r.type == "aws:iam/rolePolicy:RolePolicy" and r.inputs["role"] in (role, f"{role}-id")
    ]
    (st,) = policy["Statement"]
    assert st["Resource"] == workspace and "aps:QueryMetrics" in st["Action"]
    assert not any(a.startswith("aps:RemoteWrite") or a == "aps:*" for a in st["Action"])
    (scraper,) = _inputs(resources, "aws:amp/scraper:Scraper")
    assert scraper["destination"]["amp"]["workspaceArn"] == workspace
    job = yaml.safe_load(scraper["scrapeConfiguration"])["scrape_configs"][0]
    assert job["kubernetes_sd_configs"] == [{"role": "pod", "namespaces": {"names": ["serving"]}}]
    relabel = {tuple(r.get("source_labels", ())): r for r in job["relabel_configs"]}
    assert relabel[("__meta_kubernetes_pod_label_app_kubernetes_io_name",)]["regex"] == "vllm"
    assert relabel[("__meta_kubernetes_namespace",)]["target_label"] == "namespace"  # the queries filter on it
    assert 'namespace="serving"' in scaled["spec"]["triggers"][0]["metadata"]["query"]


def test_eks_collector_scrapes_no_faster_than_amp_allows():
    """CreateScraper refuses a scrape interval under AMP's minimum, and every serving object waits on the collector."""
    (scraper,) = _inputs(example("eks-serving"), "aws:amp/scraper:Scraper")
    interval = yaml.safe_load(scraper["scrapeConfiguration"])["global"]["scrape_interval"]
    assert int(interval.rstrip("s")) >= int(cloud_limit("aws-amp-scraper-min-scrape-interval").value) == 30


def test_a_scrape_interval_amp_refuses_is_refused_with_its_source():
    with pytest.raises(ValueError, match=r"15 s is below 30 s: .*AMP-collector-how-to"):
        amp_scrape_config("serving", 15)
    assert "scrape_interval: 60s" in amp_scrape_config("serving", 60)


def test_eks_creates_no_second_access_entry_for_the_collectors_role():
    """AMP creates the scraper role's access entry itself on an API-mode cluster; EKS refuses a second entry for the
    same principal, so only the administrators' entries are the stack's."""
    resources = example("eks-serving")
    entries = [r for r in resources if r.type == "aws:eks/accessEntry:AccessEntry"]
    assert not [r for r in entries if "collector" in r.name]
    assert not _inputs(resources, "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding")


@pytest.mark.parametrize("stack", ["gke-serving", "eks-serving"])
def test_keda_reads_only_this_clusters_vllm_series(stack):
    """GMP answers for the whole project and an AMP workspace may be shared: another cluster's serving/chat must not
    inflate the signals, so every query matches this cluster's name, and on EKS the collector sets that label."""
    from tests.render.test_serving_render import _plan

    cluster = _plan(stack).cluster.name
    resources = example(stack)
    for scaled in _inputs(resources, "kubernetes:keda.sh/v1alpha1:ScaledObject"):
        for t in scaled["spec"]["triggers"]:
            assert f'cluster="{cluster}",' in t["metadata"]["query"], t["name"]
    for scraper in _inputs(resources, "aws:amp/scraper:Scraper"):
        job = yaml.safe_load(scraper["scrapeConfiguration"])["scrape_configs"][0]
        assert {"target_label": "cluster", "replacement": cluster} in job["relabel_configs"]
