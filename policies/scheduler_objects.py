"""Readers for the scheduler layer: Kueue CustomResources and Slinky (Slurm) Helm values, and the pools they
select by the gpu-cluster/pool label."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from policies.resources import HELM_RELEASE, POOL_LABEL_KEY
from policies.rule import Resource
from policies.values import as_dict, as_int, as_list, dig

KUEUE_PREFIX = "kubernetes:kueue.x-k8s.io/"
GPU_RESOURCE = "nvidia.com/gpu"


def kueue_kind(r: Resource) -> str | None:
    """``ResourceFlavor`` for ``kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor`` (any API version)."""
    return r.type.rsplit(":", 1)[-1] if r.type.startswith(KUEUE_PREFIX) else None


def object_name(r: Resource) -> str:
    name = dig(r.props, "metadata", "name")
    return name if isinstance(name, str) else r.name


def is_slurm_release(r: Resource) -> bool:
    chart = r.props.get("chart")
    return (
        r.type == HELM_RELEASE
        and isinstance(chart, str)
        and chart.rstrip("/").split("/")[-1] == "slurm"
        and isinstance(dig(r.props, "values", "nodesets"), dict)
    )


@dataclass(frozen=True)
class NodeSet:
    release: Resource
    name: str
    selector: dict
    extra_conf: str
    gpus_requested: Any
    tolerations: list = field(default_factory=list)
    """``podSpec.tolerations`` of the NodeSet's slurmd pods."""
    replicas: Any = None
    """Slurm nodes of the NodeSet (one slurmd pod each): an int, UNKNOWN or None."""


def nodesets(r: Resource) -> list[NodeSet]:
    out = []
    for name, spec in as_dict(dig(r.props, "values", "nodesets")).items():
        if not isinstance(spec, dict) or spec.get("enabled") is False:
            continue
        out.append(
            NodeSet(
                r,
                str(name),
                as_dict(dig(spec, "podSpec", "nodeSelector")),
                str(spec.get("extraConf") or ""),
                dig(spec, "slurmd", "resources", "limits", GPU_RESOURCE),
                as_list(dig(spec, "podSpec", "tolerations")),
                as_int(spec.get("replicas")),
            )
        )
    return out


def conf_pairs(text: str) -> dict[str, str]:
    """``Key=Value`` pairs of slurm.conf text (or of a partition's options): keys lower-cased, as Slurm reads them
    case-insensitively; ``#`` starts a comment; a key given twice keeps its last value."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        for token in line.split("#", 1)[0].split():
            key, sep, value = token.partition("=")
            if sep:
                out[key.lower()] = value
    return out


def controller_conf(r: Resource) -> tuple[str, dict[str, str]]:
    """The slurm.conf lines the slurm chart appends for the controller, and the value they come from:
    ``controller.extraConf``, or when it is empty ``controller.extraConfMap`` (a list value is one line per item: the
    last one counts)."""
    text = dig(r.props, "values", "controller", "extraConf")
    if isinstance(text, str) and text.strip():
        return "controller.extraConf", conf_pairs(text)
    out: dict[str, str] = {}
    for key, value in as_dict(dig(r.props, "values", "controller", "extraConfMap")).items():
        items = value if isinstance(value, list) else [value]
        if items and isinstance(items[-1], (str, int, float)) and not isinstance(items[-1], bool):
            last = items[-1]
            out[str(key).lower()] = str(int(last)) if isinstance(last, float) and last.is_integer() else str(last)
    return "controller.extraConfMap", out


def flavor_quotas(resources: list[Resource]) -> dict[str, list[tuple[str, float]]]:
    """flavor name -> [(ClusterQueue name, nominalQuota of nvidia.com/gpu)]."""
    out: dict[str, list[tuple[str, float]]] = {}
    for r in resources:
        if kueue_kind(r) != "ClusterQueue":
            continue
        for group in as_list(dig(r.props, "spec", "resourceGroups")):
            for flavor in as_list(as_dict(group).get("flavors")):
                for res in as_list(as_dict(flavor).get("resources")):
                    res = as_dict(res)
                    quota = res.get("nominalQuota")
                    if res.get("name") == GPU_RESOURCE and isinstance(quota, (int, float, str)):
                        try:
                            value = float(quota)
                        except ValueError:
                            continue
                        out.setdefault(str(as_dict(flavor).get("name")), []).append((object_name(r), value))
    return out


def selected_pool(selector: dict) -> str | None:
    value = selector.get(POOL_LABEL_KEY)
    return value if isinstance(value, str) else None


def matches(selector: dict[str, Any], labels: dict[str, Any]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items() if not str(k).startswith("kubernetes.io/os"))
