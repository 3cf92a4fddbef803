"""Validate the Helm chart: `helm lint`, `helm template`, and every object against Kubernetes' schemas.

    scripts/deploy_check.sh     (makes the tools' virtualenv and runs this with it)

Helm here is Helm's own Go SDK (v4) through helm-python-sdk's C library: no helm binary is to
be had on these machines (no package has one; Go modules are out of reach). Its lint is `helm
lint --strict` and its render is `helm template`. The schemas are kubernetes-validate's, which
carries Kubernetes' JSON schemas for every minor version (1.25 and later) in its wheel, so nothing
is fetched: each rendered object is checked as kubeconform -strict does (unknown fields refused),
for the chart's oldest Kubernetes (its kubeVersion) and the newest the package has.

Beyond the schemas, what the issue asks of the chart is asserted on the rendered objects (probes,
the hook, non-root, read-only root, resources, secrets only by reference).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import helm_python as helm
import kubernetes_validate
import yaml
from kubernetes_validate.utils import latest_version

CHART = Path(__file__).resolve().parent.parent / "deploy" / "helm" / "campus-mcp"
OLDEST = "1.27.0"  # Chart.yaml's kubeVersion

# Each value set renders a different shape of the chart: the defaults; everything optional on.
VALUE_SETS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "every option": {
        "web": {"autoscaling": {"enabled": True}, "nodeSelector": {"campus/role": "mcp"}},
        "worker": {"replicas": 2},
        "secret": {"keys": {"metricsToken": "metrics-token"}},
        "imagePullSecrets": [{"name": "campus-registry"}],
    },
    "no ingress, no policy, no hook": {
        "ingress": {"enabled": False},
        "networkPolicy": {"enabled": False},
        "migration": {"enabled": False},
    },
}

problems: list[str] = []


def problem(text: str) -> None:
    problems.append(text)
    print(f"  FAIL {text}")


def lint(name: str, values: dict[str, Any]) -> None:
    report = helm.lint(str(CHART), values, strict=True, kube_version=f"v{OLDEST}")
    findings = [m for m in report["messages"] if m["severity"] >= 2] + [{"error": e} for e in report["errors"]]
    for finding in findings:
        problem(f"helm lint ({name}): {finding.get('path', '')} {finding['error']}")
    infos = [m["error"] for m in report["messages"] if m["severity"] < 2]
    print(
        f"  helm lint --strict ({name}): {len(findings)} problems" + (f" (notes: {'; '.join(infos)})" if infos else "")
    )


def render(name: str, values: dict[str, Any]) -> list[dict[str, Any]]:
    with helm.Chart.load(str(CHART)) as chart:
        manifests = chart.render(values, name="campus-mcp", namespace="campus-mcp", is_install=True)
    objects = []
    for template, text in sorted(manifests.items()):
        if not template.endswith((".yaml", ".yml")):
            continue
        for document in yaml.safe_load_all(text):
            if document:
                document.setdefault("metadata", {}).setdefault("namespace", "campus-mcp")
                objects.append(document)
    kinds = sorted(f"{o['kind']}/{o['metadata']['name']}" for o in objects)
    print(f"  helm template ({name}): {len(objects)} objects: {', '.join(kinds)}")
    return objects


def validate(name: str, objects: list[dict[str, Any]]) -> None:
    versions = (OLDEST, latest_version())
    for version in versions:
        failed = 0
        for document in objects:
            try:
                kubernetes_validate.validate(document, version, strict=True)
            except kubernetes_validate.ValidationError as error:
                failed += 1
                problem(f"schema {version} ({name}): {document['kind']}/{document['metadata']['name']}: {error}")
            except kubernetes_validate.SchemaNotFoundError as error:
                failed += 1
                problem(f"schema {version} ({name}): {error}")
        print(f"  Kubernetes {version} schemas, strict ({name}): {len(objects) - failed} valid, {failed} invalid")


def by_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def container(workload: dict[str, Any]) -> dict[str, Any]:
    spec = workload["spec"]["template"]["spec"]
    return dict(spec["containers"][0]) | {"_pod": spec}


def check_shape(name: str, objects: list[dict[str, Any]], values: dict[str, Any]) -> None:
    """What the issue asks of the chart, read off the rendered objects."""
    before = len(problems)
    deployments = {d["metadata"]["labels"]["app.kubernetes.io/component"]: d for d in by_kind(objects, "Deployment")}
    if set(deployments) != {"web", "worker"}:
        problem(f"{name}: Deployments {sorted(deployments)}, not web and worker")
        return
    web = container(deployments["web"])
    if web.get("readinessProbe", {}).get("httpGet", {}).get("path") != "/readyz":
        problem(f"{name}: web's readiness probe is not /readyz")
    if web.get("livenessProbe", {}).get("httpGet", {}).get("path") != "/healthz":
        problem(f"{name}: web's liveness probe is not /healthz")
    if "--no-migrate" not in web["args"]:
        problem(f"{name}: web migrates at its start beside the migration job")
    for component, workload in deployments.items():
        c = container(workload)
        pod, own = c["_pod"].get("securityContext", {}), c.get("securityContext", {})
        if not (pod.get("runAsNonRoot") and pod.get("runAsUser", 0) > 0):
            problem(f"{name}: {component} may run as root")
        if not own.get("readOnlyRootFilesystem") or own.get("allowPrivilegeEscalation", True):
            problem(f"{name}: {component}'s root is writable or it may gain privileges")
        if not c.get("resources", {}).get("requests", {}).get("memory"):
            problem(f"{name}: {component} requests no memory")
        if any("value" in e for e in c.get("env", [])):
            problem(f"{name}: {component} has a setting written into its env, not from the ConfigMap or Secret")
        refs = {e["name"] for e in c.get("env", []) if "secretKeyRef" in e.get("valueFrom", {})}
        if not {"CAMPUS_MCP_SECRET_KEY", "CAMPUS_MCP_DATABASE_URL", "CAMPUS_MCP_REDIS_URL"} <= refs:
            problem(f"{name}: {component} does not take the key, database and Redis URLs from the Secret")
        if not any("configMapRef" in source for source in c.get("envFrom", [])):
            problem(f"{name}: {component} does not take its settings from the ConfigMap")
    if by_kind(objects, "Secret"):
        problem(f"{name}: the chart renders a Secret (secrets must come from the operator's Secret)")
    if not by_kind(objects, "Service") or not by_kind(objects, "PodDisruptionBudget"):
        problem(f"{name}: no Service or no PodDisruptionBudget")
    jobs = by_kind(objects, "Job")
    if values.get("migration", {}).get("enabled", True):
        hooks = [j["metadata"].get("annotations", {}).get("helm.sh/hook", "") for j in jobs]
        if hooks != ["pre-install,pre-upgrade"] or container(jobs[0])["args"] != ["campus-mcp", "db", "upgrade"]:
            problem(f"{name}: no migration Job as a pre-install,pre-upgrade hook running db upgrade: {hooks}")
    autoscaled = values.get("web", {}).get("autoscaling", {}).get("enabled")
    if autoscaled and ("replicas" in deployments["web"]["spec"] or not by_kind(objects, "HorizontalPodAutoscaler")):
        problem(f"{name}: autoscaling on, but web has fixed replicas or no HorizontalPodAutoscaler")
    if len(problems) == before:
        print(f"  the chart's promises ({name}): probes, hook, non-root, read-only root, resources, secret refs hold")


def main() -> int:
    print(
        f"Helm SDK {helm.helm_sdk_version()} (helm-python-sdk's libhelm_c {helm.helm_c_version()}); "
        f"kubernetes-validate {kubernetes_validate.__version__ if hasattr(kubernetes_validate, '__version__') else ''}"
    )
    for name, values in VALUE_SETS.items():
        lint(name, values)
        objects = render(name, values)
        validate(name, objects)
        check_shape(name, objects, values)
    checks = len(VALUE_SETS) * 4
    print(f"chart: {checks - min(len(problems), checks)} passed, {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
