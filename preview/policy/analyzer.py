"""Drive a policy pack through the analyzer gRPC protocol, exactly as the Pulumi CLI does.

``SubprocessAnalyzer`` boots the pack the way the CLI's Python shim does (``python -u -m pulumi.policy <engine> .``
in the pack directory, with the interpreter of the pack's ``virtualenv``) and talks gRPC to it.
``InProcessAnalyzer`` serves the same pack through the SDK's servicer without sockets: the offline preview's default
(the same requests and responses, protobuf and all, without booting an interpreter and the gRPC round trip per
resource), and the unit tests'. ``python -m preview --policy-pack-subprocess`` (or ``--policy-pack DIR``) takes the
CLI's path; ``tests/policies/test_policy_paths_agree.py`` holds that both find the same on every example.
"""

from __future__ import annotations

import atexit
import os
import select
import subprocess
import sys
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

import grpc
import yaml
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import analyzer_pb2 as apb
from pulumi.runtime.proto import analyzer_pb2_grpc as agrpc

from preview.engine import PROJECT, PROJECT_ROOT, Registered
from preview.sdk_private import PolicyAnalyzerServicer

PACK_DIR = PROJECT_ROOT / "policies"
LEVELS = {apb.ADVISORY: "advisory", apb.MANDATORY: "mandatory", apb.REMEDIATE: "remediate", apb.DISABLED: "disabled"}
LEVEL_ENUM = {name: value for value, name in LEVELS.items()}
SEVERITIES = {
    apb.POLICY_SEVERITY_UNSPECIFIED: "",
    apb.POLICY_SEVERITY_LOW: "low",
    apb.POLICY_SEVERITY_MEDIUM: "medium",
    apb.POLICY_SEVERITY_HIGH: "high",
    apb.POLICY_SEVERITY_CRITICAL: "critical",
}
BOOT_TIMEOUT_S = 60
CALL_TIMEOUT_S = 120


class PolicyPackError(RuntimeError):
    """The pack could not be started or answered with an error."""


def provider_ref_urn(ref: str) -> str:
    """A provider reference is ``<provider urn>::<provider id>``."""
    return ref.rsplit("::", 1)[0] if ref else ""


class Analyzer(ABC):
    """The calls the engine makes, with requests built from the recording engine's resources."""

    @abstractmethod
    def _call(self, method: str, request: Any) -> Any: ...

    def close(self) -> None:
        pass

    def __enter__(self) -> "Analyzer":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def info(self) -> apb.AnalyzerInfo:
        return self._call("GetAnalyzerInfo", empty_pb2.Empty())

    def configure_stack(self, stack: str, project: str = PROJECT, tags: dict[str, str] | None = None) -> None:
        self._call(
            "ConfigureStack",
            apb.AnalyzerStackConfigureRequest(
                stack=stack, project=project, organization="organization", dry_run=True, tags=tags or {}
            ),
        )

    def configure(self, request: apb.ConfigureAnalyzerRequest) -> None:
        self._call("Configure", request)

    def analyze(self, resource: Registered, providers: dict[str, Registered]) -> apb.AnalyzeResponse:
        return self._call(
            "Analyze",
            apb.AnalyzeRequest(
                type=resource.type,
                name=resource.name,
                urn=resource.urn,
                properties=resource.raw_inputs,
                options=_options(resource),
                provider=_provider(resource, providers),
            ),
        )

    def analyze_stack(self, resources: list[Registered], providers: dict[str, Registered]) -> apb.AnalyzeResponse:
        request = apb.AnalyzeStackRequest()
        for r in resources:
            request.resources.append(
                apb.AnalyzerResource(
                    type=r.type,
                    name=r.name,
                    urn=r.urn,
                    properties=r.raw_inputs,
                    options=_options(r),
                    provider=_provider(r, providers),
                    parent=r.parent_urn,
                    dependencies=r.dependencies,
                )
            )
        return self._call("AnalyzeStack", request)


def _options(r: Registered) -> apb.AnalyzerResourceOptions:
    return apb.AnalyzerResourceOptions(protect=r.protect, ignoreChanges=r.ignore_changes, parent=r.parent_urn)


def _provider(r: Registered, providers: dict[str, Registered]) -> apb.AnalyzerProviderResource | None:
    p = providers.get(provider_ref_urn(r.provider))
    if p is None:
        return None
    return apb.AnalyzerProviderResource(type=p.type, properties=p.raw_inputs, urn=p.urn, name=p.name)


def pack_python(pack_dir: Path) -> str:
    """The interpreter the CLI would use: ``<virtualenv>/bin/python`` from PulumiPolicy.yaml, else this one."""
    doc = yaml.safe_load((pack_dir / "PulumiPolicy.yaml").read_text(encoding="utf-8")) or {}
    venv = ((doc.get("runtime") or {}).get("options") or {}).get("virtualenv")
    if venv:
        # absolute: the pack starts in its own directory, where a relative `--policy-pack policies` means nothing
        candidate = os.path.normpath(
            os.path.abspath(pack_dir / venv / "bin" / "python")
        )  # not resolve(): keep the venv's symlink
        if os.path.exists(candidate):
            return candidate
    return sys.executable


class SubprocessAnalyzer(Analyzer):
    def __init__(self, pack_dir: Path = PACK_DIR, python: str | None = None):
        pack_dir = Path(os.path.abspath(pack_dir))  # as given on the command line: relative to the caller's folder
        self.pack_dir = pack_dir
        self.proc = subprocess.Popen(
            [python or pack_python(pack_dir), "-u", "-m", "pulumi.policy", "127.0.0.1:0", "."],
            cwd=str(pack_dir),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None  # both PIPEs
        ready, _, _ = select.select([self.proc.stdout], [], [], BOOT_TIMEOUT_S)
        line = self.proc.stdout.readline().strip() if ready else ""
        if not line.isdigit():
            self.proc.kill()
            raise PolicyPackError(
                f"policy pack in {pack_dir} did not start (first line {line!r}): {self.proc.stderr.read()[-4000:]}"
            )
        self.port = int(line)
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.port}")
        grpc.channel_ready_future(self.channel).result(timeout=BOOT_TIMEOUT_S)
        self.stub = agrpc.AnalyzerStub(self.channel)

    def _call(self, method: str, request: Any) -> Any:
        try:
            return getattr(self.stub, method)(request, timeout=CALL_TIMEOUT_S)
        except grpc.RpcError as exc:
            raise PolicyPackError(f"policy pack {method} failed: {exc.details()}") from None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.channel.close()
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


class InProcessAnalyzer(Analyzer):
    """The SDK's servicer in this process (a private class, through preview/sdk_private.py).

    With the project's pack (``arguments`` None) it answers ``Analyze`` from a servicer holding only the resource
    rules that read the resource's type: the SDK converts a resource's props once per resource policy before the
    policy looks at the type, and every other rule returns at once without a finding, so the answer is the same
    (same diagnostics, same order) for a fraction of the conversions. ``AnalyzeStack`` runs every stack rule over one
    plain copy per resource (``policies/stack_cache.py``), with the stack's resources built once for all
    stack rules (``preview/policy/stack_once.py``); ``Analyze`` converts a resource once for all its type's rules
    (``preview/policy/shared_props.py``).
    """

    def __init__(self, arguments: dict[str, Any] | None = None):
        self._rules_by_type: dict[str, list[Any]] | None = None
        if arguments is None:
            from policies.pack import RULES, pack_arguments

            arguments = pack_arguments()
            by_type: dict[str, list[Any]] = {}
            for rule, policy in zip(RULES, arguments["policies"]):
                if not rule.stack:
                    for token in rule.applies_to:
                        by_type.setdefault(token, []).append(policy)
            self._rules_by_type = by_type
        self._args = dict(arguments)
        self._svc = self._servicer(self._args["policies"])
        self._by_type: dict[str, Any] = {}
        self._setup: list[tuple[str, Any]] = []
        """ConfigureStack and Configure requests, replayed to each per-type servicer."""

    def _servicer(self, policies: list[Any]) -> Any:
        args = {
            k: v for k, v in self._args.items() if k not in ("name", "policies", "enforcement_level", "initial_config")
        }
        return PolicyAnalyzerServicer(
            self._args["name"],
            "0.0.1",
            policies,
            self._args["enforcement_level"],
            self._args.get("initial_config"),
            **args,
        )

    def _call(self, method: str, request: Any) -> Any:
        if method in ("Configure", "ConfigureStack"):
            self._setup = [(m, r) for m, r in self._setup if m != method] + [(method, request)]
            for svc in self._by_type.values():
                getattr(svc, method)(request, None)
        if method == "Analyze" and self._rules_by_type is not None:
            return self._analyze_by_type(request)
        if method == "AnalyzeStack":
            from policies.stack_cache import one_conversion
            from preview.policy.stack_once import analyze_stack

            with one_conversion():
                return analyze_stack(self._svc, request)
        return getattr(self._svc, method)(request, None)

    def _analyze_by_type(self, request: apb.AnalyzeRequest) -> apb.AnalyzeResponse:
        assert self._rules_by_type is not None
        policies = self._rules_by_type.get(request.type)
        if not policies:
            return apb.AnalyzeResponse()  # no resource rule reads this type: every one would return at once
        svc = self._by_type.get(request.type)
        if svc is None:
            svc = self._by_type[request.type] = self._servicer(policies)
            for method, setup in self._setup:
                getattr(svc, method)(setup, None)
        from policies.stack_cache import one_conversion
        from preview.policy.shared_props import shared_conversions

        with shared_conversions(), one_conversion():  # one conversion (the SDK's, then plain data) for all its rules
            return svc.Analyze(request, None)


_shared: dict[Path, SubprocessAnalyzer] = {}


def shared_analyzer(pack_dir: Path = PACK_DIR) -> SubprocessAnalyzer:
    """One booted pack per process (the preview CLI runs once; tests reuse it): closed at exit."""
    analyzer = _shared.get(pack_dir)
    if analyzer is None or analyzer.proc.poll() is not None:
        analyzer = _shared[pack_dir] = SubprocessAnalyzer(pack_dir)
        atexit.register(analyzer.close)
    return analyzer


_in_process: list[InProcessAnalyzer] = []


def shared_in_process_analyzer() -> InProcessAnalyzer:
    """The project's pack served in this process, built once (each check configures it afresh)."""
    if not _in_process:
        _in_process.append(InProcessAnalyzer())
    return _in_process[0]


def to_struct(data: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(data)
    return s
