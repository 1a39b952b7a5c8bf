"""Queued pools in the rendered Kueue objects: a ProvisioningRequestConfig and AdmissionCheck per queued pool with
the cloud's class, attached to the ClusterQueues with quota there on that pool's flavor only; topology-aware
placement on the autoscaled queued pool; GKE's queued taint tolerated. (CRD validation of every object:
``test_scheduling_schemas.py``, which renders the same specs.)"""

from __future__ import annotations

from preview.engine import PROJECT_ROOT, read_stack_file
from render.kueue import render_kueue
from render.trainer import training_runtimes
from tests.support.kube.crd_schemas import schema_errors
from tests.support.spec.edit import DELETE, edit
from tests.support.spec.scheduling_fixtures import EKS_QUEUED, GKE_TEAMS, spec_and_facts
from stacks.validate.load import decode_config

QUEUED_TOLERATION = {"key": "cloud.google.com/gke-queued", "operator": "Exists", "effect": "NoSchedule"}


def _render(raw):
    spec, facts = spec_and_facts(raw)
    return render_kueue(spec.scheduling, facts), facts


def _example():
    return _render(decode_config(read_stack_file(PROJECT_ROOT / "Pulumi.gke-flex-start-tas.yaml")))


def test_gke_flex_start_pool_gets_a_queued_provisioning_check_on_every_queue_with_quota():
    objects, _ = _example()
    flavor = objects.flavor_names()["h100-flex"]
    assert [c["spec"] for c in objects.provisioning_configs] == [
        {
            "provisioningClassName": "queued-provisioning.gke.io",
            "managedResources": ["nvidia.com/gpu"],
            "parameters": {"maxRunDurationSeconds": "259200"},
        }
    ]  # maxRunHours: 72
    assert [(c["metadata"]["name"], c["spec"]) for c in objects.admission_checks] == [
        (
            "h100-flex-provisioning",
            {
                "controllerName": "kueue.x-k8s.io/provisioning-request",
                "parameters": {
                    "apiGroup": "kueue.x-k8s.io",
                    "kind": "ProvisioningRequestConfig",
                    "name": "h100-flex-provisioning",
                },
            },
        )
    ]
    for cq in objects.cluster_queues:
        assert cq["spec"]["admissionChecksStrategy"] == {
            "admissionChecks": [{"name": "h100-flex-provisioning", "onFlavors": [flavor]}]
        }, cq["metadata"]["name"]
    kinds = [o["kind"] for o in objects.custom_resources()]
    assert kinds.index("ProvisioningRequestConfig") < kinds.index("AdmissionCheck") < kinds.index("ClusterQueue")


def test_tas_places_gangs_on_the_autoscaled_queued_pool():
    objects, facts = _example()
    where = objects.placements["h100-flex"]
    assert where.topology == "zone-host"  # A3 High without compact placement: no block labels
    assert where.annotation == ("kueue.x-k8s.io/podset-required-topology", "topology.kubernetes.io/zone")
    flavor = objects.flavors[0]
    assert flavor["spec"]["topologyName"] == objects.topologies[0]["metadata"]["name"]
    assert QUEUED_TOLERATION in flavor["spec"]["tolerations"]
    runtime = training_runtimes(facts, objects.placements)[0]
    pod = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert pod["metadata"]["annotations"]["kueue.x-k8s.io/podset-required-topology"] == "topology.kubernetes.io/zone"
    assert QUEUED_TOLERATION in pod["spec"]["tolerations"]


def test_without_queued_provisioning_the_same_pool_gets_no_check_and_no_tas():
    raw = decode_config(read_stack_file(PROJECT_ROOT / "Pulumi.gke-flex-start-tas.yaml"))
    raw = edit(edit(raw, "nodePools[0].capacity.queuedProvisioning", False), "scheduling.topology.mode", "preferred")
    objects, _ = _render(raw)
    assert objects.provisioning_configs == objects.admission_checks == []
    assert all("admissionChecksStrategy" not in cq["spec"] for cq in objects.cluster_queues)
    assert objects.placements["h100-flex"].topology is None
    assert QUEUED_TOLERATION not in objects.flavors[0]["spec"]["tolerations"]


def test_eks_queued_pool_uses_the_atomic_scale_up_class_and_keeps_block_labels():
    objects, _ = _render(EKS_QUEUED)
    assert [c["spec"] for c in objects.provisioning_configs] == [
        {
            "provisioningClassName": "best-effort-atomic-scale-up.autoscaling.x-k8s.io",
            "managedResources": ["nvidia.com/gpu"],
        }
    ]
    p5 = objects.flavor_names()["p5"]
    by_name = {cq["metadata"]["name"]: cq["spec"] for cq in objects.cluster_queues}
    assert by_name["pretraining"]["admissionChecksStrategy"] == {
        "admissionChecks": [{"name": "p5-provisioning", "onFlavors": [p5]}]
    }
    assert "admissionChecksStrategy" not in by_name["eval"]  # no quota on the queued pool: no check
    assert objects.placements["p5"].annotation == (
        "kueue.x-k8s.io/podset-required-topology",
        "topology.k8s.aws/network-node-layer-2",
    )
    assert all(t["key"] != "cloud.google.com/gke-queued" for t in objects.flavors[0]["spec"]["tolerations"])


def test_fixed_pools_render_no_provisioning_objects():
    objects, _ = _render(GKE_TEAMS)
    assert objects.provisioning_configs == objects.admission_checks == []


def test_the_crd_schemas_refuse_a_broken_check_and_config():
    objects, _ = _example()
    check, config = objects.admission_checks[0], objects.provisioning_configs[0]
    assert schema_errors(check) == [] and schema_errors(config) == []
    assert schema_errors(edit(check, "spec.controllerName", DELETE)) == [
        "spec: 'controllerName' is a required property"
    ]
    assert any("provisioningClass" in e for e in schema_errors(edit(config, "spec.provisioningClass", "x")))
    assert any(
        "maxRunDurationSeconds" in e
        for e in schema_errors(edit(config, "spec.parameters.maxRunDurationSeconds", 259200))
    )  # parameters are strings
