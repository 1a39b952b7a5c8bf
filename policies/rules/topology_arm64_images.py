"""topology-arm64-images: every image the stack schedules onto an arm64 GPU pool (GB200 on Grace hosts) has an arm64
variant, by the image table ``catalog/data/image-architectures.csv`` (an image the table does not know fails closed).

What runs on a pool is read from the concrete resources: Kubernetes objects (DaemonSets, training runtimes, …) and
Helm release values whose node selector or node affinity names the pool (by the ``gpu-cluster/pool`` label or the
pool's instance type); for a release, the chart's default images on GPU nodes come from the table's ``chart`` column.
A GPU Operator release runs its operands on every GPU pool not labelled ``nvidia.com/gpu.deploy.operands=false`` (its
values name no pool): each operand its values turn on (``catalog/data/chart-operands.csv``, with the release's image
overrides) must be in the table with arm64."""

from __future__ import annotations

from typing import Any, Iterable

from pulumi_policy import EnforcementLevel, Severity

from catalog import Catalog
from catalog.fabric_images import BUILD_ANNOTATION, CHECK_CONTAINER, load_fabric_image_tables
from catalog.images import ImageArchitectures, ImageTable, chart_operands, load_image_table
from policies.findings import Finding, listing
from policies.pools import PoolView, gpu_pools
from policies.resources import EKS_NODE_GROUP, GKE_NODE_POOL, HELM_RELEASE
from policies.registry import register
from policies.rule import Category, Config, Resource, Rule
from stacks.spec.stack import POOL_LABEL_KEY

ID = "topology-arm64-images"
OPERATOR_CHART = "gpu-operator"
OPERANDS_OPT_OUT = "nvidia.com/gpu.deploy.operands"
"""Node label (value "false") that keeps every GPU Operator operand off a pool (gpu-cluster sets it on the pools of
other runtimes)."""
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
SELECTOR_KEYS = (POOL_LABEL_KEY, INSTANCE_TYPE_LABEL)


def _targets(value: Any) -> set[str]:
    """Pool names and instance types the node selectors and affinities anywhere in ``value`` name."""
    out: set[str] = set()
    if isinstance(value, dict):
        for key in SELECTOR_KEYS:
            if isinstance(value.get(key), str):  # a nodeSelector map
                out.add(value[key])
        if value.get("key") in SELECTOR_KEYS and isinstance(value.get("values"), list):  # a matchExpression
            out |= {str(v) for v in value["values"]}
        keys = value.get("keys")
        if isinstance(keys, list) and INSTANCE_TYPE_LABEL in keys and isinstance(value.get("values"), list):
            out |= {str(v) for v in value["values"]}  # the EFA plugin chart's supportedInstanceLabels
        for v in value.values():
            out |= _targets(v)
    elif isinstance(value, list):
        for v in value:
            out |= _targets(v)
    return out


def _images(value: Any) -> set[str]:
    """Image references written out in ``value`` (``image: repo:tag``, or ``{repository, tag}`` pairs)."""
    out: set[str] = set()
    if isinstance(value, dict):
        image = value.get("image")
        if isinstance(image, str) and image:
            out.add(image)
        repo, tag, digest = value.get("repository"), value.get("tag"), value.get("digest")
        if isinstance(repo, str) and repo and isinstance(digest, str) and digest:
            out.add(f"{repo}@{digest}")  # the slurm chart's {repository, digest} form wins over a tag
        elif isinstance(repo, str) and repo and isinstance(tag, str) and tag:
            out.add(f"{repo}:{tag}")
        for v in value.values():
            out |= _images(v)
    elif isinstance(value, list):
        for v in value:
            out |= _images(v)
    return out


PLACEMENT_KEYS = ("nodeSelector", "affinity", "podSpec", "supportedInstanceLabels")
"""Keys under which a workload's values say where its pods run: the dict holding one is that workload's scope."""


def _scopes(value: Any, arm: dict[str, PoolView]) -> list[dict]:
    """The dicts in Helm values that place a workload on an arm64 pool (e.g. ``nodesets.<pool>``, or the whole
    values of a DaemonSet chart): only their images run there, not the chart's controllers elsewhere."""
    out: list[dict] = []
    if isinstance(value, dict):
        if any(t in arm for k in PLACEMENT_KEYS if k in value for t in _targets(value[k])):
            return [value]
        for v in value.values():
            out += _scopes(v, arm)
    elif isinstance(value, list):
        for v in value:
            out += _scopes(v, arm)
    return out


def _built(value: Any) -> dict[str, ImageArchitectures]:
    """Images a pod declares built from a recipe of this repository (annotation ``gpu-cluster/image-build``) and
    checks first from the image itself (``fabric-image-check``): their architectures are the recipe's row
    (``catalog/data/image-builds.csv``). Found in every pod-shaped dict of ``value`` (a NodeSet's values)."""
    out: dict[str, ImageArchitectures] = {}
    if isinstance(value, dict):
        build = load_fabric_image_tables().build(
            str(((value.get("metadata") or {}).get("annotations") or {}).get(BUILD_ANNOTATION) or "")
        )
        first = next(iter(((value.get("podSpec") or {}).get("initContainers") or [])), None)
        if build is not None and isinstance(first, dict) and first.get("name") == CHECK_CONTAINER:
            out[str(first.get("image"))] = ImageArchitectures(
                image=str(first.get("image")),
                architectures=build.architectures,
                chart="",
                basis="documented",
                source=f"built from {build.dockerfile} (catalog/data/image-builds.csv)",
            )
        for v in value.values():
            out.update(_built(v))
    elif isinstance(value, list):
        for v in value:
            out.update(_built(v))
    return out


def _chart(r: Resource) -> str:
    return str(r.props.get("chart", "")).rstrip("/").rsplit("/", 1)[-1] if r.type == HELM_RELEASE else ""


def _operator_pools(arm: dict[str, PoolView]) -> list[str]:
    """The arm64 pools a GPU Operator release deploys its operands onto: those that do not opt out."""
    return sorted({v.name for v in arm.values() if str(v.labels.get(OPERANDS_OPT_OUT)).lower() != "false"})


def _operator_images(r: Resource) -> set[str]:
    """The operand images the release's values turn on (an operand of an unknown chart version: every image it
    names is unknown, as no operand list exists for it)."""
    raw = r.props.get("values")
    values: dict = raw if isinstance(raw, dict) else {}
    operands = chart_operands(OPERATOR_CHART, str(r.props.get("version", "")))
    if not operands:
        return {f"{OPERATOR_CHART}@{r.props.get('version', '')} operands (no operand list for this version)"}
    return {o.image_in(values) for o in operands if o.enabled(values)}


def _workload_images(r: Resource, table: ImageTable, arm: dict[str, PoolView]) -> set[str]:
    if _chart(r) == OPERATOR_CHART:
        return _operator_images(r)
    if r.type == HELM_RELEASE:
        chart = _chart(r)
        defaults = {i.image for i in table.chart_images(chart, str(r.props.get("version", "")))}
        return {i for scope in _scopes(r.props.get("values"), arm) for i in _images(scope)} | defaults
    return _images(r.props)


def _arm64_pools(resources: list[Resource], cat: Catalog) -> dict[str, PoolView]:
    """Pool name and each of its instance types -> the arm64 GPU pool."""
    out: dict[str, PoolView] = {}
    for view in gpu_pools(resources, cat):
        machines = [m for t in view.machine_types if (m := view.machine(cat, t)) is not None]
        if any(m.arch == "arm64" for m in machines):
            out[view.name] = view
            out.update({m.machine_type: view for m in machines})
    return out


def check(resources: list[Resource], cfg: Config, cat: Catalog) -> Iterable[Finding]:
    arm = _arm64_pools(resources, cat)
    if not arm:
        return
    table = load_image_table()
    for r in resources:
        if r.type in (GKE_NODE_POOL, EKS_NODE_GROUP) or not r.type.startswith("kubernetes:"):
            continue
        pools = (
            _operator_pools(arm)
            if _chart(r) == OPERATOR_CHART
            else sorted({arm[t].name for t in _targets(r.props) if t in arm})
        )
        if not pools:
            continue
        missing, unknown = [], []
        built = _built(r.props.get("values") if r.type == HELM_RELEASE else r.props)
        for image in sorted(_workload_images(r, table, arm)):
            row = table.lookup(image) or built.get(image)
            if row is None:
                unknown.append(image)
            elif not row.supports("arm64"):
                missing.append(f"{image} ({', '.join(sorted(row.architectures))} only: {row.source})")
        subject = f"{r.type.rsplit(':', 1)[-1]} '{r.name}'"
        keys = (*pools, r.name, r.urn)
        where = f"arm64 pool{'s' if len(pools) > 1 else ''} {listing([repr(p) for p in pools])}"
        if missing:
            yield Finding(
                subject,
                f"it runs on {where} (Grace arm64 hosts) images without an arm64 variant, whose "
                "pods would fail with 'exec format error'",
                observed=f"images: {listing(missing)}",
                required="every image has a linux/arm64 variant",
                fix="use the image's arm64 (or multi-arch) build, or keep the workload off the arm64 pool; "
                "gpu-cluster picks the arm64 builds it knows (catalog/data/image-architectures.csv)",
                keys=keys,
                urn=r.urn,
            )
        if unknown:
            yield Finding(
                subject,
                f"it runs images on {where} whose architectures nobody checked (unknown is not arm64)",
                observed=f"images not in catalog/data/image-architectures.csv: {listing(unknown)}",
                required="every image in the table with a linux/arm64 variant",
                fix="check the image index (`crane manifest <image>`) and add a row with its architectures "
                "and source, or waive this rule for the pool with the reason",
                keys=keys,
                urn=r.urn,
            )


RULE = register(
    Rule(
        id=ID,
        title="Arm64 pools run only arm64 images",
        category=Category.TOPOLOGY,
        description="Every image scheduled onto an arm64 GPU pool (GB200 on Grace) has an arm64 variant, by the sourced "
        "image table; an image the table does not know fails closed.",
        why=(
            "GB200 NVL72 machines (GKE A4X, EKS P6e-GB200) have Grace arm64 hosts. An amd64-only image on them fails at "
            "start with 'exec format error' (on GKE its pods may also stay Pending for lack of the arm64 toleration), "
            "and a DaemonSet such as an NCCL plugin installer then leaves every job on the pool without its network. "
            "Several GPU images differ per architecture (the gIB NCCL plugin has a separate -arm64 image; the "
            "pytorch/pytorch CUDA images are amd64 only)."
        ),
        remediation=(
            "1. Use the image's arm64 or multi-arch build (catalog/data/image-architectures.csv lists the ones "
            "gpu-cluster pins, with sources; catalog/data/chart-operands.csv the GPU Operator's operands). 2. For an image of your own, check its index (`crane manifest`) "
            "and add a row. 3. Or keep the workload off arm64 pools."
        ),
        severity=Severity.HIGH,
        enforcement=EnforcementLevel.MANDATORY,
        applies_to=(GKE_NODE_POOL, EKS_NODE_GROUP, HELM_RELEASE),
        check=check,
        reads_catalog=True,
        stack=True,
    ),
    order=2090,
)
