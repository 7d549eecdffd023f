#!/usr/bin/env bash
# Checks the recipes as far as a machine without a Docker engine, a cluster or Slurm can:
#   - docker-compose.yml against the Compose schema (`docker compose config`, or the
#     Python `docker-compose` 1.29 where the plugin is missing: Debian's package);
#   - the Kubernetes set against the Kubernetes API schemas (PyPI `kubernetes-validate`,
#     installed into a throw-away venv) and `kubectl kustomize` (offline);
#   - the Slurm scripts with `bash -n` (and shellcheck if installed);
#   - every koma flag the recipes use against `koma learner|worker --help`.
# Usage: deploy/check.sh [path/to/koma]   (default target/release/koma)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
KOMA="${1:-target/release/koma}"
fail=0
step() { echo "== $*" >&2; }

step "compose"
if docker compose version >/dev/null 2>&1; then
    docker compose -f deploy/docker-compose.yml config -q
elif command -v docker-compose >/dev/null; then
    docker-compose -f deploy/docker-compose.yml config -q
else
    echo "skipped: neither 'docker compose' nor docker-compose (apt-get install docker-compose)" >&2
fi

step "kubernetes"
venv="${TMPDIR:-/tmp}/koma-deploy-check"
if [[ ! -x "$venv/bin/kubernetes-validate" ]]; then
    python3 -m venv "$venv" && "$venv/bin/pip" install -q --no-cache-dir kubernetes-validate
fi
"$venv/bin/kubernetes-validate" --strict --kubernetes-version 1.30.0 deploy/k8s/{namespace,secret,configmap,learner,workers,workers-job}.yaml
if command -v kubectl >/dev/null; then
    kubectl kustomize deploy/k8s >/dev/null
fi

step "slurm"
for f in deploy/slurm/*.sbatch deploy/slurm/local-cluster.sh; do bash -n "$f"; done
if command -v shellcheck >/dev/null; then shellcheck deploy/slurm/*.sbatch deploy/slurm/local-cluster.sh; fi

step "koma flags"
help="$("$KOMA" learner --help; "$KOMA" worker --help)"
# Flags of the other programs in the recipes (MinIO's server and client).
others='--console-address|--ignore-existing'
# shellcheck disable=SC2013 # flags are words
for flag in $(grep -hv '^\s*#' deploy/docker-compose.yml deploy/k8s/*.yaml deploy/slurm/*.sbatch \
        | grep -oE -- '--[a-z][a-z-]+' | grep -vxE -- "$others" | sort -u); do
    if ! grep -q -- "$flag" <<<"$help"; then
        echo "koma has no flag $flag (used in deploy/)" >&2
        fail=1
    fi
done
exit $fail
