"""The Slurm block annotator's program, run in the cluster by ``python3`` (stdlib only; shipped as a ConfigMap by
``render/slurm_block_annotator.py``). Every few seconds it lists the nodes labelled with a Slurm block and, for each
one still carrying the registration taint, writes Slinky's ``topology.slinky.slurm.net/spec`` annotation
(``<topology>:<block>``) and removes the taint in one JSON patch guarded by the node's resourceVersion, so a node
changed meanwhile is retried on the next round and no other taint or annotation is lost.

Environment: ``TOPOLOGIES``, a JSON object pool -> block topology name. Its ServiceAccount may list and patch nodes,
nothing else.
"""

from __future__ import annotations

import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable

SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
ANNOTATION = "topology.slinky.slurm.net/spec"
BLOCK_LABEL = "gpu-cluster/slurm-block"
POOL_LABEL = "gpu-cluster/pool"
TAINT_KEY = "startup-taint.cluster-autoscaler.kubernetes.io/slurm-topology"
INTERVAL_SECONDS = 5

Call = Callable[[str, str, Any], Any]


def node_patch(node: dict[str, Any], topologies: dict[str, str]) -> list[dict[str, Any]] | None:
    """The JSON patch that annotates ``node`` with its block and drops the registration taint, or None when the node
    is done already (no taint) or its labels name no known pool and block (then it keeps the taint: no slurmd pod
    may run there with no block)."""
    meta = node["metadata"]
    labels = meta.get("labels") or {}
    taints = (node.get("spec") or {}).get("taints") or []
    if not any(t.get("key") == TAINT_KEY for t in taints):
        return None
    topology, block = topologies.get(labels.get(POOL_LABEL, "")), labels.get(BLOCK_LABEL)
    if topology is None or not block:
        return None
    return [
        {"op": "test", "path": "/metadata/resourceVersion", "value": meta["resourceVersion"]},
        {
            "op": "add",
            "path": "/metadata/annotations",
            "value": {**(meta.get("annotations") or {}), ANNOTATION: f"{topology}:{block}"},
        },
        {"op": "replace", "path": "/spec/taints", "value": [t for t in taints if t.get("key") != TAINT_KEY]},
    ]


def run_once(topologies: dict[str, str], call: Call) -> list[str]:
    """One round; returns the nodes annotated. A refused patch (the node changed) is logged and retried next round."""
    nodes = call("GET", "/api/v1/nodes?labelSelector=" + urllib.parse.quote(BLOCK_LABEL, safe=""), None)["items"]
    done = []
    for node in nodes:
        patch = node_patch(node, topologies)
        if patch is None:
            continue
        name = node["metadata"]["name"]
        try:
            call("PATCH", f"/api/v1/nodes/{urllib.parse.quote(name)}", patch)
        except urllib.error.HTTPError as exc:
            print(f"node {name}: HTTP {exc.code}, retried next round", file=sys.stderr, flush=True)
            continue
        print(f"node {name}: {ANNOTATION}={patch[1]['value'][ANNOTATION]}, taint {TAINT_KEY} removed", flush=True)
        done.append(name)
    return done


def api_call(method: str, path: str, body: Any) -> Any:
    """One request to the API server with the pod's (rotating) token, read for every request."""
    host, port = os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"]
    host = f"[{host}]" if ":" in host else host  # an IPv6 cluster
    with open(f"{SERVICE_ACCOUNT}/token", encoding="utf-8") as fh:
        token = fh.read().strip()
    request = urllib.request.Request(
        f"https://{host}:{port}{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json"}
        | ({} if body is None else {"Content-Type": "application/json-patch+json"}),
    )
    context = ssl.create_default_context(cafile=f"{SERVICE_ACCOUNT}/ca.crt")
    with urllib.request.urlopen(request, context=context, timeout=30) as response:
        return json.load(response)


def main() -> None:
    topologies = json.loads(os.environ["TOPOLOGIES"])
    while True:
        try:
            run_once(topologies, api_call)
        except Exception as exc:  # the API server away: try again next round
            print(f"round failed: {exc}", file=sys.stderr, flush=True)
        time.sleep(INTERVAL_SECONDS)


if __name__ == "__main__":
    main()
