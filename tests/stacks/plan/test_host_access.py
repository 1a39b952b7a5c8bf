"""Which containers reach the node (stacks/plan/host_access.py): privileged, host namespaces, capabilities beyond baseline,
writable host paths; read-only host paths and baseline capabilities do not; and which read Secrets through RBAC."""

from __future__ import annotations

import pytest

from stacks.plan.host_access import (
    by_digest,
    host_containers,
    pod_specs,
    secret_holding_containers,
    secret_reading_containers,
    secret_reading_service_accounts,
)

DIGEST = "sha256:" + "a" * 64


def pod(**spec) -> dict:
    return {"containers": [{"name": "c", "image": "img:1"}], **spec}


@pytest.mark.parametrize(
    "spec, reasons",
    [
        (pod(), None),
        (pod(hostPID=True), ("hostPID",)),
        (pod(hostNetwork=True, hostIPC=True), ("hostNetwork", "hostIPC")),
        ({"containers": [{"name": "c", "image": "i", "securityContext": {"privileged": True}}]}, ("privileged",)),
        (
            {
                "containers": [
                    {"name": "c", "image": "i", "securityContext": {"capabilities": {"add": ["NET_ADMIN", "CHOWN"]}}}
                ]
            },
            ("adds NET_ADMIN",),
        ),
        (
            {
                "containers": [
                    {"name": "c", "image": "i", "securityContext": {"capabilities": {"add": ["NET_BIND_SERVICE"]}}}
                ]
            },
            None,
        ),  # baseline allows it
        (
            {
                "volumes": [{"name": "lib", "hostPath": {"path": "/home/kubernetes/bin/nvidia"}}],
                "containers": [
                    {"name": "c", "image": "i", "volumeMounts": [{"name": "lib", "mountPath": "/l", "readOnly": True}]}
                ],
            },
            None,
        ),  # reads the node, cannot change it
        (
            {
                "volumes": [{"name": "sys", "hostPath": {"path": "/sys"}}],
                "containers": [{"name": "c", "image": "i", "volumeMounts": [{"name": "sys", "mountPath": "/hs"}]}],
            },
            ("writes host path /sys",),
        ),
        (
            {
                "volumes": [{"name": "sys", "hostPath": {"path": "/sys"}}],
                "initContainers": [{"name": "c", "image": "i", "volumeMounts": [{"name": "sys", "mountPath": "/hs"}]}],
                "containers": [{"name": "main", "image": "j"}],
            },
            ("writes host path /sys",),
        ),  # init containers count
    ],
    ids=[
        "plain",
        "hostPID",
        "hostNetwork+IPC",
        "privileged",
        "NET_ADMIN",
        "baseline-cap",
        "ro-hostPath",
        "rw-hostPath",
        "init-container",
    ],
)
def test_host_level_reasons(spec, reasons):
    found = host_containers(spec)
    assert (found[0].reasons if found else None) == reasons


def test_every_container_of_a_host_namespace_pod_is_host_level():
    spec = {"hostNetwork": True, "containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:1"}]}
    assert [c.container for c in host_containers(spec)] == ["a", "b"]


@pytest.mark.parametrize(
    "image, pinned",
    [
        ("ubuntu:24.04", False),
        ("docker.io/library/ubuntu:24.04", False),
        (f"ubuntu@{DIGEST}", True),
        (f"gke.gcr.io/pause:3.8@{DIGEST}", True),
        ("repo@sha256:short", False),
        ("", False),
    ],
)
def test_by_digest(image, pinned):
    assert by_digest(image) is pinned


def test_pod_specs_of_workloads_cronjobs_and_trainer_runtimes():
    inner = {"containers": [{"name": "c", "image": "i"}]}
    assert pod_specs({"kind": "DaemonSet", "spec": {"template": {"spec": inner}}}) == [("spec.template.spec", inner)]
    assert pod_specs({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": inner}}}}}) == [
        ("spec.jobTemplate.spec.template.spec", inner)
    ]
    runtime = {
        "kind": "ClusterTrainingRuntime",
        "spec": {"template": {"spec": {"replicatedJobs": [{"template": {"spec": {"template": {"spec": inner}}}}]}}},
    }
    assert pod_specs(runtime) == [("spec.template.spec.replicatedJobs[0].template.spec.template.spec", inner)]
    assert pod_specs({"kind": "ConfigMap", "data": {}}) == []


def _release(rules: list[dict], binding: str = "ClusterRoleBinding", role: str = "ClusterRole") -> list[dict]:
    return [
        {"kind": role, "metadata": {"name": "op"}, "rules": rules},
        {
            "kind": binding,
            "metadata": {"name": "op"},
            "roleRef": {"kind": role, "name": "op"},
            "subjects": [
                {"kind": "ServiceAccount", "name": "op-sa", "namespace": "x"},
                {"kind": "User", "name": "someone"},
            ],
        },
    ]


def test_an_operator_whose_service_account_may_read_secrets_holds_them():
    """Slinky's operator mounts no Secret but reads slurm.key through the API: its containers hold the key."""
    reads = [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "watch", "create"]}]
    assert secret_reading_service_accounts(_release(reads)) == {"op-sa"}
    assert secret_reading_service_accounts(_release(reads, "RoleBinding", "Role")) == {"op-sa"}
    assert secret_reading_service_accounts(_release([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}])) == {
        "op-sa"
    }
    spec = {
        "serviceAccountName": "op-sa",
        "containers": [{"name": "manager", "image": "op:1"}],
        "initContainers": [{"name": "init", "image": "init:1"}],
    }
    held = secret_reading_containers(spec, {"op-sa"})
    assert [(c.container, c.image) for c in held] == [("init", "init:1"), ("manager", "op:1")]
    assert held[0].reasons == ("reads Secrets as ServiceAccount op-sa",)
    assert secret_reading_containers({**spec, "serviceAccountName": "other"}, {"op-sa"}) == []


def test_rights_that_do_not_read_every_secret_do_not_count():
    """Creating Secrets, reading one named Secret, or reading another group's ``secrets`` reads no key it was not
    given; a binding to a role of another release is not followed."""
    for rules in (
        [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["create", "delete"]}],
        [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"], "resourceNames": ["own-cert"]}],
        [{"apiGroups": ["example.com"], "resources": ["secrets"], "verbs": ["get"]}],
        [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}],
    ):
        assert secret_reading_service_accounts(_release(rules)) == set(), rules
    reads = [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}]
    assert secret_reading_service_accounts(_release(reads)[1:]) == set()


def test_a_container_sharing_an_emptydir_a_secret_holder_writes_holds_the_secret():
    """The Slurm backup's shape: the dump container reads the database password and writes /backup; the uploader
    that reads /backup holds what the password protects. A read-only mount by the holder writes nothing."""
    spec = {
        "volumes": [{"name": "backup", "emptyDir": {}}, {"name": "scratch", "emptyDir": {}}],
        "initContainers": [
            {
                "name": "dump",
                "image": "db:1",
                "env": [{"name": "MYSQL_PWD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "pw"}}}],
                "volumeMounts": [
                    {"name": "backup", "mountPath": "/b"},
                    {"name": "scratch", "mountPath": "/s", "readOnly": True},
                ],
            }
        ],
        "containers": [
            {"name": "upload", "image": "cli:1", "volumeMounts": [{"name": "backup", "mountPath": "/b"}]},
            {"name": "other", "image": "x:1", "volumeMounts": [{"name": "scratch", "mountPath": "/s"}]},
        ],
    }
    held = {c.container: c.reasons for c in secret_holding_containers(spec)}
    assert held == {"dump": ("env from Secret db",), "upload": ("shares emptyDir backup written by dump",)}


def test_every_container_of_a_pod_with_a_cloud_identity_holds_it():
    spec = {
        "serviceAccountName": "chat-vllm",
        "containers": [{"name": "vllm", "image": "vllm:1"}],
        "initContainers": [{"name": "fetch", "image": "x:1"}],
    }
    assert secret_holding_containers(spec) == []
    held = secret_holding_containers(spec, "reader@p.iam.gserviceaccount.com")
    assert {c.container for c in held} == {"vllm", "fetch"}
    assert held[0].reasons == ("runs as cloud identity reader@p.iam.gserviceaccount.com",)


def test_pod_specs_of_leaderworkersets_jobsets_and_trainjob_patches():
    inner = {"containers": [{"name": "c", "image": "i"}]}
    lws = {
        "kind": "LeaderWorkerSet",
        "spec": {"leaderWorkerTemplate": {"leaderTemplate": {"spec": inner}, "workerTemplate": {"spec": inner}}},
    }
    assert pod_specs(lws) == [
        ("spec.leaderWorkerTemplate.leaderTemplate.spec", inner),
        ("spec.leaderWorkerTemplate.workerTemplate.spec", inner),
    ]
    jobset = {"kind": "JobSet", "spec": {"replicatedJobs": [{"template": {"spec": {"template": {"spec": inner}}}}]}}
    assert pod_specs(jobset) == [("spec.replicatedJobs[0].template.spec.template.spec", inner)]
    trainjob = {
        "kind": "TrainJob",
        "spec": {
            "runtimePatches": [
                {
                    "trainingRuntimeSpec": {
                        "template": {
                            "spec": {"replicatedJobs": [{"template": {"spec": {"template": {"spec": inner}}}}]}
                        }
                    }
                }
            ]
        },
    }
    assert pod_specs(trainjob) == [
        (
            "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec",
            inner,
        )
    ]
