"""Raw stack config -> StackSpec, or one SpecError listing every problem (shape and meaning) at once."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, Iterable

from pydantic import ValidationError

from catalog import Catalog, Cloud, load_catalog, load_mig_catalog
from stacks.spec.gpu_runtime import GpuRuntime
from stacks.spec.scheduling import Workload
from stacks.spec.cluster import ClusterSpec
from stacks.spec.stack import TOP_LEVEL_KEYS, NodePool, StackSpec
from stacks.validate.capacity_block import check_capacity_blocks
from stacks.validate.cluster import check_cluster
from stacks.validate.fabric import check_fabric
from stacks.validate.maintenance import check_maintenance
from stacks.validate.multi_node_default import with_multi_node_defaults
from stacks.validate.node_repair import check_node_repair
from stacks.validate.node_storage import check_local_ssd
from stacks.validate.gpu_runtime import check_gpu_runtime
from stacks.validate.issues import (
    NAMESPACE,
    Issues,
    SpecError,
    SpecIssue,
    allowed_list,
    choice_fix,
    path_of,
    pool_subject,
    sort_key,
)
from stacks.validate.pod_start import check_image_mirrors, check_pod_start, warn_unstreamed
from stacks.validate.pool import check_pool
from stacks.validate.queued import check_queued_without_kueue
from stacks.validate.scheduling import check_scheduling
from stacks.validate.nvlink import check_shared_cliques
from stacks.validate.compute_domain_churn import check_shared_domain_churn
from stacks.validate.shape import describe, optional_model, parse_part
from stacks.validate.credentials import check_credentials
from stacks.validate.secrets import (
    SECRET_PLACEHOLDER,
    check_secret_keys,
    masked,
    secret_format_unknown,
    with_placeholders,
)
from stacks.validate.text import check_control_characters
from stacks.validate.top_level import check_account, check_pool_names, check_region, check_resource_labels


def decode_config(flat: dict[str, Any]) -> dict[str, Any]:
    """``{"gpu-cluster:nodePools": "[...]"}`` -> ``{"nodePools": [...]}``; values may be JSON strings or objects."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        namespace, _, name = key.partition(":")
        if namespace != NAMESPACE:
            continue
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                pass  # a plain string such as a region name
            if isinstance(value, (int, float)) and not isinstance(value, bool) and name in ("accountId", "project"):
                value = flat[key]  # keep IDs as typed: "012345678901" must not lose its zero
        out[name] = with_placeholders(value)  # offline, `secure:` values stay encrypted
    return out


def load_spec(
    raw: dict[str, Any],
    catalog: Catalog | None = None,
    now: dt.datetime | None = None,
    secret_keys: Iterable[str] = (),
    stack_name: str | None = None,
) -> tuple[StackSpec, list[SpecIssue]]:
    """Validate everything; return the spec and its warnings, or raise SpecError with every error and warning.

    ``now``: the moment capacity-block windows are judged against (default: the clock, UTC).
    ``secret_keys``: the settings (``accountId``) set with ``pulumi config set --secret``; their values never appear
    in a message, and a secret where Pulumi cannot keep one is refused (``stacks/validate/secrets.py``).
    ``stack_name``: this stack's name, so a fleet manager cannot list itself as a worker (None: not checked)."""
    cat = catalog or load_catalog()
    raw = with_multi_node_defaults(raw, cat)  # before every check: they judge the pool as it will be built
    issues = Issues()
    secret = set(secret_keys)
    check_secret_keys(issues, raw, secret)
    check_control_characters(issues, raw)
    check_credentials(issues, raw)
    causes = issues.found  # reported once: the pattern checks below would complain about the same values again
    for key in raw:
        if key not in TOP_LEVEL_KEYS:
            issues.error(
                key,
                "unknown setting",
                key,
                allowed=allowed_list(TOP_LEVEL_KEYS),
                fix=choice_fix("the key", key, TOP_LEVEL_KEYS, " (or remove it)"),
            )
    parts: dict[str, Any] = {}
    unparsed: set[str] = set()
    parsed_pools: list[tuple[int, NodePool, set[str]]] = []
    manager = _is_fleet_manager(raw)
    for name, field in StackSpec.model_fields.items():
        alias = field.alias or name
        if alias not in raw:
            if field.is_required() or (name == "node_pools" and not manager):
                issues.error(
                    alias,
                    "required setting is missing",
                    allowed=describe(field.annotation),
                    fix=f"add {NAMESPACE}:{alias} to the stack config",
                )
            continue
        if name == "node_pools":
            parsed_pools = _parse_pools(issues, raw[alias], empty_allowed=manager)
            continue
        annotation = field.annotation if raw[alias] is None else optional_model(field.annotation)
        parsed = parse_part(issues.at(alias), annotation, raw[alias], field, keep_digits=name in StackSpec.KEEP_DIGITS)
        if parsed is not None:
            parts[name] = parsed
        elif raw[alias] is not None:
            unparsed.add(name)  # already reported; later checks must not also call it "missing"

    pools = [(i, pool) for i, pool, dropped in parsed_pools if not dropped]  # cross-section checks: whole pools only
    cloud: Cloud | None = parts.get("cloud")
    region: str | None = parts.get("region")
    cluster: ClusterSpec | None = parts.get("cluster")
    if cloud is not None:
        check_account(
            issues,
            cloud,
            parts.get("project"),
            parts.get("account_id"),
            project_given="project" in unparsed,
            secret_unread=secret_format_unknown(secret, "accountId", parts.get("account_id")),
        )
        if region is not None:
            check_region(issues, cat, cloud, region)
            if not cat.has_region(cloud, region):
                region = None
        if cluster is not None:
            check_cluster(issues.at("cluster"), cat, cloud, region, cluster)
            check_maintenance(issues.at("cluster"), cloud, cluster)
        for i, pool, dropped in parsed_pools:
            pool_issues = Issues()
            check_pool(pool_issues, cat, cloud, region, cluster, i, pool)
            issues.extend(x for x in pool_issues.found if _independent(x, i, pool.name, dropped))
        if "gpu_runtime" not in unparsed:  # a section that failed its shape check would only add noise here
            check_gpu_runtime(issues, cat, load_mig_catalog(), cloud, parts.get("gpu_runtime") or GpuRuntime(), pools)
        check_fabric(issues, cloud, pools)
        # the image-recipe and GKE-version-floor rules (and their catalogs) load only for stacks that set
        # runtimeImageBuild or minMasterVersion: nothing for them to check otherwise (the what-if's import floor)
        if any(pool.fabric is not None and pool.fabric.runtime_image_build is not None for _, pool in pools):
            from stacks.validate.fabric_image import check_fabric_images

            check_fabric_images(issues, cloud, pools, parts.get("scheduling"))
        if cluster is not None and cluster.min_master_version is not None:
            from stacks.validate.fabric_version import check_fabric_versions

            check_fabric_versions(issues.at("cluster"), cloud, cluster, pools)
        check_local_ssd(issues, cloud, pools)
        check_node_repair(issues, cloud, pools)
        check_pod_start(issues, cat, cloud, cluster, pools)
        if cluster is not None:
            check_image_mirrors(issues.at("cluster"), cloud, cluster)
        check_capacity_blocks(issues, cat, cloud, pools, now or dt.datetime.now(dt.timezone.utc))
    check_resource_labels(issues.at("labels"), parts.get("labels", {}))
    check_pool_names(issues, pools)
    # the fleet and Slurm rules load only for stacks that have such settings: a Kueue stack's validation (every
    # what-if, every preview) skips their modules (the what-if's import floor, tests/whatif/test_whatif_import_floor.py)
    if parts.get("fleet") is not None:
        from stacks.validate.fleet import check_fleet

        check_fleet(issues, parts["fleet"], pools, parts.get("scheduling"), stack_name, cloud, cluster)
    if parts.get("scheduling") is None and "scheduling" not in unparsed and not manager:
        check_queued_without_kueue(issues, pools)  # a manager refuses queued pools itself (fleet rules)
    if parts.get("scheduling") is not None:
        check_scheduling(issues, cat, cloud, raw.get("nodePools"), pools, parts["scheduling"])
        sched = parts["scheduling"]
        if cloud is not None:
            check_shared_cliques(issues, cat, cloud, pools, sched)
            check_shared_domain_churn(issues, cat, cloud, pools, sched)
        if sched.workload == Workload.SLURM or "slurm" in sched.model_fields_set:
            from stacks.validate.slurm import check_slurm

            check_slurm(
                issues,
                cat,
                cloud,
                pools,
                sched,
                None if "gpu_runtime" in unparsed else parts.get("gpu_runtime") or GpuRuntime(),
            )

    if parts.get("serving") is not None:  # loads only for stacks that serve (the what-if's import floor)
        from stacks.validate.serving import check_serving

        check_serving(
            issues,
            cat,
            cloud,
            raw.get("nodePools"),
            pools,
            parts["serving"],
            parts.get("scheduling"),
            _text(raw.get("project")),
            _text(raw.get("region")),
            _text(raw.get("accountId")),
        )
        from stacks.validate.serving_gateway import check_inference_crd_version

        check_inference_crd_version(issues.at("cluster"), cloud, cluster)

    found = sorted(masked(_one_per_cause(issues.found, causes), raw, secret), key=sort_key)
    if any(not i.warning for i in found):
        raise SpecError(found)
    spec = StackSpec.model_validate(raw, by_alias=True, by_name=False)
    if (
        spec.scheduling is not None
        and "timeout_seconds" in spec.scheduling.gang.model_fields_set
        and any(p.multi_node for p in spec.node_pools)
    ):
        from stacks.validate.gang_timeout import check_pods_ready_timeout  # needs the pools' start estimates

        check_pods_ready_timeout(issues, cat, spec)
        found = sorted(masked(issues.found, raw, secret), key=sort_key)
        if any(not i.warning for i in found):
            raise SpecError(found)
    warn_unstreamed(issues, spec)  # reads region, project and mirrors together
    return spec, [i for i in sorted(issues.found, key=sort_key) if i.warning]


def _one_per_cause(found: list[SpecIssue], causes: list[SpecIssue]) -> list[SpecIssue]:
    """A value with a control character or a credential in it is reported once, as that: its pattern check would
    say the same again (and echo a credential the first message took care not to show). Offline, a secret's
    placeholder fails format checks that the decrypted value would pass: those are not the user's problems."""
    paths, first = {c.path for c in causes}, {id(c) for c in causes}
    return [i for i in found if id(i) in first or (i.path not in paths and i.value != SECRET_PLACEHOLDER)]


# Pool-level checks that also read another field: when that field failed its shape check, the check is skipped
# for the pool (its answer would rest on a default the user did not choose).
POOL_CHECK_INPUTS = {
    "machineType": {"accelerator"},
    "accelerator": {"machineType"},
    "zones": {"multiNode"},
    "maxNodes": {"multiNode"},
    "minNodes": {"maxNodes"},
    "upgrade": {"capacity"},
    "multiNode": {"machineType", "zones"},
}


def _is_fleet_manager(raw: dict[str, Any]) -> bool:
    """A fleet manager may have no GPU pool (it dispatches, the workers run the jobs)."""
    fleet = raw.get("fleet")
    return isinstance(fleet, dict) and fleet.get("role") == "manager"


def _parse_pools(issues: Issues, value: Any, empty_allowed: bool = False) -> list[tuple[int, NodePool, set[str]]]:
    """Parse each pool; a pool whose optional fields are malformed is still checked on the fields that parsed.

    Returns ``(index, pool, fields dropped because they failed their shape check)``. Problems inside a pool that
    has a name name it, like every other pool problem.
    """
    if empty_allowed and value in ([], None):
        return []
    if not isinstance(value, list) or not value:
        issues.error(
            "nodePools",
            "must be a non-empty list of GPU pools",
            value,
            allowed="a YAML list of pools",
            fix="add at least one pool with name, machineType, zones, maxNodes",
        )
        return []
    pools: list[tuple[int, NodePool, set[str]]] = []
    for i, item in enumerate(value):
        before = len(issues)
        name = item.get("name") if isinstance(item, dict) else None
        scope = issues.pool(i, name) if isinstance(name, str) else issues.at("nodePools", i)
        parsed = parse_part(scope, NodePool, item)
        if parsed is not None:
            pools.append((i, parsed, set()))
            continue
        recovered = _recover_pool(item, issues.found[before:], i)
        if recovered is not None:
            pools.append((i, recovered[0], recovered[1]))
    return pools


def _recover_pool(item: Any, errors: list[SpecIssue], i: int) -> tuple[NodePool, set[str]] | None:
    """The pool without its malformed optional fields, so the catalog checks still run on the rest."""
    if not isinstance(item, dict):
        return None
    prefix = path_of("nodePools", i) + "."
    bad = {e.path[len(prefix) :].split(".")[0].split("[")[0] for e in errors if e.path.startswith(prefix)}
    required = {f.alias for f in NodePool.model_fields.values() if f.is_required()}
    if not bad or bad & required:
        return None
    try:
        kept = {k: v for k, v in item.items() if k not in bad}
        return NodePool.model_validate(kept, by_alias=True, by_name=False), bad
    except ValidationError:
        return None


def _independent(issue: SpecIssue, i: int, name: str, dropped: set[str]) -> bool:
    """False when the issue's check read a field that failed its shape check (see POOL_CHECK_INPUTS)."""
    prefix = path_of("nodePools", i) + "."
    if not dropped or not issue.path.startswith(prefix):
        return True
    field = issue.path[len(prefix) :].split(".")[0].split("[")[0]
    problem = issue.problem.removeprefix(pool_subject(name) + ": ")  # a pool may be called 'price'
    if field == "machineType" and "price" in problem and dropped & {"capacity", "accelerator"}:
        return False  # the price depends on the capacity type and the attached GPUs
    return field not in dropped and not (POOL_CHECK_INPUTS.get(field, set()) & dropped)


def _text(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else None
