#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for the Slurm test (tests/slurm.rs) and for trying
# `banditbench slurm --submit` by hand. Debian/Ubuntu, as root; no systemd needed: the daemons are
# started directly and stopped by PID.
#
#   scripts/ci/slurm.sh up      install munge + slurmctld + slurmd + slurm-client (apt-get) if
#                               missing, write /etc/slurm/slurm.conf, start the daemons, wait
#                               until the node is idle
#   scripts/ci/slurm.sh down    stop the daemons
#   scripts/ci/slurm.sh status  sinfo and the daemons' PIDs
#
# What it takes on a container without systemd or cgroup delegation (each measured to matter):
# proctrack/linuxproc and task/none (with the cgroup plugins every step fails, yet the job is
# reported COMPLETED with exit code 0); batch_sched_delay=0 (no wait before batch jobs start);
# kill_invalid_depend (else a merge job waits forever after a failed shard); a state directory
# owned by SlurmUser; /run/munge made by hand. There is no accounting (no sacct): poll squeue,
# then read `scontrol show job`.
set -euo pipefail

STATE=/var/spool/slurmctld
SPOOL=/var/spool/slurmd
LOGS=/var/log/slurm
CONF=/etc/slurm/slurm.conf

need_root() {
    if [ "$(id -u)" != 0 ]; then
        echo "scripts/ci/slurm.sh: run as root (it installs packages and starts daemons)" >&2
        exit 1
    fi
}

install() {
    if command -v slurmctld >/dev/null && command -v slurmd >/dev/null \
        && command -v sbatch >/dev/null && command -v munged >/dev/null; then
        return
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq munge slurmctld slurmd slurm-client >/dev/null
}

configure() {
    local host cpus mem
    host=$(hostname -s)
    cpus=$(nproc)
    mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
    mkdir -p /etc/slurm "$STATE" "$SPOOL" "$LOGS" /run/munge
    chown slurm:slurm "$STATE" "$LOGS"
    chown munge:munge /run/munge
    chmod 0755 /run/munge
    if [ ! -s /etc/munge/munge.key ]; then
        mkdir -p /etc/munge
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    fi
    chown munge:munge /etc/munge/munge.key
    chmod 0400 /etc/munge/munge.key
    cat >"$CONF" <<CONF
# Written by banditbench scripts/ci/slurm.sh: a one-node cluster for tests.
ClusterName=banditbench
SlurmctldHost=${host}(127.0.0.1)
SlurmUser=slurm
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=${STATE}
SlurmdSpoolDir=${SPOOL}
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=${LOGS}/slurmctld.log
SlurmdLogFile=${LOGS}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
DependencyParameters=kill_invalid_depend
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SlurmdTimeout=60
MinJobAge=600
NodeName=${host} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=${mem} State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
}

pid_of() {
    [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null && cat "$1"
}

start() {
    if ! pgrep -x munged >/dev/null; then
        runuser -u munge -- /usr/sbin/munged
    fi
    pid_of /run/slurmctld.pid >/dev/null || slurmctld
    pid_of /run/slurmd.pid >/dev/null || slurmd
    local host t
    host=$(hostname -s)
    for t in $(seq 1 60); do
        state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
        case "$state" in
            idle*|mixed*|allocated*) echo "slurm: node $host is $state"; return 0 ;;
            *drain*|*down*) scontrol update nodename="$host" state=resume 2>/dev/null || true ;;
        esac
        sleep 0.5
    done
    echo "scripts/ci/slurm.sh: the node did not become idle (state '${state:-none}'); see $LOGS" >&2
    tail -n 20 "$LOGS"/*.log >&2 || true
    exit 1
}

stop() {
    local f pid
    for f in /run/slurmd.pid /run/slurmctld.pid; do
        if pid=$(pid_of "$f"); then
            kill "$pid" || true
        fi
    done
    pkill -x munged 2>/dev/null || true
}

case "${1:-}" in
    up) need_root; install; configure; start ;;
    down) need_root; stop ;;
    status) sinfo || true; for f in /run/slurmctld.pid /run/slurmd.pid; do echo "$f: $(pid_of "$f" || echo not running)"; done ;;
    *) echo "usage: scripts/ci/slurm.sh up|down|status" >&2; exit 2 ;;
esac
