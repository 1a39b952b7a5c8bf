"""A stand-in for the Kubernetes API server, for the rendered Resume/SuspendProgram (``stacks/plan/slurm_scaling.py``):
HTTPS with a certificate for ``kubernetes.default.svc`` signed by a throwaway CA, a bearer token, and the three calls
the programs make (GET and merge-PATCH a NodeSet's ``scale`` subresource, DELETE a pod), answered as the API server
does (compact JSON; a Scale's ``spec.replicas`` is omitted at 0, as ``autoscaling/v1`` has it ``omitempty``).

Stricter than needed where the real server is strict: a wrong token gets 401, a PATCH without
``application/merge-patch+json`` 415; and a client that half-closes its side before the answer is recorded as an
error and gets none (Go's HTTP server, which the API server is, takes the half-close for a closed connection
and cancels the request).
"""

from __future__ import annotations

import json
import re
import secrets
import select
import socket
import ssl
import subprocess
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from stacks.plan.slurm_scaling import API_ADDRESS, NODESET_PREFIX, SERVICE_ACCOUNT_DIR, ScalingPlan
from tests.support.slurm.netns import in_namespace
from tests.support.slurm.real import Workdir
from tests.support.slurm.root import Chroot

SCALE = re.compile(r"^/apis/slinky\.slurm\.net/v1beta1/namespaces/([^/]+)/nodesets/([^/]+)/scale$")
POD = re.compile(r"^/api/v1/namespaces/([^/]+)/pods/([^/]+)$")


def make_pki(directory: Path, name: str) -> None:
    """ca.crt, server.crt and server.key in ``directory``: a CA and a serving certificate for DNS ``name``."""
    directory.mkdir(parents=True, exist_ok=True)

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", "/CN=fake-cluster-ca")
    openssl("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=kube-apiserver")
    (directory / "san.ext").write_text(f"subjectAltName=DNS:{name}\n")
    openssl(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.crt",
        "-days",
        "1",
        "-extfile",
        "san.ext",
    )


@dataclass
class FakeKubeApi:
    pki: Path
    """Where ``make_pki`` wrote the CA and the serving certificate."""
    namespace: str
    replicas: dict[str, int]
    """NodeSet name -> spec.replicas."""
    token: str = field(default_factory=lambda: secrets.token_hex(16))
    calls: list[tuple[str, str, str]] = field(default_factory=list)
    """(method, path, body) of every answered request, in order."""
    errors: list[str] = field(default_factory=list)
    netns: str | None = None
    """The network namespace to listen in: the test session's (``Chroot.netns``), where slurmctld runs the programs
    and ``127.0.0.1`` is that namespace's own loopback. None: this process's namespace."""

    def __post_init__(self) -> None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.pki / "server.crt", self.pki / "server.key")
        listen = lambda: ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))  # noqa: E731
        self.server = in_namespace(self.netns, listen) if self.netns else listen()
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.lock = threading.Lock()
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def scale(self, name: str) -> dict:
        n = self.replicas[name]
        return {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": {"replicas": n} if n else {},
            "status": {"replicas": n},
        }

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _half_closed(sock: socket.socket) -> bool:
    """Did the client end its side (EOF or TLS close_notify) right after its request?"""
    ready, _, _ = select.select([sock], [], [], 0.3)
    if not ready:
        return False
    sock.settimeout(0.3)
    try:
        return sock.recv(1) == b""
    except (ssl.SSLWantReadError, socket.timeout):
        return False
    except OSError:
        return True
    finally:
        sock.settimeout(None)


def _handler(api: FakeKubeApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base class's name)
            pass

        def _answer(self, status: int, doc: dict) -> None:
            body = json.dumps(doc, separators=(",", ":")).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _serve(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            if _half_closed(self.connection):
                api.errors.append(f"{self.command} {self.path}: the client closed its side before the answer")
                self.close_connection = True
                return
            if self.headers.get("Authorization") != f"Bearer {api.token}":
                api.errors.append(f"{self.command} {self.path}: no or wrong bearer token")
                return self._answer(401, {"kind": "Status", "code": 401, "reason": "Unauthorized"})
            with api.lock:
                api.calls.append((self.command, self.path, body))
                scale, pod = SCALE.match(self.path), POD.match(self.path)
                if scale and scale.group(1) == api.namespace and scale.group(2) in api.replicas:
                    name = scale.group(2)
                    if self.command == "PATCH":
                        if self.headers.get("Content-Type") != "application/merge-patch+json":
                            api.errors.append(f"PATCH {self.path}: Content-Type {self.headers.get('Content-Type')}")
                            return self._answer(415, {"kind": "Status", "code": 415})
                        api.replicas[name] = int(json.loads(body)["spec"]["replicas"])
                    if self.command in ("GET", "PATCH"):
                        return self._answer(200, api.scale(name))
                if pod and pod.group(1) == api.namespace and self.command == "DELETE":
                    return self._answer(200, {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": pod.group(2)}})
            api.errors.append(f"{self.command} {self.path}: not a call the programs should make")
            self._answer(404, {"kind": "Status", "code": 404, "reason": "NotFound"})

        do_GET = do_PATCH = do_DELETE = _serve

    return Handler


NAMESPACE = "slurm"
L4 = f"{NODESET_PREFIX}l4"


def programs_for(scaling: ScalingPlan, api: FakeKubeApi, sa_inside: str) -> dict[str, str]:
    """The rendered programs, pointed at ``api`` and at a service-account directory with its token and CA."""

    def point(text: str) -> str:
        assert text.count(f"API={API_ADDRESS}\n") == 1 and text.count(f"SA={SERVICE_ACCOUNT_DIR}\n") == 1
        return text.replace(f"API={API_ADDRESS}\n", f"API=127.0.0.1:{api.port}\n").replace(
            f"SA={SERVICE_ACCOUNT_DIR}\n", f"SA={sa_inside}\n"
        )

    return {"slurm-resume": point(scaling.resume_script()), "slurm-suspend": point(scaling.suspend_script())}


def service_account(chroot: Chroot, api: FakeKubeApi, name: str, token: str | None = None) -> Workdir:
    """What Kubernetes mounts at /var/run/secrets/kubernetes.io/serviceaccount, readable by SlurmUser."""
    sa = Workdir(chroot, name)
    sa.write("token", token or api.token)
    sa.write("ca.crt", (api.pki / "ca.crt").read_bytes())
    sa.write("namespace", NAMESPACE)
    sa.host.chmod(0o755)
    return sa
