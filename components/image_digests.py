"""Pin every host-level vendor image by digest (``catalog/data/image-digests.csv``): a digest a public source cites
is written as it is; a tag no public source pins by digest is resolved to its manifest digest at deploy by the
Docker provider's ``getRegistryImage`` (pulumi-docker, the registry's ``HEAD /v2/<repo>/manifests/<tag>``), so the
objects and Helm values carry ``<repository>:<tag>@sha256:<digest>`` and what runs cannot move with the tag.

The lookup runs during ``pulumi preview`` and ``up`` (an invoke with known inputs), through one explicit Docker
provider per program that needs no Docker daemon. Public registries answer anonymously; ECR (the EKS images of
account 602401143452) gets a token from ``aws.ecr.getAuthorizationToken``. Under the offline preview's mocks the
invoke answers ``DEPLOY_DIGEST`` (``preview/engine.py``): no digest is made up.
"""

from __future__ import annotations

import functools
import re
import weakref
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_docker as docker

from catalog.host_images import chart_host_images, chart_secret_images
from catalog.images import chart_operands
from catalog.image_digests import ImageDigest, digest_row, load_image_digests

PROVIDER_NAME = "image-digests"
ECR_HOST = re.compile(r"^(?P<account>[0-9]{12})\.dkr\.ecr\.(?P<region>[a-z0-9-]+)\.amazonaws\.com$")
"""A private ECR registry: anonymous manifest reads are refused, so the provider logs in with an ECR token."""


class _Resolver:
    """One program's Docker providers (one for the public registries, one per ECR registry used) and one lookup per
    image (each image is looked up once, however often it is used)."""

    def __init__(self) -> None:
        self.providers: dict[str, docker.Provider] = {}
        self.digests: dict[str, pulumi.Output[str]] = {}

    def _provider(self, registry: str) -> docker.Provider:
        ecr = ECR_HOST.match(registry)
        key = registry if ecr else ""
        if key not in self.providers:
            auth: list[docker.ProviderRegistryAuthArgs] = []
            if ecr:  # the registry's own region: an ECR token is valid for the region it was issued in
                token = aws.ecr.get_authorization_token_output(registry_id=ecr["account"], region=ecr["region"])
                auth.append(
                    docker.ProviderRegistryAuthArgs(
                        address=registry, username=token.user_name, password=pulumi.Output.secret(token.password)
                    )
                )
            name = f"{PROVIDER_NAME}-ecr-{ecr['account']}-{ecr['region']}" if ecr else PROVIDER_NAME
            self.providers[key] = docker.Provider(name, disable_docker_daemon_check=True, registry_auth=auth)
        return self.providers[key]

    def digest(self, row: ImageDigest) -> pulumi.Output[str]:
        if row.image not in self.digests:
            self.digests[row.image] = docker.get_registry_image_output(
                name=row.image, opts=pulumi.InvokeOutputOptions(provider=self._provider(row.registry))
            ).sha256_digest
        return self.digests[row.image]


_RESOLVERS: "weakref.WeakKeyDictionary[Any, _Resolver]" = weakref.WeakKeyDictionary()


def _resolver() -> _Resolver:
    """Per program run (the engine's monitor): tests and the offline preview run several programs in one process."""
    monitor = pulumi.runtime.settings.get_monitor()
    if monitor not in _RESOLVERS:
        _RESOLVERS[monitor] = _Resolver()
    return _RESOLVERS[monitor]


def image_digest(image: str) -> pulumi.Input[str] | None:
    """The digest of a tag-pinned vendor image (``repository:tag``): cited, or resolved at deploy; None when the
    catalog does not list the image."""
    row = digest_row(image)
    if row is None:
        return None
    return row.digest or _resolver().digest(row)


def pinned(image: str) -> pulumi.Input[str]:
    """``repository:tag@sha256:…`` for a listed image; anything else as it is (already by digest, or not listed)."""
    digest = image_digest(image)
    if digest is None:
        return image
    return pulumi.Output.concat(image, "@", digest)


def resolved(image: str) -> pulumi.Input[str]:
    """``image`` by digest, for an upstream manifest fetched at deploy (Katib, Kubeflow Pipelines), whose images the
    catalog cannot list ahead: the catalog's pin when it lists the tag, else the digest the registry returns for
    the reference at deploy (the same lookup, one per image); a reference already by digest stays as it is."""
    if "@" in image:
        return image
    digest = image_digest(image)
    if digest is None:
        digest = _resolver().digest(ImageDigest(image=image, digest="", source="an upstream manifest, at deploy"))
    return pulumi.Output.concat(image, "@", digest)


@functools.cache
def _quoted_images() -> re.Pattern[str]:
    names = sorted(load_image_digests(), key=len, reverse=True)
    return re.compile("(?<=')(" + "|".join(re.escape(n) for n in names) + ")(?=')")


def _pin_text(text: str) -> pulumi.Input[str]:
    """An admission policy's CEL naming listed images in single quotes (``c.image == '<image>'``) with each one
    pinned, so the policy admits exactly what runs."""
    parts = _quoted_images().split(text)
    if len(parts) == 1:
        return text
    return pulumi.Output.concat(*(pinned(p) if i % 2 else p for i, p in enumerate(parts)))


def pin_images(obj: Any, quoted: bool = False) -> Any:
    """A copy of a rendered object (or Helm values) with every ``image: <listed tag>`` pinned by digest; ``quoted``:
    also every ``'<listed tag>'`` in a string (an admission policy's CEL, see ``_pin_text``). The NCCL plugin
    installers' ready marker and the gate that waits for it keep naming the tag: a job's own runtime printed offline
    (``python -m preview job-objects``) must match the marker the deployed installer writes."""
    if isinstance(obj, dict):
        return {
            k: (pinned(v) if k == "image" and isinstance(v, str) else pin_images(v, quoted)) for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [pin_images(v, quoted) for v in obj]
    if quoted and isinstance(obj, str):
        return _pin_text(obj)
    return obj


def _renders(values: dict[str, Any], condition: tuple[tuple[str, ...], ...], default: bool) -> bool:
    """Helm's ``condition``: the first path set to a boolean in the values decides, else the chart's default."""
    for path in condition:
        node: Any = values
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, bool):
            return node
    return default


def _default_used(values: dict[str, Any], path: tuple[str, ...]) -> bool:
    """Some entry of ``a.*.b`` sets no image of its own, so the chart's default level (``nodesetDefaults``) runs."""
    star = path.index("*")
    entries: Any = values
    for key in path[:star]:
        entries = entries.get(key) if isinstance(entries, dict) else None
    for entry in (entries or {}).values() if isinstance(entries, dict) else ():
        node = entry
        for key in path[star + 1 :]:
            node = node.get(key) if isinstance(node, dict) else None
        if not node:
            return True
    return False


def _pin_image_objects(obj: Any) -> Any:
    """Slinky's image objects the values set to a listed tag (``{repository, tag}``, e.g. the Alpine log and initconf
    containers) as ``{repository, digest}``: ``slurm.format-image`` drops the tag when a digest is set."""
    if isinstance(obj, list):
        return [_pin_image_objects(v) for v in obj]
    if not isinstance(obj, dict):
        return obj
    out = {}
    for key, value in obj.items():
        if (
            key == "image"
            and isinstance(value, dict)
            and not value.get("digest")
            and isinstance(value.get("repository"), str)
            and isinstance(value.get("tag"), str)
        ):
            digest = image_digest(f"{value['repository']}:{value['tag']}")
            if digest is not None:
                out[key] = {"repository": value["repository"], "digest": digest}
                continue
        out[key] = _pin_image_objects(value)
    return out


def _split(image: str) -> tuple[str, str]:
    repository, _, tag = image.rpartition(":")
    return repository, tag


REGISTRY_APART = {
    ("kubeflow-trainer", ("image",)),
    ("keda", ("image", "keda")),
    ("keda", ("image", "metricsApiServer")),
    ("keda", ("image", "webhooks")),
}
"""Images whose chart writes ``<registry>/<repository>:<tag>`` from separate values (the Trainer's
``trainer.image``, KEDA's deployments): the pin keeps the registry apart, or the chart would prefix it twice."""


def pinned_chart_values(chart: str, version: str, values: dict[str, Any]) -> dict[str, Any]:
    """The release's values with the images of its host-level and secret-holding containers
    (``catalog/data/host-level-images.csv``, ``catalog/data/secret-holding-images.csv``) pinned by digest, in the
    form the chart takes: ``{repository, tag: <tag>@<digest>}`` (NVIDIA device plugin, DRA driver, EFA plugin,
    Kueue, JobSet, LeaderWorkerSet), ``{registry, repository, tag: <tag>@<digest>}`` (``REGISTRY_APART``: Trainer,
    KEDA), ``{repository, image, version: <tag>@<digest>}`` (GPU Operator: it writes ``repository/image:version``),
    ``{repository, digest}`` (Slinky's ``slurm.format-image`` in both its charts, which drops the tag)."""
    out = pin_images(values)
    if chart == "slurm":
        out = _pin_image_objects(out)
    rows = (*chart_host_images(chart, version), *chart_secret_images(chart, version))
    spots = [
        (row.defaults_path or row.values_path, row.default_image)
        for row in rows
        if _renders(values, row.condition, row.condition_default)
        and (not row.defaults_path or _default_used(out, row.values_path))
    ]
    # the GPU Operator's other operands it runs (catalog/images.py)
    spots += [
        (tuple(o.component.split(".")), o.image)
        for o in chart_operands(chart, version)
        if "image" not in o.component.split(".") and o.enabled(values)
    ]
    for path, default_image in spots:
        if "*" in path:
            continue
        node = out
        for key in path[:-1]:
            node = node.setdefault(key, {})
        current = node.get(path[-1])
        if isinstance(current, str) or (isinstance(current, dict) and ({"tag", "version", "digest"} & set(current))):
            continue  # the values name an image: pinned above, or the user's own choice
        digest = image_digest(default_image)
        if digest is None:
            continue
        repository, tag = _split(default_image)
        pin = pulumi.Output.concat(tag, "@", digest)
        name = chart.rstrip("/").rsplit("/", 1)[-1]
        if name == "gpu-operator":
            repo, _, image = repository.rpartition("/")
            node[path[-1]] = {**(current or {}), "repository": repo, "image": image, "version": pin}
        elif name in ("slurm", "slurm-operator"):
            node[path[-1]] = {**(current or {}), "repository": repository, "digest": digest}
        elif (name, path) in REGISTRY_APART:
            registry, _, repo = repository.partition("/")
            node[path[-1]] = {**(current or {}), "registry": registry, "repository": repo, "tag": pin}
        else:
            node[path[-1]] = {**(current or {}), "repository": repository, "tag": pin}
    return out
