#!/usr/bin/env bash
# A single-node Slurm cluster on localhost, for normtool's Slurm tests and for trying the
# `--launcher slurm` commands on a laptop: installs Debian's slurm-wlm and munge when missing
# (with sudo unless root), writes /etc/slurm/slurm.conf for this machine (its CPUs and memory,
# one partition "local"), starts munged, slurmctld and slurmd, and waits until the node is
# idle. Idempotent: a cluster already up is left as it is.
#   scripts/slurm-local.sh          start (or check) the cluster
#   scripts/slurm-local.sh --stop   stop the daemons
set -euo pipefail

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
conf=/etc/slurm/slurm.conf
state=/var/lib/normtool-slurm

stop_slurm() {
  $sudo pkill -x slurmd || true
  $sudo pkill -x slurmctld || true
  for _ in $(seq 100); do
    pgrep -x slurmd >/dev/null || pgrep -x slurmctld >/dev/null || return 0
    sleep 0.1
  done
}
if [ "${1:-}" = "--stop" ]; then
  stop_slurm
  $sudo pkill -x munged || true
  exit 0
fi

up() { sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; }

missing=()
for p in slurm-wlm munge; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "slurm-local: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# munge: the key the package created, a socket directory it may write
if [ ! -s /etc/munge/munge.key ]; then
  $sudo mungekey --create --force
  $sudo chown munge:munge /etc/munge/munge.key
fi
$sudo install -d -o munge -g munge -m 0755 /run/munge
$sudo install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
if ! pgrep -x munged >/dev/null; then
  $sudo runuser -u munge -- /usr/sbin/munged
fi

cpus=$(nproc)
mem_mb=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 * 9 / 10))
host=$(hostname -s)
$sudo install -d -m 0755 "$state" "$state/ctld" "$state/d" /var/log/slurm
wanted=$(cat <<EOF
# written by normtool's scripts/slurm-local.sh: one node, this machine
ClusterName=normtool-local
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=2
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/d
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
# a requeued task may start again after 15 s (the default holds it back 120 s)
AuthInfo=cred_expire=15
MinJobAge=300
KillWait=10
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
)
if [ -f "$conf" ] && [ "$(cat "$conf")" = "$wanted" ] && up; then
  echo "slurm-local: already up ($(sinfo -h -o '%P %D %T %c'))"
  exit 0
fi
if [ ! -f "$conf" ] || [ "$(cat "$conf")" != "$wanted" ]; then
  printf '%s\n' "$wanted" | $sudo tee "$conf" >/dev/null
  stop_slurm
fi

pgrep -x slurmctld >/dev/null || $sudo /usr/sbin/slurmctld -i
pgrep -x slurmd >/dev/null || $sudo /usr/sbin/slurmd
for _ in $(seq 60); do
  if up; then
    echo "slurm-local: up ($(sinfo -h -o '%P %D %T %c'))"
    exit 0
  fi
  sleep 0.5
done
echo "slurm-local: the node did not become idle within 30 s" >&2
sinfo >&2 || true
tail -n 20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
exit 1
