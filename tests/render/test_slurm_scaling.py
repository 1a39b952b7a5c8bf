"""Slurm pools that follow the queue (stacks/plan/slurm_scaling.py): which pools scale, the power-saving directives,
the CLOUD records, the NodeSet replicas at deploy and the rendered Resume/SuspendProgram."""

from __future__ import annotations

import subprocess

import pytest

from components.slurm.scaling import cloud_nodes_script
from render.slurm_values import slurm_values
from tests.stacks.plan.test_slurm_plan import plan_of
from tests.support.spec.edit import edits
from tests.support.slurm.configs import GKE_NO_ACCOUNTING, slurm_configs

MIXED = edits(
    GKE_NO_ACCOUNTING,
    {
        "nodePools[1].minNodes": 1,
        "nodePools[1].maxNodes": 4,
        "scheduling.slurm.scaling": {"idleMinutes": 15, "resumeTimeoutMinutes": 30},
    },
)


def test_only_pools_with_a_range_scale_and_fixed_pools_are_never_suspended():
    plan = plan_of(MIXED)
    assert plan.scaling.pools == (("l4", 1, 4),)
    assert {k: v for k, v in plan.directives.items() if k.startswith(("Suspend", "Resume"))} == {
        "ResumeProgram": "/usr/local/lib/gpu-cluster/slurm-resume",
        "SuspendProgram": "/usr/local/lib/gpu-cluster/slurm-suspend",
        "SuspendTime": "900",
        "SuspendTimeout": "300",
        "ResumeTimeout": "1800",
        "SuspendExcParts": "h100",
        "SuspendExcNodes": "l4:1",
    }
    assert [(n.pool, n.pods_at_deploy, n.replicas) for n in plan.nodesets] == [("h100", 6, 6), ("l4", 1, 4)]
    assert plan.scaling.cloud_nodes(plan.nodesets) == [
        [
            "scontrol",
            "create",
            "NodeName=l4-[1-3]",
            "Features=l4",
            "CPUs=6",
            "Gres=gpu:l4:1",
            "RealMemory=26624",
            "State=CLOUD",
        ]
    ]


@pytest.mark.parametrize("config", [GKE_NO_ACCOUNTING, edits(MIXED, {"scheduling.slurm.scaling.enabled": False})])
def test_no_scaling_pool_no_power_saving_and_every_nodeset_at_max(config):
    plan = plan_of(config)
    assert plan.scaling.pools == () and not any(k.startswith(("Suspend", "Resume")) for k in plan.directives)
    assert all(n.pods_at_deploy == n.replicas for n in plan.nodesets)
    values = slurm_values(plan, "c")
    assert "podSpec" not in values["controller"] and "slurmctld" not in values["controller"]


def test_the_controller_gets_the_programs_and_the_scaler_account():
    values = slurm_values(plan_of(MIXED), "c")
    assert values["nodesets"]["l4"]["replicas"] == 1 and values["nodesets"]["h100"]["replicas"] == 6
    assert values["controller"]["podSpec"] == {
        "serviceAccountName": "slurm-scaler",
        "volumes": [
            {"name": "scaling-programs", "configMap": {"name": "slurm-scaling-programs", "defaultMode": 0o555}}
        ],
    }
    assert values["controller"]["slurmctld"] == {
        "volumeMounts": [{"name": "scaling-programs", "mountPath": "/usr/local/lib/gpu-cluster", "readOnly": True}]
    }


def test_the_programs_are_valid_shell_and_know_each_pools_floor():
    plan = plan_of(slurm_configs()["gke-h100-512"])
    scaling = plan.scaling
    for script in (
        scaling.resume_script(),
        scaling.suspend_script(),
        cloud_nodes_script(scaling.cloud_nodes(plan.nodesets)),
    ):
        assert script.startswith("#!/bin/sh\n")
        assert subprocess.run(["sh", "-n"], input=script, text=True).returncode == 0
    assert "    l4-eval) echo 0 ;;\n" in scaling.resume_script() and "h100-mega)" not in scaling.resume_script()
    assert "/nodesets/slurm-worker-$1/scale" in scaling.suspend_script()


def test_the_programs_use_only_what_the_slurmctld_image_has_and_no_inherited_environment():
    """The slurmctld image has socat and no curl, and slurmctld hands the programs SLURM_CONF and SLURM_RESUME_FILE
    only (docs/slurm.md); the requests themselves run for real in test_slurm_scaling_programs_real.py."""
    scaling = plan_of(MIXED).scaling
    for script in (scaling.resume_script(), scaling.suspend_script()):
        code = "\n".join(ln for ln in script.splitlines() if not ln.lstrip().startswith("#"))
        assert "curl" not in code and "KUBERNETES_SERVICE" not in code
        assert "\nPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; export PATH\n" in script
        assert (
            'socat -T 30 STDIO,ignoreeof "OPENSSL:$API,cafile=$SA/ca.crt,commonname=kubernetes.default.svc"'
        ) in script
        assert "\nAPI=kubernetes.default.svc:443\n" in script and "HTTP/1.0" in script
