"""security-privileged-images-by-digest: every privileged or host-level container (privileged, host namespaces, a
capability beyond baseline, a writable host path) and every secret-holding container (a Secret mounted or read into
its env, an emptyDir a container holding a Secret writes, or a key a chart's operator hands it: Slinky's slurmctld,
slurmdbd, slurmrestd, login) runs an image pinned
by digest (Checkov CKV_K8S_43 asks it of every container; this rule asks it where a moved tag means root on the node
or the key in someone else's hands, and reads Helm charts' defaults too).

A digest is a literal ``@sha256:<64 hex>``, or, offline only, ``DEPLOY_DIGEST`` on exactly an image
``catalog/data/image-digests.csv`` resolves from its registry at deploy (the offline preview cannot know that digest;
a real ``pulumi preview``/``up`` sees the one the registry returned)."""

from __future__ import annotations

from typing import Iterable

from pulumi_policy import EnforcementLevel, Severity

from policies.findings import Finding, listing
from policies.helm_values import subject_of
from policies.host_images import WORKLOAD_TYPES, seen_host_containers, seen_secret_containers
from policies.resources import HELM_RELEASE
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule
from policies.values import as_dict

ID = "security-privileged-images-by-digest"


def _subject(r: Resource) -> tuple[str, tuple[str, ...]]:
    if r.type == HELM_RELEASE:
        return subject_of(r)
    meta = as_dict(r.props.get("metadata"))
    name: str = meta["name"] if isinstance(meta.get("name"), str) else r.name
    return f"{r.type.rsplit(':', 1)[-1]} '{name}'", (name, r.name, r.urn)


def check(r: Resource, cfg: Config) -> Iterable[Finding]:
    host = [s for s in seen_host_containers(r.type, r.props) if not s.container.by_digest]
    held = [s for s in seen_secret_containers(r.type, r.props) if not s.container.by_digest]
    tagged = host + [
        s for s in held if (s.where, s.container.container) not in {(h.where, h.container.container) for h in host}
    ]
    if not tagged:
        return
    subject, keys = _subject(r)
    shown = [
        f"{s.where} {s.container.container} {s.container.image} ({', '.join(s.container.reasons)})" for s in tagged
    ]
    images = sorted({s.container.image for s in tagged})
    if not held:
        what, required = (
            "host-level containers run images pinned by tag only, so whoever can move the tag runs "
            "code as root on the node",
            "every privileged or host-level container's image",
        )
    else:
        gain = "reads the keys they hold" if not host else "runs code as root on the node or reads the keys they hold"
        what, required = (
            f"host-level or secret-holding containers run images pinned by tag only, so whoever can "
            f"move the tag {gain}",
            "every privileged, host-level or secret-holding container's image",
        )
    yield Finding(
        subject,
        what,
        observed=listing(shown, 6),
        required=f"{required} as <repository>[:tag]@sha256:<digest>",
        fix=f"pin {listing(images, 4)} by digest: write <repository>:<tag>@sha256:<digest> (crane digest "
        "<image>), or list the image in catalog/data/image-digests.csv with a digest an upstream "
        "manifest pins at a commit, or with none to have gpu-cluster resolve it from the registry at "
        "deploy",
        keys=keys,
    )


RULE = register(
    Rule(
        id=ID,
        title="Privileged images by digest",
        category=Category.SECURITY,
        checkov="CKV_K8S_43",
        description=(
            "Containers that run privileged, share a host namespace, add a capability beyond Pod Security "
            "baseline or write a host path, and containers that hold a Secret, run images pinned by sha256 "
            "digest."
        ),
        why=(
            "Such a container is root on the node: it loads kernel modules, rewrites containerd's configuration, "
            "reads every pod's volumes. A container holding a Secret (Slurm's slurm.key acts as any Slurm user, the "
            "JWT key mints tokens, a database password owns the accounting data) leaks it to whatever image runs. "
            "A tag can be moved to other bytes by anyone who can push to the repository or "
            "compromises it; a digest cannot. gpu-cluster pins the vendor images it runs host-level itself "
            "(catalog/data/image-digests.csv): a digest an upstream manifest cites, or the digest the registry returns "
            "for the pinned tag at deploy (the Docker provider's getRegistryImage during pulumi preview/up); the offline "
            "preview shows the latter as 'digest resolved from <registry> at deploy'."
        ),
        remediation=(
            "1. Write <repository>:<tag>@sha256:<digest> (Helm: the chart's digest, tag or version value; "
            "resolve it with crane digest or docker buildx imagetools inspect), or 2. add the image to "
            "catalog/data/image-digests.csv with a cited digest, or with none so that gpu-cluster resolves the "
            "tag from the registry at deploy."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(*WORKLOAD_TYPES, HELM_RELEASE),
        check=check,
    ),
    order=4185,
)
