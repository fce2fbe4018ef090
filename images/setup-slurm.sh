#!/usr/bin/env bash
# setup-slurm.sh: make a single-node Slurm controller and node answer on this machine
# (`make slurm`). See shared/notes/slurm.md.
#
# Run as root. Idempotent: every step checks first and does only what is missing.
#
#  1. If Slurm already answers (the controller replies to `scontrol ping` and a partition
#     has a node that can run jobs), nothing is changed.
#  2. Otherwise the OS packages slurm-wlm and munge are installed, a munge key is made
#     (when none exists) and munged is started; /etc/slurm/slurm.conf is written for one
#     node, this host, with one partition `main` (a previous file is kept as
#     slurm.conf.envgap-backup); slurmctld and slurmd are started (logs under
#     /var/log/slurm) and the node is resumed when it is down or drained.
#
# The node's cores are shared by up to 4 jobs each (OverSubscribe=FORCE:4): an envgap
# worker mostly waits for its containers, which run under the container engine, outside
# the job's allocation.
#
# The last line printed is `slurm: partition main answers` (or the partitions found when
# Slurm was already running).
set -euo pipefail

CONF_DIR=/etc/slurm
CONF=$CONF_DIR/slurm.conf
WAIT_SECONDS="${ENVGAP_SLURM_WAIT:-60}"

log() { echo "setup-slurm: $*" >&2; }
die() { echo "setup-slurm: error: $*" >&2; exit 1; }
# shellcheck source=images/lib-apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-apt.sh"

# usable_partitions: the partitions that are up with at least one node that can take a job
# (a state with a suffix such as idle* means the node does not answer).
usable_partitions() {
	command -v sinfo >/dev/null 2>&1 || return 1
	timeout 10 scontrol ping 2>/dev/null | grep -q 'is UP' || return 1
	timeout 10 sinfo -h -o '%P %a %t' 2>/dev/null |
		awk '$2 == "up" && $3 ~ /^(idle|mix|alloc|comp)/ && $3 !~ /[*~#!%$@^-]$/ { sub(/\*$/, "", $1); print $1 }' | sort -u
}

# ours_down: the single-node Slurm this script set up lost its slurmd (the controller
# takes minutes to notice).
ours_down() {
	grep -q '^# Written by envgap images/setup-slurm.sh' "$CONF" 2>/dev/null || return 1
	! { [ -f /run/slurmd.pid ] && kill -0 "$(cat /run/slurmd.pid)" 2>/dev/null; }
}

# 1. A Slurm that answers is used as it is.
if ! ours_down && parts=$(usable_partitions) && [ -n "$parts" ]; then
	log "Slurm already answers; nothing to do"
	echo "slurm: partition $(echo $parts | tr ' ' ',') answers"
	exit 0
fi

[ "$(id -u)" = 0 ] || die "run as root (it installs packages and starts system daemons)"

# 2a. Packages, only what is missing.
apt_install slurm-wlm slurmctld slurmd slurm-client munge

# 2b. munge: a key, then the daemon.
mkdir -p /etc/munge /run/munge /var/log/munge /var/lib/munge
if [ ! -s /etc/munge/munge.key ]; then
	dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
	log "made a munge key"
fi
chown munge:munge /etc/munge/munge.key /run/munge /var/log/munge /var/lib/munge
chmod 400 /etc/munge/munge.key
chmod 700 /var/log/munge
if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
	log "munged answers"
else
	log "starting munged"
	# Run as the munge user where possible; as root it works too (with --force).
	# The daemons start with no descriptor of ours (own_fds_only, images/lib-apt.sh).
	if command -v runuser >/dev/null 2>&1 && own_fds_only runuser -u munge -- /usr/sbin/munged 2>/dev/null; then :; else
		own_fds_only /usr/sbin/munged --force
	fi
	for _ in $(seq 1 20); do
		munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
		sleep 0.5
	done
	munge -n | unmunge >/dev/null || die "munged does not answer (munge -n | unmunge)"
fi

# 2c. slurm.conf for this one machine.
host=$(hostname -s)
cpus=$(nproc)
# RealMemory must not exceed what slurmd finds, or the node is marked invalid.
mem_mb=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
want_conf="# Written by envgap images/setup-slurm.sh (see shared/notes/slurm.md).
ClusterName=envgap
SlurmctldHost=$host
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmdSpoolDir=/var/spool/slurmd
StateSaveLocation=/var/spool/slurmctld
SlurmUser=root
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
# Failed array tasks may be requeued (sbatch --requeue); a job started at most this often.
MaxArraySize=1001
NodeName=$host CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4"
mkdir -p "$CONF_DIR" /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
conf_changed=0
if [ ! -f "$CONF" ] || [ "$(cat "$CONF")" != "$want_conf" ]; then
	if [ -f "$CONF" ]; then
		cp -p "$CONF" "$CONF.envgap-backup"
		log "previous $CONF saved as $CONF.envgap-backup"
	fi
	printf '%s\n' "$want_conf" >"$CONF"
	conf_changed=1
	log "wrote $CONF"
fi

# 2d. The daemons. A configuration change restarts the ones running with the old one.
pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
if [ "$conf_changed" = 1 ]; then
	for pf in /run/slurmd.pid /run/slurmctld.pid; do
		if pid_alive "$pf"; then
			kill "$(cat "$pf")" 2>/dev/null || true
			for _ in $(seq 1 20); do pid_alive "$pf" || break; sleep 0.5; done
		fi
	done
fi
if timeout 10 scontrol ping 2>/dev/null | grep -q 'is UP'; then
	log "slurmctld answers"
else
	log "starting slurmctld (log: /var/log/slurm/slurmctld.log)"
	own_fds_only /usr/sbin/slurmctld
	for _ in $(seq 1 "$WAIT_SECONDS"); do
		timeout 10 scontrol ping 2>/dev/null | grep -q 'is UP' && break
		sleep 1
	done
	timeout 10 scontrol ping 2>/dev/null | grep -q 'is UP' || die "slurmctld does not answer; see /var/log/slurm/slurmctld.log"
fi
if pid_alive /run/slurmd.pid; then
	log "slurmd runs"
else
	log "starting slurmd (log: /var/log/slurm/slurmd.log)"
	own_fds_only /usr/sbin/slurmd
fi

# 2e. The node: wait until it registers; resume it when it is down or drained (a node
# that was down when the controller restarted stays down otherwise).
for _ in $(seq 1 "$WAIT_SECONDS"); do
	state=$(timeout 10 sinfo -h -n "$host" -o '%t' 2>/dev/null | head -n 1 || true)
	case "$state" in
	idle* | mix* | alloc* | comp*) break ;;
	down* | drain* | drng*) scontrol update NodeName="$host" State=RESUME 2>/dev/null || true ;;
	esac
	sleep 1
done
parts=$(usable_partitions || true)
[ -n "$parts" ] || die "the node $host does not take jobs (sinfo: $(sinfo -h -o '%P %a %t' 2>&1 | tr '\n' ' ')); see /var/log/slurm/slurmd.log"
echo "slurm: partition $(echo $parts | tr ' ' ',') answers"
