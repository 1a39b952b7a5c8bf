"""gpu-cluster: one typed stack spec -> GPU node pools on GKE or EKS. Load, validate, plan, compose, export."""

import pulumi

from catalog import load_catalog
from compose.config import raw_config_from_pulumi, secret_config_keys
from compose.outputs import pool_exports
from compose.stack import build_stack
from stacks.validate.issues import SpecError, format_issues
from stacks.validate.planned import load_planned

secret_keys = secret_config_keys()
catalog = load_catalog()
try:  # validated and planned once (the offline preview has done both already for this config: kept, not redone)
    planned = load_planned(raw_config_from_pulumi(), catalog, secret_keys=secret_keys, stack_name=pulumi.get_stack())
except SpecError as exc:
    raise pulumi.RunError(format_issues(exc.issues)) from None  # RunError: message only, no traceback
for warning in planned.warnings:
    pulumi.log.warn(str(warning))

stack = build_stack(planned.plan, secret_keys)
pulumi.export("cloud", planned.spec.cloud.value)
pulumi.export("clusterName", stack.cluster_name)
pulumi.export("kubeconfig", stack.kubeconfig)
pulumi.export("pools", pool_exports(stack.pools))
for name, value in stack.fleet_outputs.items():  # a fleet worker's kubeconfig is a Pulumi secret
    pulumi.export(name, value)
