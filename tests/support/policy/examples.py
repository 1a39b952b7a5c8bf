"""Example stacks that exist to show what the policy pack refuses, with exactly the violations they must get.

tests/preview/test_preview.py previews every other example and expects exit 0; these are previewed by
tests/policies/test_policy_examples.py and must exit 1 with these (policy, pool or group) pairs and nothing else mandatory.
"""

from __future__ import annotations

REFUSED_EXAMPLES: dict[str, list[tuple[str, str]]] = {
    "eks-over-budget": [("cost-stack-budget", "stack")],
    "gke-a3-spread": [("topology-multi-node-placement", "pool a3-mega")],
    # A4X has no public price: the cost rules fail closed until priceOverrides gives the reservation's price
    # one cost-gpu-hour-limit per rack node pool (gb200-rack-0, gb200-rack-1: the rule judges each node pool)
    "gke-a4x-nvl72": [
        ("cost-gpu-hour-limit", "pool gb200"),
        ("cost-gpu-hour-limit", "pool gb200"),
        ("cost-stack-budget", "stack"),
    ],
}
