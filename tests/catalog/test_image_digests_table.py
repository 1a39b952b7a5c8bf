"""catalog/data/image-digests.csv: every row names exactly an image gpu-cluster pins (a version bump without the
table fails here), a cited digest is a sha256 digest with a source naming a commit, a row without one says why and
is resolved at deploy, and the offline stand-in counts only for those rows."""

from __future__ import annotations

import re

from catalog.fabric import load_fabric_catalog
from catalog.host_images import load_chart_host_images, load_chart_secret_images
from components.charts import SLURM_CLIENT_IMAGE
from catalog.image_digests import DEPLOY_DIGEST, digest_row, load_image_digests, resolved_at_deploy
from catalog.images import load_chart_operands, load_image_table
from catalog.serving import VLLM_IMAGE
from render.slurm_backup import UPLOAD_IMAGE
from render.slurm_login import INITCONF_IMAGE
from render.slurm_values import LOGFILE_IMAGE
from render.trainer import TORCH_IMAGE
from stacks.plan.host_access import by_digest

SHA256 = re.compile(r"^sha256:[0-9a-f]{64}$")


def pinned_images() -> set[str]:
    fab = load_fabric_catalog()
    out = {i.reference for i in fab.images.values()}
    out |= {r.default_image for r in load_chart_host_images()}
    out |= {o.image for o in load_chart_operands()}
    out |= {TORCH_IMAGE}  # the Trainer runtimes' default, host-level on TCPX/TCPXO pools
    out |= {r.default_image for r in load_chart_secret_images()}
    out |= {SLURM_CLIENT_IMAGE}  # the Slurm client Jobs hold slurm.key
    out |= {f"{i['repository']}:{i['tag']}" for i in (LOGFILE_IMAGE, INITCONF_IMAGE)}  # over the chart's alpine:latest
    out |= set(UPLOAD_IMAGE.values()) | {VLLM_IMAGE}  # the backup uploader reads the dump; both run as cloud identities
    return out


def test_every_row_is_an_image_gpu_cluster_pins_by_that_tag():
    pinned = pinned_images()
    for row in load_image_digests().values():
        assert row.image in pinned, f"{row.image}: not pinned anywhere (a version bump must update the row)"
        assert ":" in row.image.rsplit("/", 1)[-1] and "@" not in row.image, row.image


def test_cited_digests_are_sha256_with_a_commit_and_the_rest_say_why():
    rows = list(load_image_digests().values())
    assert {r.at_deploy for r in rows} == {True, False}
    for row in rows:
        if row.digest:
            assert SHA256.match(row.digest), row
            assert re.search(r"@[0-9a-f]{8,40}\b", row.source), f"{row.image}: the source names no commit"
        else:
            # an upstream manifest is the only source cited: third-party pins of a tag do not count; a source that
            # pins it but is not staged here says so ("not cited (...)")
            assert row.source.startswith("deploy: ") and re.search(
                r"no (public source|upstream manifest) pins this tag by digest|^deploy: not cited \(.+\)", row.source
            ), row


def test_every_host_level_chart_default_has_a_row():
    """The images the charts run host-level by default (catalog/data/host-level-images.csv), except the driver the
    GPU Operator never runs here (gpu-cluster turns it off), have a digest or are resolved at deploy."""
    missing = {r.default_image for r in load_chart_host_images()} - set(load_image_digests())
    assert missing == {"nvcr.io/nvidia/driver:595.91.07"}


def test_every_secret_holding_image_gpu_cluster_runs_has_a_row():
    """The key holders run by digest: the slurm chart's defaults for slurmctld, slurmrestd, slurmdbd, login and
    slurmd, the Slurm client Jobs' image and the Alpine release the values put over the chart's ``alpine:latest``
    (the login initconf copying slurm.key; the log sidecars) each have a row, resolved at deploy."""
    held = {r.default_image for r in load_chart_secret_images()} - {"docker.io/library/alpine:latest"}
    held |= {SLURM_CLIENT_IMAGE, f"{INITCONF_IMAGE['repository']}:{INITCONF_IMAGE['tag']}"}
    rows = load_image_digests()
    assert held <= set(rows), sorted(held - set(rows))
    assert all(rows[i].at_deploy for i in held)


def test_the_stand_in_counts_only_for_rows_resolved_at_deploy():
    slurmd = digest_row("ghcr.io/slinkyproject/slurmd:26.05-ubuntu26.04")
    plugin = digest_row("nvcr.io/nvidia/k8s-device-plugin:v0.20.0")
    assert slurmd is not None and slurmd.at_deploy and plugin is not None and not plugin.at_deploy
    assert resolved_at_deploy(f"{slurmd.image}@{DEPLOY_DIGEST}")
    assert resolved_at_deploy(f"{slurmd.repository}@{DEPLOY_DIGEST}")  # the Slinky chart drops the tag
    assert not resolved_at_deploy(f"{plugin.image}@{DEPLOY_DIGEST}")  # cited: the stand-in is not accepted
    assert not resolved_at_deploy(f"ghcr.io/slinkyproject/slurmd:25.11-ubuntu24.04@{DEPLOY_DIGEST}")
    assert not resolved_at_deploy(slurmd.image)
    assert by_digest(f"{plugin.image}@{plugin.digest}") and not by_digest(f"{plugin.image}@{DEPLOY_DIGEST}")
    assert slurmd.pin_text() == "digest resolved from ghcr.io at deploy"


def test_architectures_of_a_digest_pinned_tag_are_the_tags():
    """topology-arm64-images looks the pinned form up by its tag: the cited digest, or any digest on a tag resolved
    at deploy (what the registry returned for it; the Slinky chart drops the tag); another digest is unknown."""
    table = load_image_table()
    plugin = digest_row("nvcr.io/nvidia/k8s-device-plugin:v0.20.0")
    assert plugin is not None and table.lookup(f"{plugin.image}@{plugin.digest}") == table.lookup(plugin.image)
    assert table.lookup(f"{plugin.image}@sha256:{'a' * 64}") is None
    slurmd = table.lookup("ghcr.io/slinkyproject/slurmd:26.05-ubuntu26.04")
    assert slurmd is not None and table.lookup(f"ghcr.io/slinkyproject/slurmd@sha256:{'a' * 64}") == slurmd
    assert table.lookup(f"ghcr.io/slinkyproject/slurmd@{DEPLOY_DIGEST}") == slurmd
