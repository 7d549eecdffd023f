#!/usr/bin/env bash
# Runs deploy/slurm/*.sbatch under a real Slurm on this one machine: installs Debian's
# slurm-wlm and munge if missing, starts munged, slurmctld and slurmd with a one-node
# configuration, submits the learner and a two-task worker array for a short CPU run of
# a tiny network, waits for Slurm's time limits to end them, and checks that the learner
# and both workers met in the run: chunks from both array tasks, checkpoints, a published
# network, and a learner stopped by the recipe's early SIGTERM (not by the time limit).
#
#   sudo deploy/slurm/local-cluster.sh [MINUTES]     # MINUTES: the learner's limit (default 6)
#
# Needs root (it installs packages and starts daemons). Everything it makes lives in
# $KOMA_SLURM_DIR (default /tmp/koma-slurm), and the daemons are stopped at the end.
# The recipes are submitted as they are, with command-line options for a machine without
# GPUs (--gres=none, one CPU and 2 GiB each) and KOMA_DEVICE=cpu for the workers.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MINUTES="${1:-6}"
DIR="${KOMA_SLURM_DIR:-/tmp/koma-slurm}"
KOMA="${KOMA:-$ROOT/target/release/koma}"
say() { echo "local-cluster: $*"; }
fail() { echo "local-cluster: FAILED: $*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || fail "run as root (it installs slurm-wlm and starts its daemons)"
(( MINUTES >= 4 )) || fail "MINUTES must be at least 4 (the learner is signalled 2 minutes before its limit)"
[[ -x "$KOMA" ]] || fail "$KOMA is missing: build it first (scripts/train.sh or cargo build --release -p koma)"
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    say "installing slurm-wlm and munge (Debian packages)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends slurm-wlm munge >/dev/null
fi

rm -rf "$DIR"
mkdir -p "$DIR"/{state,spool,log,run}
export SLURM_CONF="$DIR/slurm.conf"
host="$(hostname -s)"
cpus="$(nproc)"
mem_mib="$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))"
cat > "$SLURM_CONF" <<EOF
ClusterName=koma-local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1024
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
# Three jobs of one CPU each (the learner, two workers) must run at once to meet: the node
# offers four CPUs whatever it has (config_overrides lets slurmd accept that).
SlurmdParameters=config_overrides
NodeName=$host CPUs=$(( cpus > 4 ? cpus : 4 )) RealMemory=$mem_mib State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

stop_daemons() {
    scancel --quiet --user=root 2>/dev/null || true
    for pid in "$DIR/slurmd.pid" "$DIR/slurmctld.pid"; do
        if [[ -f $pid ]]; then kill "$(cat "$pid")" 2>/dev/null || true; fi
    done
}
trap stop_daemons EXIT
if ! pgrep -x munged >/dev/null; then
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge /etc/munge
    [[ -f /etc/munge/munge.key ]] || mungekey --create
    su -s /bin/sh munge -c munged
fi
munge -n | unmunge >/dev/null || fail "munge does not work"
slurmctld -i
slurmd
for _ in $(seq 30); do sinfo -h -o %t 2>/dev/null | grep -q idle && break; sleep 1; done
sinfo -h -o %t | grep -q idle || fail "the node did not come up: see $DIR/log/"
say "Slurm $(slurmctld -V | awk '{print $2}') is up: $(sinfo -h -o '%P %D node(s), %c CPUs, state %t')"

# The tiny network of configs/shogi-tiny.toml with settings for a run of minutes: short
# games and small chunks, so that both workers upload within the first minute.
cat > "$DIR/tiny.toml" <<'EOF'
variant = "shogi"
[model]
blocks = 2
channels = 16
value_channels = 4
value_hidden = 32
[search]
gumbel = true
gumbel_m = 4
[selfplay]
workers = 1
games_per_worker = 8
max_batch = 8
simulations_full = 8
simulations_cheap = 4
max_plies = 80
samples_per_chunk = 200
device = "cpu"
[train]
optimizer = "adamw"
lr = 0.002
batch_size = 32
replay_window = 20000
min_replay = 300
train_ratio = 4.0
checkpoint_interval = 20
log_interval = 10
[eval]
interval = 0
EOF

export KOMA_RUN="$DIR/run" KOMA KOMA_DEVICE=cpu KOMA_SPOOL="$DIR/spool-workers"
cpu_only=(--gres=none --cpus-per-task=1 --mem=2G --chdir="$ROOT")
learner_job=$(sbatch --parsable "${cpu_only[@]}" --time="$MINUTES" --output="$DIR/learner-%j.log" \
    "$ROOT/deploy/slurm/learner.sbatch" "$DIR/tiny.toml")
# The workers start once the learner has written the run's config.
for _ in $(seq 120); do [[ -f $KOMA_RUN/config.toml ]] && break; sleep 1; done
[[ -f $KOMA_RUN/config.toml ]] || fail "the learner wrote no config.toml: $(cat "$DIR"/learner-*.log)"
workers_job=$(sbatch --parsable "${cpu_only[@]}" --array=0-1 --time="$((MINUTES - 1))" \
    --output="$DIR/worker-%A_%a.log" "$ROOT/deploy/slurm/workers.sbatch")
say "submitted learner job $learner_job and worker array $workers_job; waiting for their time limits"
squeue
while squeue -h -j "$learner_job,$workers_job" 2>/dev/null | grep -q .; do sleep 10; done

say "checks"
learner_log="$DIR/learner-$learner_job.log"
chunks_by() { find "$KOMA_RUN/samples" -name "slurm-${workers_job}-$1-*" | wc -l; }
w0=$(chunks_by 0)
w1=$(chunks_by 1)
checkpoints=$(find "$KOMA_RUN/checkpoints" -name 'ckpt-*.safetensors' ! -name '*.optim.*' | wc -l)
latest_step=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['step'])" "$KOMA_RUN/models/latest.json")
state_step=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['step'])" "$KOMA_RUN/state.json")
say "chunks from array task 0: $w0, task 1: $w1; checkpoints: $checkpoints; latest.json step $latest_step; state.json step $state_step"
say "learner log (last lines):"
tail -n 4 "$learner_log"
(( w0 > 0 && w1 > 0 )) || fail "a worker uploaded no chunk"
for task in 0 1; do
    log="$DIR/worker-${workers_job}_$task.log"
    tail -n 1 "$log"
    grep -q "with the network of step [1-9]" "$log" ||
        fail "worker $task never played a network the learner published (see $log)"
done
(( checkpoints > 0 && latest_step > 0 )) || fail "no checkpoint was published"
(( latest_step == state_step )) || fail "latest.json (step $latest_step) is not the learner's last state (step $state_step)"
if grep -q "DUE TO TIME LIMIT" "$learner_log"; then
    fail "the learner ran into the time limit: the recipe's early SIGTERM did not reach it"
fi
say "OK: the learner and both workers met in $KOMA_RUN under Slurm"
