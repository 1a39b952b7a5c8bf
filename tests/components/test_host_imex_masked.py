"""EKS nodes whose IMEX runs in ComputeDomain daemons get the AMI's host ``nvidia-imex.service`` masked by their
launch template's user data (NVIDIA DRA driver prerequisites: disable and mask it), and other GPU nodes keep it.
The script part runs under a real ``sh`` with a stand-in ``systemctl``."""

from __future__ import annotations

import base64
import email
import os
import subprocess
from pathlib import Path

from tests.support.helm.examples import recording
from tests.support.preview.recorded import of_type

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


def _parts(stack: str, template: str) -> dict[str, str]:
    """Content type -> body of the launch template's MIME user data (the bodies of several parts of one type joined,
    e.g. the IMEX mask and the device plugin's toolkit lockdown, both shell scripts)."""
    (lt,) = [r for r in of_type(recording(stack), LAUNCH_TEMPLATE) if r.name == template]
    msg = email.message_from_string(base64.b64decode(lt.inputs["userData"]).decode())
    assert msg.is_multipart()
    parts: dict[str, str] = {}
    for part in msg.get_payload():
        parts[part.get_content_type()] = parts.get(part.get_content_type(), "") + part.get_payload()
    return parts


def test_p6e_user_data_masks_the_host_imex_service_next_to_the_nodeadm_config():
    parts = _parts("eks-p6e-gb200", "gb200-lt")
    assert sorted(parts) == ["application/node.eks.aws", "text/x-shellscript"]
    assert "strategy: RAID0" in parts["application/node.eks.aws"]  # nodeadm's part is unchanged
    assert "systemctl mask nvidia-imex.service" in parts["text/x-shellscript"]


def _scripts(stack: str, template: str) -> list[str]:
    """The shell-script parts of the launch template's user data, each whole."""
    (lt,) = [r for r in of_type(recording(stack), LAUNCH_TEMPLATE) if r.name == template]
    msg = email.message_from_string(base64.b64decode(lt.inputs["userData"]).decode())
    return [p.get_payload() for p in msg.get_payload() if p.get_content_type() == "text/x-shellscript"]


def _run(script: str, tmp_path: Path, unit_exists: bool) -> tuple[int, list[str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "calls.log"
    log.write_text("")
    # systemctl stand-in: records its arguments; stop/disable fail as on an AMI without the unit
    fail = "" if unit_exists else 'case "$1" in stop|disable) echo "Unit $2 not loaded." >&2; exit 5;; esac\n'
    (bin_dir / "systemctl").write_text(f'#!/bin/sh\necho "$*" >> {log}\n{fail}exit 0\n')
    (bin_dir / "systemctl").chmod(0o755)
    (tmp_path / "mask.sh").write_text(script)
    out = subprocess.run(
        ["sh", str(tmp_path / "mask.sh")],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"},
    )
    return out.returncode, log.read_text().splitlines()


def test_the_mask_script_stops_disables_and_masks_whether_or_not_the_ami_ships_the_unit(tmp_path):
    (script,) = [p for p in _scripts("eks-p6e-gb200", "gb200-lt") if "nvidia-imex.service" in p]
    for exists in (True, False):
        rc, calls = _run(script, tmp_path, exists)
        assert rc == 0, calls
        assert calls == ["stop nvidia-imex.service", "disable nvidia-imex.service", "mask nvidia-imex.service"]


def test_gpu_nodes_without_compute_domains_keep_the_host_imex_service():
    for r in of_type(recording("eks-p5-efa"), LAUNCH_TEMPLATE):
        user_data = r.inputs.get("userData")
        if user_data:
            assert "nvidia-imex" not in base64.b64decode(user_data).decode(), r.name
