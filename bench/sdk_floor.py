"""The SDK floor of a stack: the least a Pulumi Python program that creates the same resources must spend.

A fresh interpreter imports exactly the provider classes the stack registers and registers the same resources (type,
name, parent, provider, inputs as recorded) under Pulumi mocks that echo inputs; no validation, planning, rendering,
cost or policy. The offline preview can never be faster, so ``preview seconds / floor seconds`` is what the project
adds on top of the Pulumi SDK.

    .venv/bin/python bench/sdk_floor.py record STACK STACK_FILE OUT.json   # run the preview engine once, keep the resources
    .venv/bin/python bench/sdk_floor.py replay OUT.json                    # the floor itself (time this)

``replay`` imports nothing of gpu-cluster (only the recorded file), so its time is the SDK's alone.

A fleet manager's preview also runs each worker's program (its StackReferences are answered by previewing the
worker stack files, ``preview/fleet/resolve.py``), so its floor registers the workers' resources too: one program
per worker stack, then the manager's, in one interpreter, each under its own stack name, as the preview runs them.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def class_path(token: str) -> tuple[str, str]:
    """``(module, class)`` of a Pulumi type token in the Python SDKs: ``gcp:container/nodePool:NodePool`` ->
    ``pulumi_gcp.container``; ``kubernetes:rbac.authorization.k8s.io/v1:Role`` -> ``pulumi_kubernetes.rbac.v1``;
    ``pulumi:providers:aws`` -> ``pulumi_aws.Provider``."""
    pkg, module, cls = token.split(":")
    if pkg == "pulumi" and module == "providers":
        return f"pulumi_{cls}", "Provider"
    if pkg == "kubernetes":
        group, _, version = module.partition("/")
        parts = [group.split(".")[0]] + ([version] if version else [])
        return "pulumi_kubernetes." + ".".join(parts), cls
    top = module.split("/")[0]
    return (f"pulumi_{pkg}" if top == "index" else f"pulumi_{pkg}.{top}"), cls


def provider_class(token: str) -> Any:
    """The class for ``token``; a Kubernetes custom resource kind without its own class (a CRD's kind such as
    ``kubernetes:networking.gke.io/v1:Network``) is registered through ``apiextensions.CustomResource``, as the
    program does."""
    module, cls = class_path(token)
    try:
        return getattr(importlib.import_module(module), cls)
    except (ImportError, AttributeError):
        if not token.startswith("kubernetes:"):
            raise
        return importlib.import_module("pulumi_kubernetes.apiextensions").CustomResource


def unwrap(value: Any) -> Any:
    """Recorded inputs without Pulumi's secret wrappers (the floor registers plain values)."""
    if isinstance(value, dict):
        if value.get("4dabf18193072939515e22adb298388d") == "1b47061264138c4ac30d75fd1eb44270":
            return unwrap(value.get("value"))
        return {k: unwrap(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unwrap(v) for v in value]
    return value


def rows_of(resources: list[Any]) -> list[dict[str, Any]]:
    index = {r.urn: i for i, r in enumerate(resources)}
    return [
        {
            "type": r.type,
            "name": r.name,
            "custom": r.custom,
            "parent": index.get(r.parent_urn),
            "provider": index.get(r.provider.rsplit("::", 1)[0]) if r.provider else None,
            "inputs": unwrap(r.inputs),
        }
        for r in resources
    ]


def record(stack: str, stack_file: Path, out: Path) -> None:
    """The resources the program registers for this stack, in registration order, as the floor replays them; for a
    fleet manager also those of each worker program the preview runs to answer its StackReferences (``workers``)."""
    sys.path.insert(0, str(ROOT))
    from preview import engine

    programs: list[tuple[str, Any]] = []
    run_program = engine.run_program

    def recorded(config: dict[str, Any], name: str = "dev", *args: Any, **kwargs: Any) -> Any:
        rec = run_program(config, name, *args, **kwargs)
        programs.append((name, rec))
        return rec

    setattr(engine, "run_program", recorded)  # the worker programs run through the module's name (referenced_outputs)
    try:
        recorded(engine.read_stack_file(stack_file), stack)
    finally:
        setattr(engine, "run_program", run_program)
    *workers, (_, rec) = programs
    out.write_text(
        json.dumps(
            {
                "stack": stack,
                "resources": rows_of(rec.resources),
                "workers": [{"stack": name, "resources": rows_of(w.resources)} for name, w in workers],
            }
        )
    )


def resource_count(recorded: dict[str, Any]) -> int:
    """Every resource the floor registers: the stack's and, for a fleet manager, its workers'."""
    return len(recorded["resources"]) + sum(len(w["resources"]) for w in recorded.get("workers", []))


def replay(recorded: Path) -> int:
    data = json.loads(recorded.read_text())
    programs = [(w["stack"], w["resources"]) for w in data.get("workers", [])] + [(data["stack"], data["resources"])]
    classes = {}
    for _, rows in programs:  # exactly the classes the stacks register, imported as the programs would
        for row in rows:
            if row["custom"] and row["type"] not in classes:
                classes[row["type"]] = provider_class(row["type"])
    for stack, rows in programs:  # the workers first, as the manager's preview runs them
        replay_program(stack, rows, classes)
    return resource_count(data)


def replay_program(stack: str, rows: list[dict[str, Any]], classes: dict[str, Any]) -> None:
    import pulumi

    class Echo(pulumi.runtime.Mocks):
        def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
            return f"{args.name}-id", dict(args.inputs)

        def call(self, args: pulumi.runtime.MockCallArgs) -> Any:
            return {}

    pulumi.runtime.set_mocks(Echo(), project="gpu-cluster", stack=stack, preview=False)

    @pulumi.runtime.test
    def program() -> Any:
        made: list[Any] = []
        for row in rows:
            parent = made[row["parent"]] if row["parent"] is not None else None
            provider = made[row["provider"]] if row["provider"] is not None else None
            opts = pulumi.ResourceOptions(parent=parent, provider=provider)
            if not row["custom"]:
                made.append(pulumi.ComponentResource(row["type"], row["name"], None, opts))
                continue
            obj = classes[row["type"]].__new__(classes[row["type"]])
            if row["type"].startswith("pulumi:providers:"):
                pulumi.ProviderResource.__init__(obj, row["type"].split(":")[2], row["name"], row["inputs"], opts)
            else:
                pulumi.CustomResource.__init__(obj, row["type"], row["name"], row["inputs"], opts)
            made.append(obj)
        return pulumi.Output.all(*[m.urn for m in made])

    program()


def main(argv: list[str]) -> None:
    if argv[:1] == ["record"] and len(argv) == 4:
        record(argv[1], Path(argv[2]), Path(argv[3]))
    elif argv[:1] == ["replay"] and len(argv) == 2:
        replay(Path(argv[1]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
