"""The recording engine: runs ``__main__.py`` under Pulumi mocks and keeps every registration with its parent.

Tests use the same engine, so the preview and the tests can never disagree about what the program creates.
Pitfalls handled here (see shared facts "pulumi-without-cli"): the root stack is reset per run, config keys use the
project's namespace, mocks are installed before any resource exists, and runs use preview=False so applies run.
The config reaches the program the way the CLI's language host hands it over (``PULUMI_CONFIG``), so the offline run
and ``pulumi up`` read it through the same public channel (``compose/config.py``).
"""

from __future__ import annotations

import json
import logging
import os
import runpy
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pulumi
from google.protobuf import struct_pb2
from pulumi.runtime import rpc
from pulumi.runtime.proto import source_pb2

from preview.gc_pause import paused_gc
from preview.mocks.cloud import RecordingMocks
from preview.sdk_private import RESOURCE_MODULE, MockMonitor
from stacks.validate.secrets import secure_keys
from stacks.validate.stack_file import read_stack_file as read_stack_file  # the one reader, re-exported

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PROJECT = "gpu-cluster"
SECRET = "[secret]"


_ENGINE_LOG = logging.getLogger("gpu-cluster.offline-engine")
_ENGINE_LOG.addHandler(logging.NullHandler())
_ENGINE_LOG.propagate = False  # pulumi.log.* from the program: the report already shows spec warnings


@dataclass
class Registered:
    type: str
    name: str
    urn: str
    parent_urn: str
    custom: bool
    inputs: dict[str, Any]
    """Engine wire names (camelCase); numbers arrive as floats; secrets stay wrapped (see ``redacted``)."""
    raw_inputs: struct_pb2.Struct
    dependencies: list[str] = field(default_factory=list)
    ignore_changes: list[str] = field(default_factory=list)
    protect: bool = False
    provider: str = ""
    delete_before_replace: bool = False
    custom_timeouts: dict[str, str] = field(default_factory=dict)
    replace_on_changes: list[str] = field(default_factory=list)
    """The ``customTimeouts`` option as set (``create``/``update``/``delete``: ``"32m"``); unset ones left out."""
    transforms: list[Any] = field(default_factory=list)
    """The resource's ``transforms`` option (the Python callables). The mocks never run them: a kustomize Directory's
    children are not expanded offline, so tests call these to see what they would do."""

    @property
    def redacted_inputs(self) -> dict[str, Any]:
        return redact(self.inputs)


def redact(value: Any) -> Any:
    """Replace every Pulumi secret with a marker, so nothing secret reaches output or logs."""
    if rpc.is_rpc_secret(value):
        return SECRET
    if isinstance(value, dict):
        return {k: redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class RecordingMonitor(MockMonitor):
    def __init__(self, mocks: pulumi.runtime.Mocks):
        super().__init__(mocks)
        self.registered: list[Registered] = []

    def RegisterResource(self, request: Any) -> Any:
        resp = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            copy = struct_pb2.Struct()
            copy.CopyFrom(request.object)
            self.registered.append(
                Registered(
                    type=request.type,
                    name=request.name,
                    urn=resp.urn,
                    parent_urn=request.parent,
                    custom=request.custom,
                    inputs=rpc.deserialize_properties(request.object),
                    raw_inputs=copy,
                    dependencies=list(request.dependencies),
                    ignore_changes=list(request.ignoreChanges),
                    protect=bool(request.protect),
                    provider=request.provider,
                    delete_before_replace=bool(request.deleteBeforeReplace),
                    custom_timeouts={
                        k: v for k in ("create", "update", "delete") if (v := getattr(request.customTimeouts, k, ""))
                    },
                    replace_on_changes=list(request.replaceOnChanges),
                    transforms=getattr(self.mocks.last, "transforms", []),
                )
            )
        return resp


CONFIG_VARIABLES = ("PULUMI_CONFIG", "PULUMI_CONFIG_SECRET_KEYS")
"""What pulumi-language-python sets on the program's process: the stack config as one JSON object of strings, and
the JSON list of the keys that were ``secure:`` in the stack file."""


def language_host_environment(config: dict[str, Any], secret_keys: list[str] | None = None) -> dict[str, str]:
    """``CONFIG_VARIABLES`` for ``config`` as the CLI would set them: objects JSON-encoded, strings as they are. The
    CLI decrypts ``secure:`` values first; offline they stay as written (the program reads them as placeholders),
    and every key holding one anywhere is listed as secret. ``secret_keys`` given: the config is already decrypted
    (a test playing the CLI) and these keys are the secret ones."""
    flat = {k: (v if isinstance(v, str) else json.dumps(v)) for k, v in config.items()}
    keys = secure_keys(config) if secret_keys is None else sorted(secret_keys)
    return {"PULUMI_CONFIG": json.dumps(flat), "PULUMI_CONFIG_SECRET_KEYS": json.dumps(keys)}


@contextmanager
def restored_config_environment() -> Iterator[None]:
    """Put ``CONFIG_VARIABLES`` back as they were on exit, so one offline run's config never reaches the next
    process this one starts (the policy pack subprocess) or a later run."""
    saved = {name: os.environ.get(name) for name in CONFIG_VARIABLES}
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def install_mocks(
    config: dict[str, Any] | None = None,
    stack: str = "dev",
    secret_keys: list[str] | None = None,
    stack_references: dict[str, dict[str, Any]] | None = None,
) -> RecordingMonitor:
    """Fresh root stack, fresh config, fresh recorder. Call before any program code creates a resource.

    The config goes into ``CONFIG_VARIABLES`` (left set: wrap the run in ``restored_config_environment``, as
    ``run_program`` does) and, as pulumi-language-python-exec does before it runs a program, into the SDK's config.
    """
    os.environ.update(language_host_environment(config or {}, secret_keys))
    pulumi.runtime.set_all_config(pulumi.runtime.get_config_env(), pulumi.runtime.get_config_secret_keys_env())
    pulumi.runtime.reset_options(project=PROJECT, stack=stack, preview=False)  # public reset: no root stack yet
    monitor = RecordingMonitor(RecordingMocks(stack_references))
    pulumi.runtime.set_mocks(
        monitor.mocks, project=PROJECT, stack=stack, preview=False, monitor=monitor, logger=_ENGINE_LOG
    )
    return monitor


def stack_file(stack: str, root: Path = PROJECT_ROOT) -> Path:
    return root / f"Pulumi.{stack}.yaml"


@dataclass
class Recording:
    resources: list[Registered]
    outputs: dict[str, Any]


def run_program(
    config: dict[str, Any],
    stack: str = "dev",
    main: Path = PROJECT_ROOT / "__main__.py",
    secret_keys: list[str] | None = None,
    stack_references: dict[str, dict[str, Any]] | None = None,
) -> Recording:
    """Run the Pulumi program exactly as ``pulumi preview`` would, against the recording engine (``secret_keys``:
    see ``language_host_environment``; ``stack_references``: the outputs of stacks the program references)."""
    if stack_references is None:
        stack_references = referenced_outputs(config, main)
    with restored_config_environment():
        monitor = install_mocks(config, stack, secret_keys, stack_references)
        outputs = execute_program(main)
    return Recording(resources=monitor.registered, outputs=outputs)


class MissingStackReference(LookupError):
    """A fleet manager names a worker stack whose ``Pulumi.<stack>.yaml`` is not in the repository."""

    def __init__(self, reference: str, path: Path):
        super().__init__(f"{reference}: no stack file {path.name}")
        self.reference, self.path = reference, path


def fleet_workers(config: dict[str, Any]) -> list[tuple[str, str]]:
    """``(name, <org>/<project>/<stack>)`` of each worker a manager's config lists (as written; unvalidated)."""
    raw = config.get(f"{PROJECT}:fleet")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            return []
    if not isinstance(raw, dict) or raw.get("role") != "manager" or not isinstance(raw.get("workers"), list):
        return []
    return [
        (str(w.get("name")), w["stack"])
        for w in raw["workers"]
        if isinstance(w, dict) and isinstance(w.get("stack"), str)
    ]


def fleet_manager_of(config: dict[str, Any]) -> str | None:
    """A worker's ``fleet.manager`` (``<org>/<project>/<stack>``) as written; None for any other stack."""
    raw = config.get(f"{PROJECT}:fleet")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            return None
    if not isinstance(raw, dict) or raw.get("role") != "worker" or not isinstance(raw.get("manager"), str):
        return None
    return raw["manager"]


def referenced_outputs(config: dict[str, Any], main: Path = PROJECT_ROOT / "__main__.py") -> dict[str, dict[str, Any]]:
    """Offline, a StackReference reads the referenced stack's outputs by running that stack's file (the last
    segment of ``<org>/<project>/<stack>``, next to ``main``) through this same engine. A worker's own references
    are not followed (a worker that is itself a manager is refused by the preview before this runs). A worker's
    reference to its manager has no outputs offline: the manager's egress addresses are made at its deploy, so they
    are unknown here (``stacks/plan/fleet_egress.py``), and the worker admits none of them in the recording."""
    out: dict[str, dict[str, Any]] = {}
    manager = fleet_manager_of(config)
    if manager is not None:
        out[manager] = {}
    for _, ref in fleet_workers(config):
        name = ref.rsplit("/", 1)[-1]
        path = stack_file(name, main.parent)
        if not path.exists():
            raise MissingStackReference(ref, path)
        worker = read_stack_file(path)
        back = fleet_manager_of(worker)  # the worker's reference to its manager: no outputs offline (see above)
        out[ref] = run_program(worker, name, main, stack_references={back: {}} if back else {}).outputs
    return out


def execute_program(main: Path = PROJECT_ROOT / "__main__.py") -> dict[str, Any]:
    """Run ``main`` under the mocks already installed; return its stack outputs (resolved)."""
    if str(main.parent) not in sys.path:
        sys.path.insert(0, str(main.parent))
    outputs: dict[str, Any] = {}

    @pulumi.runtime.test
    def _run() -> Any:
        runpy.run_path(str(main), run_name="__main__")
        exported = getattr(pulumi.runtime.get_root_resource(), "outputs", None)  # the root Stack's exports
        return pulumi.Output.all(**exported).apply(outputs.update) if exported else None

    cwd = os.getcwd()
    try:
        os.chdir(main.parent)
        with no_stack_traces(), paused_gc():
            _run()
    finally:
        os.chdir(cwd)
    return outputs


@contextmanager
def no_stack_traces() -> Iterator[None]:
    """The SDK captures the Python stack of every registration (``traceback.extract_stack``, a ``stat`` per frame's
    file) for the engine's stack trace and source position; the mocks drop both, so the offline run skips the
    capture. Restored afterwards (``pulumi preview`` under the CLI never runs this)."""
    saved = RESOURCE_MODULE._get_stack_trace
    RESOURCE_MODULE._get_stack_trace = _empty_stack_trace
    try:
        yield
    finally:
        RESOURCE_MODULE._get_stack_trace = saved


def _empty_stack_trace() -> source_pb2.StackTrace:
    return source_pb2.StackTrace()
