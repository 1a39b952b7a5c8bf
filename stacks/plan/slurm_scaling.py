"""Slurm pools that follow the queue: Slurm power saving decides, the NodeSet scale subresource acts. Pure: no Pulumi.

Slinky 1.2.1 scales a NodeSet through its ``scale`` subresource (``spec.replicas``); its own docs drive that with KEDA
on a Prometheus metric, neither of which is pinned here. So the decision is Slurm's own power saving, which every
Slurm cloud integration uses: every node a scaling pool may have exists in Slurm (ordinals below ``minNodes`` as the
pods' dynamic nodes, the rest as ``State=CLOUD`` records, powered down), so a job of any size up to ``maxNodes`` is
accepted and pends; slurmctld then runs ``ResumeProgram`` with the nodes it picked, and ``SuspendProgram`` with nodes
idle for ``SuspendTime``. Both programs (rendered here) set the pool's NodeSet ``replicas`` through the Kubernetes
API: up so a pod (and its slurmd) exists for every resumed node, down to the highest ordinal still in use, never
below ``minNodes``. The node autoscaler follows the pods. The programs use only what the pinned slurmctld image has
(sh, sed, awk, scontrol, socat for HTTPS: no curl there) and expect slurmctld's bare environment (docs/slurm.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from stacks.plan.slurm_nodes import NodeSetPlan, hostlist
from stacks.plan.slurm_topology import TopologyPlan, annotation_value
from stacks.spec.slurm import SlurmScaling

SCRIPT_DIR = "/usr/local/lib/gpu-cluster"
RESUME_PROGRAM, SUSPEND_PROGRAM = f"{SCRIPT_DIR}/slurm-resume", f"{SCRIPT_DIR}/slurm-suspend"
SUSPEND_TIMEOUT_S = 300
"""SuspendTimeout: Slinky drains a node before deleting its pod; an idle node's pod goes in well under this."""
API_NAME = "kubernetes.default.svc"
"""The API server's in-cluster name: resolvable from every pod and in its serving certificate."""
API_ADDRESS = f"{API_NAME}:443"
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
NODESET_PREFIX = "slurm-worker-"
"""The slurm chart names each NodeSet ``<release>-worker-<key>`` (templates/nodeset/nodeset-cr.yaml)."""
SLURMD_BOOT_ARGS = ("-b",)
"""slurmd of a pool that follows the queue reports its start as the node's boot. slurmctld completes a resume only
for a node that booted after the resume was asked for (``waiting_for_node_boot``, src/slurmctld/node_mgr.c, 26.05);
a pod restarted on the Kubernetes node it ran on (the ResumeProgram restarts a kept pod) reports that machine's old
boot, so without ``-b`` the node would stay POWERING_UP until ResumeTimeout. Slurm's power saving guide names ``-b``
for nodes that are resumed without a real reboot (doc/html/power_save.shtml)."""


def scales(settings: SlurmScaling, min_nodes: int, max_nodes: int) -> bool:
    return settings.enabled and min_nodes < max_nodes


@dataclass(frozen=True)
class ScalingPlan:
    pools: tuple[tuple[str, int, int], ...]
    """(pool, minNodes, maxNodes) of every pool that scales, in spec order."""
    fixed_partitions: tuple[str, ...]
    """Partitions of pools that do not scale: SuspendExcParts, so their nodes are never suspended."""
    idle_seconds: int
    resume_timeout_seconds: int
    record_topology: tuple[tuple[str, str], ...] = ()
    """(pool, ``Topology=`` value) of every scaling pool that is one block: its powered-down records are created in
    that block. Slinky sets a node's ``Topology=`` only from the annotation of the Kubernetes node its pod runs on,
    so a record without it stays outside every block, and a real 26.05 slurmctld then refuses a multi-node job that
    needs it ("Requested node configuration is not available"; tests/render/test_slurm_power_saving_blocks_real.py).
    Only for ``minNodes: 0``, where every node starts as a record: with pods from the start (unannotated) the records
    stay outside the block too, all flat. A pool of several blocks is refused by validation (ordinals move between
    racks as pods come and go)."""

    def directives(self) -> dict[str, str]:
        if not self.pools:
            return {}
        d = {
            "ResumeProgram": RESUME_PROGRAM,
            "SuspendProgram": SUSPEND_PROGRAM,
            "SuspendTime": str(self.idle_seconds),
            "SuspendTimeout": str(SUSPEND_TIMEOUT_S),
            "ResumeTimeout": str(self.resume_timeout_seconds),
        }
        if self.fixed_partitions:
            d["SuspendExcParts"] = ",".join(self.fixed_partitions)
        kept = [f"{pool}:{lo}" for pool, lo, _ in self.pools if lo > 0]
        if kept:  # a NodeSet name with a count: keep that many of its nodes powered up (minNodes)
            d["SuspendExcNodes"] = ",".join(kept)
        return d

    def cloud_nodes(self, nodesets: Sequence[NodeSetPlan]) -> list[list[str]]:
        """``scontrol create`` arguments for the powered-down records of ordinals ``minNodes..maxNodes-1``, with the
        same Features and ``--conf`` as the NodeSet's pods (Slinky adds ``Features=<nodeset>``)."""
        by_pool, topology = {n.pool: n for n in nodesets}, dict(self.record_topology)
        return [
            [
                "scontrol",
                "create",
                f"NodeName={hostlist(pool, lo, hi - 1)}",
                f"Features={pool}",
                *by_pool[pool].node_conf.split(" "),
                *([f"Topology={topology[pool]}"] if pool in topology else []),
                "State=CLOUD",
            ]
            for pool, lo, hi in self.pools
        ]

    def resume_script(self) -> str:
        return _SHEBANG + _common(self.pools) + _RESUME

    def suspend_script(self) -> str:
        return _SHEBANG + _common(self.pools) + _SUSPEND


def plan_scaling(
    settings: SlurmScaling, nodesets: Sequence[NodeSetPlan], topology: TopologyPlan | None = None
) -> ScalingPlan:
    scaling, min_nodes = {n.pool for n in nodesets if n.scales}, {n.pool: n.min_nodes for n in nodesets}
    one_block = tuple(
        (b.pool, annotation_value(b.name, b.blocks[0]))
        for b in (topology.blocks if topology else ())
        if b.pool in scaling and len(b.blocks) == 1 and min_nodes[b.pool] == 0
    )
    return ScalingPlan(
        pools=tuple((n.pool, n.min_nodes, n.replicas) for n in nodesets if n.scales),
        fixed_partitions=tuple(n.pool for n in nodesets if not n.scales),
        idle_seconds=settings.idle_minutes * 60,
        resume_timeout_seconds=settings.resume_timeout_minutes * 60,
        record_topology=one_block,
    )


_SHEBANG = "#!/bin/sh\n# Generated by gpu-cluster (stacks/plan/slurm_scaling.py). $1: the Slurm hostlist.\nset -eu\n"


def _common(pools: Sequence[tuple[str, int, int]]) -> str:
    cases = "".join(f"    {pool}) echo {lo} ;;\n" for pool, lo, _ in pools)
    return f"""# slurmctld runs this with SLURM_CONF (and SLURM_RESUME_FILE) as its whole environment: no PATH, no
# KUBERNETES_SERVICE_HOST. The API server is reached by its in-cluster name; its certificate names it.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; export PATH
SA={SERVICE_ACCOUNT_DIR}
API={API_ADDRESS}
NS=$(cat "$SA/namespace")
# kube METHOD PATH [MERGE-PATCH]: one HTTPS request with the pod's token; prints the body, fails unless 2xx.
# socat, not curl: the slurmctld image has socat and no curl (docs/slurm.md). HTTP/1.0, so the server sends the
# body unchunked and closes; ignoreeof keeps the request side open until then (Go's HTTP server cancels a request
# whose client half-closes).
kube() {{
  resp=$({{ printf '%s %s HTTP/1.0\\r\\nHost: {API_NAME}\\r\\n' "$1" "$2"
    printf 'Authorization: Bearer %s\\r\\nAccept: application/json\\r\\n' "$(cat "$SA/token")"
    [ -z "${{3:-}}" ] || printf 'Content-Type: application/merge-patch+json\\r\\nContent-Length: %s\\r\\n' "${{#3}}"
    printf '\\r\\n%s' "${{3:-}}"; }} |
    socat -T 30 STDIO,ignoreeof "OPENSSL:$API,cafile=$SA/ca.crt,commonname={API_NAME}") || return 1
  status=$(printf '%s\\n' "$resp" | sed -n '1s/^HTTP\\/[0-9.]* \\([0-9]*\\).*/\\1/p')
  case "$status" in
    2??) printf '%s\\n' "$resp" | sed '1,/^\\r*$/d' ;;
    *) echo "$1 $2: HTTP ${{status:-no answer}}" >&2; return 1 ;;
  esac
}}
min_nodes() {{  # minNodes of a scaling pool; nothing for any other
  case "$1" in
{cases}    *) echo "" ;;
  esac
}}
scale_path() {{ echo "/apis/slinky.slurm.net/v1beta1/namespaces/$NS/nodesets/{NODESET_PREFIX}$1/scale"; }}
replicas() {{  # a failed read fails the program (never taken for 0: that would scale the pool down)
  body=$(kube GET "$(scale_path "$1")") || return 1
  printf '%s\\n' "$body" | sed -n 's/.*"spec":{{"replicas":\\([0-9]*\\)}}.*/\\1/p'
}}
set_replicas() {{
  kube PATCH "$(scale_path "$1")" "{{\\"spec\\":{{\\"replicas\\":$2}}}}" >/dev/null
  echo "$(date -u +%FT%TZ) NodeSet {NODESET_PREFIX}$1 replicas=$2 ($0 $HOSTS)"
}}
HOSTS="$1"
"""


_RESUME = (
    """# Every resumed node needs a pod: replicas up to its ordinal + 1. A node whose pod still runs (released out of
# order, so kept) gets its pod restarted, so its slurmd registers again as Slurm expects after a resume.
for node in $(scontrol show hostnames "$HOSTS"); do
  pool=${node%-*}; ordinal=${node##*-}
  [ -n "$(min_nodes "$pool")" ] || continue
  have=$(replicas "$pool")
  if [ $((ordinal + 1)) -gt "${have:-0}" ]; then
    set_replicas "$pool" $((ordinal + 1))
  else
    kube DELETE "/api/v1/namespaces/$NS/pods/"""
    + NODESET_PREFIX
    + """$node" >/dev/null || true
  fi
done
"""
)

_SUSPEND = """# Replicas down to the highest ordinal Slurm still uses (not powered down, powering down or in this call), never
# below minNodes. Slinky drains each node it scales in (reason "slurm-operator: ...") and deletes its pod; that
# drain is cleared once the pod is gone, so Slurm may resume the node again.
skip=" $(scontrol show hostnames "$HOSTS" | tr '\\n' ' ') "
for pool in $(scontrol show hostnames "$HOSTS" | sed 's/-[0-9]*$//' | sort -u); do
  lo=$(min_nodes "$pool"); [ -n "$lo" ] || continue
  top=$(scontrol -o show nodes | awk -v p="$pool" -v skip="$skip" '
    match($0, /NodeName=[^ ]+/) {
      name = substr($0, RSTART + 9, RLENGTH - 9); n = name; sub(/-[0-9]+$/, "", n)
      if (n != p || index(skip, " " name " ") || $0 ~ /State=[^ ]*POWER(ED|ING)_DOWN/) next
      o = substr(name, length(p) + 2) + 0; if (o + 1 > top) top = o + 1
    } END { print top + 0 }')
  [ "$top" -gt "$lo" ] || top=$lo
  set_replicas "$pool" "$top"
done
( sleep 30
  for node in $(scontrol show hostnames "$HOSTS"); do
    scontrol -o show node "$node" | grep -q 'Reason=slurm-operator:' && \\
      scontrol update NodeName="$node" State=UNDRAIN || true
  done ) >/dev/null 2>&1 &
"""
