"""The rendered Resume/SuspendProgram's Kubernetes API client, for real: the programs run in the Slurm root with the
environment slurmctld gives them (``SLURM_CONF`` only: ``env -i``) and talk HTTPS through the root's ``socat``, as
in the slurmctld image (which has socat and no curl: docs/slurm.md), to a stand-in API server
(``tests/support/kube/fake_api.py``) with a certificate for ``kubernetes.default.svc``. Only the address and the
service-account directory are swapped for the test's. The full power-saving loop with a real slurmctld running these
programs is ``test_slurm_scaling_real.py``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from stacks.plan.slurm_scaling import NODESET_PREFIX
from tests.stacks.plan.test_slurm_plan import plan_of
from tests.render.test_slurm_real import chroot  # noqa: F401 (fixture)
from tests.render.test_slurm_scaling_real import SCALING
from tests.support.kube.fake_api import L4, NAMESPACE, FakeKubeApi, make_pki, programs_for, service_account
from tests.support.slurm.root import Chroot


@pytest.fixture
def api(tmp_path: Path, chroot: Chroot):  # noqa: F811
    make_pki(tmp_path / "pki", "kubernetes.default.svc")
    server = FakeKubeApi(tmp_path / "pki", NAMESPACE, {L4: 1, f"{NODESET_PREFIX}h100": 6}, netns=chroot.netns)
    yield server
    server.stop()


class Run:
    def __init__(self, chroot: Chroot, api: FakeKubeApi, token: str | None = None):  # noqa: F811
        self.chroot, self.api = chroot, api
        self.sa = service_account(chroot, api, "kube-sa", token)
        self.programs = programs_for(plan_of(SCALING).scaling, api, self.sa.inside)
        self.sa.write("slurm.conf", "ClusterName=scaling\nSlurmctldHost=localhost\n")  # scontrol show hostnames

    def __call__(self, program: str, hosts: str) -> subprocess.CompletedProcess:
        self.sa.write(program, self.programs[program], 0o755)
        return subprocess.run(
            [
                *self.chroot.prefix(),
                "chroot",
                str(self.chroot.root),
                "env",
                "-i",
                f"SLURM_CONF={self.sa.inside}/slurm.conf",
                f"{self.sa.inside}/{program}",
                hosts,
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )


def test_resume_raises_replicas_through_the_api_and_restarts_a_kept_nodes_pod(chroot, api):  # noqa: F811
    run = Run(chroot, api)
    try:
        out = run("slurm-resume", "l4-[2-3]")
        assert out.returncode == 0, out.stdout + out.stderr
        scale = f"/apis/slinky.slurm.net/v1beta1/namespaces/{NAMESPACE}/nodesets/{L4}/scale"
        assert api.calls == [
            ("GET", scale, ""),
            ("PATCH", scale, '{"spec":{"replicas":3}}'),
            ("GET", scale, ""),
            ("PATCH", scale, '{"spec":{"replicas":4}}'),
        ]
        assert api.replicas[L4] == 4 and "NodeSet slurm-worker-l4 replicas=4" in out.stdout
        # l4-1 is below the replicas: its pod still runs, so it is restarted rather than scaling
        out = run("slurm-resume", "l4-1")
        assert out.returncode == 0, out.stdout + out.stderr
        assert api.calls[4:] == [("GET", scale, ""), ("DELETE", f"/api/v1/namespaces/{NAMESPACE}/pods/{L4}-1", "")]
        assert api.replicas == {L4: 4, f"{NODESET_PREFIX}h100": 6} and api.errors == []
    finally:
        run.sa.remove()


def test_a_refused_read_fails_the_program_and_never_scales_down(chroot, api):  # noqa: F811
    run = Run(chroot, api, token="not-the-token")
    try:
        out = run("slurm-resume", "l4-3")
        assert out.returncode != 0 and "HTTP 401" in out.stderr, out.stdout + out.stderr
        assert api.replicas[L4] == 1 and not [c for c in api.calls if c[0] == "PATCH"]
    finally:
        run.sa.remove()


def test_a_server_whose_certificate_does_not_name_the_api_server_is_refused(chroot, tmp_path):  # noqa: F811
    make_pki(tmp_path / "other", "other.example")
    impostor = FakeKubeApi(tmp_path / "other", NAMESPACE, {L4: 1}, netns=chroot.netns)
    run = Run(chroot, impostor)
    try:
        out = run("slurm-resume", "l4-3")
        assert out.returncode != 0, out.stdout + out.stderr
        assert impostor.calls == [] and impostor.replicas[L4] == 1  # no request got past the TLS handshake
    finally:
        run.sa.remove()
        impostor.stop()


def test_the_stand_in_catches_a_client_that_half_closes_before_the_answer(chroot, api):  # noqa: F811
    """Without ``ignoreeof`` socat shuts its sending side at the end of the request: the real API server cancels
    such a request, so must the stand-in (else the programs' check would prove nothing)."""
    sa = service_account(chroot, api, "kube-sa-halfclose")
    try:
        request = f"GET /apis/x HTTP/1.0\r\nAuthorization: Bearer {api.token}\r\n\r\n"
        out = subprocess.run(
            [
                *chroot.prefix(),
                "chroot",
                str(chroot.root),
                "socat",
                "-T",
                "10",
                "STDIO",
                f"OPENSSL:127.0.0.1:{api.port},cafile={sa.inside}/ca.crt,commonname=kubernetes.default.svc",
            ],
            input=request,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert "HTTP/" not in out.stdout and api.calls == []
        assert api.errors == ["GET /apis/x: the client closed its side before the answer"]
    finally:
        sa.remove()
