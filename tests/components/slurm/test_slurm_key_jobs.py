"""Every Job any Slurm stack registers that mounts ``slurm.key`` (the accounts Job, the CLOUD-records Job; the
pinned slurm and slurm-operator charts render no Job) runs as the slurm user, non-root, without privilege
escalation or capabilities, under seccomp ``RuntimeDefault``, with the key read-only for owner and group, and is
deleted ``ttlSecondsAfterFinished`` after it ends. ``test_slurm_real.py`` runs the accounts script as the slurm user
with the key mounted that way against a real slurmdbd."""

from __future__ import annotations

import functools

import pytest

from preview.engine import Recording, run_program
from render.slurm_jobs import KEY_FILE_MODE, KEY_JOB_TTL_SECONDS, SLURM_UID
from render.slurm_values import SecretRefs
from tests.support.slurm.configs import slurm_configs

CONFIGS = slurm_configs()
KEY_SECRET = SecretRefs().slurm_key


@functools.cache
def _recording(name: str) -> Recording:
    return run_program(CONFIGS[name])


def _key_items(pod: dict) -> list[dict]:
    """The slurm.key items the pod's volumes project or mount, with their modes."""
    out = []
    for volume in pod.get("volumes", []):
        sources = [volume] if "secret" in volume else volume.get("projected", {}).get("sources", [])
        for source in sources:
            secret = source.get("secret")
            if secret and secret.get("secretName", secret.get("name")) == KEY_SECRET:
                out += secret.get("items") or [{"key": "*", "mode": secret.get("defaultMode")}]
    return out


def _key_jobs(rec: Recording) -> list:
    return [
        r
        for r in rec.resources
        if r.type == "kubernetes:batch/v1:Job" and _key_items(r.inputs["spec"]["template"]["spec"])
    ]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_jobs_holding_the_slurm_key_run_as_the_slurm_user_locked_down(name):
    jobs = _key_jobs(_recording(name))
    for job in jobs:
        spec = job.inputs["spec"]
        pod = spec["template"]["spec"]
        assert spec["ttlSecondsAfterFinished"] == KEY_JOB_TTL_SECONDS, job.name
        assert pod["automountServiceAccountToken"] is False, job.name
        security = pod["securityContext"]
        assert (security["runAsUser"], security["runAsGroup"], security["fsGroup"]) == (SLURM_UID,) * 3, job.name
        assert security["runAsNonRoot"] is True and security["seccompProfile"] == {"type": "RuntimeDefault"}
        for container in pod["containers"] + pod.get("initContainers", []):
            c = container["securityContext"]
            assert c["allowPrivilegeEscalation"] is False and c.get("privileged") is False, job.name
            assert c["capabilities"] == {"drop": ["ALL"]}, job.name
            assert "runAsUser" not in c or c["runAsUser"] == SLURM_UID, job.name
        assert [i["mode"] for i in _key_items(pod)] == [KEY_FILE_MODE], job.name


def test_the_stacks_above_do_render_key_jobs_so_the_check_has_teeth():
    names = {j.name for name in CONFIGS for j in _key_jobs(_recording(name))}
    assert {"slurm-accounts-job", "slurm-cloud-nodes-job"} <= names, names
