#!/usr/bin/env bash
# setup-engine.sh: make a Docker Engine API answer on this machine.
#
# Run as root. Idempotent: every step checks first and does only what is missing.
#
#  1. If a Docker API already answers (at $DOCKER_HOST, or at the default socket
#     /var/run/docker.sock), nothing is changed; the DOCKER_HOST to use is printed.
#  2. Otherwise Podman (from the OS packages) is installed and configured
#     (/etc/containers/containers.conf, see shared/notes/engine.md), and
#     `podman system service` is started detached, serving the Docker API at
#     unix:///run/podman/podman.sock (log: /var/log/envgap-podman.log).
#  3. The local base image localhost/envgap-base:bookworm is created with
#     `debootstrap --variant=minbase bookworm` (its default mirror) and
#     `podman import`, unless it already exists. No container registry is
#     reachable from these machines, so nothing is pulled.
#  4. The sandbox network `envgap` (a Podman bridge network, no DNS plugin) is
#     created unless it exists, and the host's firewall stops its containers
#     from reaching host services: from the network's subnet, the INPUT chain
#     accepts only replies and connections to sockets bound to a specific
#     address (the registry proxy listens on the network's gateway address
#     alone); a service bound to 0.0.0.0 is refused. Chain ENVGAP-SANDBOX,
#     rebuilt on every run.
#  5. Traffic from that network to anything but the host's own addresses is refused
#     by the kernel (ip rule + a prohibit-only routing table, counted by the mangle
#     chain ENVGAP-EGRESS-COUNT): the registry proxy and the egress door on the
#     gateway are the only way out (see core/egress). Image builds do not use the
#     network `envgap` and are not affected.
#
# The last line printed is always an `export DOCKER_HOST=...` line, so
#   eval "$(images/setup-engine.sh | tail -n 1)"
# sets up the calling shell.
set -euo pipefail

SOCK=/run/podman/podman.sock
PODMAN_HOST="unix://${SOCK}"
BASE_IMAGE="${ENVGAP_BASE_IMAGE:-localhost/envgap-base:bookworm}"
LOG=/var/log/envgap-podman.log
WAIT_SECONDS="${ENVGAP_ENGINE_WAIT:-60}"

log() { echo "setup-engine: $*" >&2; }
die() { echo "setup-engine: error: $*" >&2; exit 1; }
# shellcheck source=images/lib-apt.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-apt.sh"

# api_answers HOST: true if a Docker Engine API answers at HOST (unix:// or tcp://).
api_answers() {
	local host=$1
	if command -v docker >/dev/null 2>&1; then
		DOCKER_HOST="$host" timeout 10 docker version >/dev/null 2>&1 && return 0
		return 1
	fi
	case "$host" in
	unix://*) timeout 10 curl -fsS --unix-socket "${host#unix://}" http://d/_ping >/dev/null 2>&1 ;;
	tcp://*) timeout 10 curl -fsS "http://${host#tcp://}/_ping" >/dev/null 2>&1 ;;
	*) return 1 ;;
	esac
}

# 1. An engine that already answers is used as it is.
for candidate in "${DOCKER_HOST:-}" unix:///var/run/docker.sock; do
	[ -n "$candidate" ] || continue
	[ "$candidate" = "$PODMAN_HOST" ] && continue # ours: still check the base image below
	if api_answers "$candidate"; then
		log "a Docker API already answers at $candidate; nothing to do"
		echo "export DOCKER_HOST=$candidate"
		exit 0
	fi
done

[ "$(id -u)" = 0 ] || die "run as root (it installs packages and starts a system service)"

# 2a. Packages, only what is missing. catatonit is the init process of
# containers created with Init (HostConfig.Init / --init).
apt_install podman runc catatonit debootstrap iptables iproute2

# 2b. Engine configuration. default_ulimits = [] avoids "setrlimit RLIMIT_NOFILE:
# Operation not permitted"; runc (not crun) accepts hybrid cgroup v1 hosts.
CONF=/etc/containers/containers.conf
want_conf='# Written by envgap images/setup-engine.sh (see shared/notes/engine.md).
[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"'
mkdir -p /etc/containers
if [ ! -f "$CONF" ] || [ "$(cat "$CONF")" != "$want_conf" ]; then
	if [ -f "$CONF" ]; then
		cp -p "$CONF" "$CONF.envgap-backup"
		log "previous $CONF saved as $CONF.envgap-backup"
	fi
	printf '%s\n' "$want_conf" >"$CONF"
	log "wrote $CONF"
fi

# 2c. The API service.
if api_answers "$PODMAN_HOST"; then
	log "podman service already answers at $PODMAN_HOST"
else
	mkdir -p "$(dirname "$SOCK")"
	rm -f "$SOCK"
	log "starting podman system service (log: $LOG)"
	# Started in /: conmon writes files such as "oom" into its working directory.
	setsid nohup sh -c 'cd / && exec podman system service --time=0 "$1"' sh "$PODMAN_HOST" >>"$LOG" 2>&1 </dev/null &
	for _ in $(seq 1 "$WAIT_SECONDS"); do
		api_answers "$PODMAN_HOST" && break
		sleep 1
	done
	api_answers "$PODMAN_HOST" || die "podman service did not answer at $PODMAN_HOST within ${WAIT_SECONDS}s; see $LOG"
	log "podman service answers at $PODMAN_HOST"
fi

# 3. The local base image.
if podman image exists "$BASE_IMAGE"; then
	log "base image $BASE_IMAGE exists"
else
	log "creating $BASE_IMAGE with debootstrap (minbase, bookworm)"
	rootfs=$(mktemp -d /var/tmp/envgap-rootfs.XXXXXX)
	trap 'rm -rf "$rootfs"' EXIT
	start=$(date +%s)
	debootstrap --variant=minbase bookworm "$rootfs" >"$rootfs.log" 2>&1 ||
		{ tail -n 30 "$rootfs.log" >&2; die "debootstrap failed (full log: $rootfs.log)"; }
	rm -f "$rootfs.log"
	# Small and reproducible-ish: no downloaded .debs or apt lists in the image.
	rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
	tar --numeric-owner -C "$rootfs" -c . |
		podman import --change 'CMD ["/bin/bash"]' - "$BASE_IMAGE" >&2
	log "base image $BASE_IMAGE created in $(($(date +%s) - start))s"
fi

# 4. The sandbox network and its firewall rules.
# The names below are overridable only to test this script beside a machine's real setup
# (images/setup_test.go); envgap itself uses the defaults.
NET="${ENVGAP_SANDBOX_NETWORK:-envgap}"
CHAIN="${ENVGAP_SANDBOX_CHAIN:-ENVGAP-SANDBOX}"
if ! podman network exists "$NET"; then
	podman network create --disable-dns --label org.envgap.sandbox=1 "$NET" >/dev/null
	log "created the sandbox network $NET"
fi
subnet=$(podman network inspect "$NET" --format '{{range .Subnets}}{{if .Gateway.To4}}{{.Subnet}}{{end}}{{end}}')
[ -n "$subnet" ] || die "the network $NET has no IPv4 subnet"
command -v iptables >/dev/null 2>&1 || die "iptables is missing (it comes with podman); containers of $NET could reach every host service"
iptables -N "$CHAIN" 2>/dev/null || true
iptables -F "$CHAIN"
iptables -A "$CHAIN" -m conntrack --ctstate ESTABLISHED,RELATED -j RETURN
# -m socket without --nowildcard matches only sockets bound to a specific address.
iptables -A "$CHAIN" -m socket -j RETURN
iptables -A "$CHAIN" -p tcp -j REJECT --reject-with tcp-reset
iptables -A "$CHAIN" -j REJECT
# One jump, for the network's current subnet (a jump for an older subnet is removed).
iptables -S INPUT | { grep -- "-j $CHAIN\$" || true; } | sed 's/^-A //' | while read -r rule; do
	# shellcheck disable=SC2086
	iptables -D $rule
done
iptables -I INPUT 1 -s "$subnet" -j "$CHAIN"
log "containers of $NET ($subnet) reach no host service bound to all addresses (iptables chain $CHAIN)"

# 5. The one door out (core/egress). Whatever the network's containers send to an
# address that is not the host's own is refused by the kernel: a policy-routing rule
# sends it to table $EGRESS_TABLE, whose only route is `prohibit` (the sender gets
# "no route to host" at once). Packets to the host's addresses are delivered locally
# (the local table comes first) and meet the INPUT chain above; packets to the subnet
# itself (the host's replies from the gateway address) use the main table. The registry
# proxy and the egress door listen on the gateway; the door forwards only to the image's
# package sources. The refused connections are counted (not refused) by the mangle
# chain $COUNT_CHAIN: `iptables -t mangle -L $COUNT_CHAIN -v`. Rules are replaced on
# every run, never duplicated.
EGRESS_TABLE="${ENVGAP_EGRESS_TABLE:-7749}"
EGRESS_PREF="${ENVGAP_EGRESS_PREF:-7749}"
COUNT_CHAIN="${ENVGAP_EGRESS_COUNT_CHAIN:-ENVGAP-EGRESS-COUNT}"
command -v ip >/dev/null 2>&1 || die "ip (iproute2) is missing; containers of $NET could reach the whole internet"
ip -4 route replace prohibit default table "$EGRESS_TABLE"
for pref in "$EGRESS_PREF" "$((EGRESS_PREF + 1))"; do
	while ip -4 rule del pref "$pref" 2>/dev/null; do :; done
done
ip -4 rule add pref "$EGRESS_PREF" from "$subnet" to "$subnet" lookup main
ip -4 rule add pref "$((EGRESS_PREF + 1))" from "$subnet" lookup "$EGRESS_TABLE"
iptables -t mangle -N "$COUNT_CHAIN" 2>/dev/null || true
iptables -t mangle -F "$COUNT_CHAIN"
iptables -t mangle -A "$COUNT_CHAIN" -j RETURN
iptables -t mangle -S PREROUTING | { grep -- "-j $COUNT_CHAIN\$" || true; } | sed 's/^-A //' | while read -r rule; do
	# shellcheck disable=SC2086
	iptables -t mangle -D $rule
done
iptables -t mangle -A PREROUTING -s "$subnet" ! -d "$subnet" -m addrtype ! --dst-type LOCAL \
	-m conntrack --ctstate NEW -j "$COUNT_CHAIN"
log "containers of $NET reach only the host: other destinations are prohibited (ip rule pref $EGRESS_PREF-$((EGRESS_PREF + 1)), table $EGRESS_TABLE; counted in mangle chain $COUNT_CHAIN)"

echo "export DOCKER_HOST=$PODMAN_HOST"
