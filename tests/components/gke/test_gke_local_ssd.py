"""A3 High/Mega pools back ephemeral storage with their 16 local SSDs by default; false keeps the boot disk; other
machines and EKS refuse the setting with the exact message."""

from __future__ import annotations

import copy
import textwrap

import pytest

from preview.engine import run_program
from tests.support.spec.edit import edits
from tests.support.preview.recorded import one
from tests.support.spec.stack_configs import GKE
from stacks.validate.issues import SpecError
from stacks.validate.load import decode_config, load_spec

NODE_POOL = "gcp:container/nodePool:NodePool"


def test_a3_pools_use_their_local_ssds_for_ephemeral_storage_by_default():
    nc = one(run_program(GKE), NODE_POOL, "h100").inputs["nodeConfig"]
    assert nc["ephemeralStorageLocalSsdConfig"] == {"localSsdCount": 16}


def test_false_keeps_the_boot_disk_and_other_machines_never_get_it():
    nc = one(run_program(edits(GKE, {"nodePools[0].localSsdEphemeralStorage": False})), NODE_POOL, "h100").inputs[
        "nodeConfig"
    ]
    assert "ephemeralStorageLocalSsdConfig" not in nc
    l4 = edits(GKE, {"nodePools[0].machineType": "g2-standard-24", "nodePools[0].multiNode": False})
    assert "ephemeralStorageLocalSsdConfig" not in one(run_program(l4), NODE_POOL, "h100").inputs["nodeConfig"]


def test_true_on_a_machine_without_local_ssds_is_refused():
    raw = decode_config(
        edits(
            GKE,
            {
                "nodePools[0].machineType": "g2-standard-24",
                "nodePools[0].multiNode": False,
                "nodePools[0].localSsdEphemeralStorage": True,
            },
        )
    )
    with pytest.raises(SpecError) as exc:
        load_spec(copy.deepcopy(raw))
    assert [str(e) for e in exc.value.errors] == [
        textwrap.dedent("""\
        error: gpu-cluster:nodePools[0].localSsdEphemeralStorage: pool 'h100': g2-standard-24 comes with no local SSDs to back ephemeral storage
          received: true
          allowed:  machine types with local SSDs: a3-highgpu-8g, a3-megagpu-8g
          fix:      remove localSsdEphemeralStorage, or pick a machine type with local SSDs""")
    ]
