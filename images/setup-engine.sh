#!/usr/bin/env bash
# setup-engine.sh: make a Docker Engine API answer on this machine.
#
# Run as root. Idempotent: every step checks first and does only what is missing.
#
#  1. If a Docker API already answers (at $DOCKER_HOST, or at the default socket
#     /var/run/docker.sock), it is used as it is; only its sandbox network and rules
#     (step 4) are made, and the DOCKER_HOST to use is printed.
#  2. Otherwise Podman (from the OS packages) is installed and configured
#     (/etc/containers/containers.conf, see shared/notes/engine.md; a range of
#     subordinate ids for the user `containers` in /etc/subuid and /etc/subgid, added
#     past any existing range unless it has one, for the containers' user namespaces), and
#     `podman system service` is started detached, serving the Docker API at
#     unix:///run/podman/podman.sock (log: /var/log/envgap-podman.log).
#  3. The local base image localhost/envgap-base:bookworm is created with
#     `debootstrap --variant=minbase bookworm` (its default mirror) and
#     `podman import`, unless it already exists. No container registry is
#     reachable from these machines, so nothing is pulled.
#  4. The sandbox network `envgap` (a bridge, no DNS, labelled org.envgap.sandbox=1)
#     is created unless it exists, and core/sandbox/wall.sh puts its host rules in
#     place (replaced, never duplicated): containers on it reach the sockets envgap
#     marked (the registry proxy, the egress door, the agents' repro server) and
#     nothing else of the host, no other container of the network, no address outside
#     the host (the kernel answers "no route to host"), and no IPv6. Image builds do
#     not use the network and are not affected. The rules live in the kernel: after a
#     reboot or a firewall reload, envgap puts them back when it connects to the
#     engine (it embeds the same wall.sh), or this script does.
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
# shellcheck source=images/lib-subid.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-subid.sh"

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

# The sandbox network's name; overridable only to test this script beside a machine's real
# set-up (images/setup_test.go). The rules' chain names and numbers take wall.sh's
# ENVGAP_* variables the same way.
NET="${ENVGAP_SANDBOX_NETWORK:-envgap}"
WALL="$(dirname "${BASH_SOURCE[0]}")/../core/sandbox/wall.sh"
[ -f "$WALL" ] || die "$WALL is missing (run this script from envgap's source tree)"

# docker_wall HOST: the sandbox network and its rules on a Docker daemon at HOST (the
# bridge is named after the network, so the rules can name it before it is up; Docker's
# own inter-container traffic is off on it too).
docker_wall() {
	command -v docker >/dev/null 2>&1 || die "the docker client is needed to set up the sandbox network on the Docker daemon at $1"
	[ "$(id -u)" = 0 ] || die "run as root (the sandbox network's rules are the host's firewall)"
	case "$1" in unix://*) ;; *) die "the Docker daemon at $1 is not on this host: run this script on its host" ;; esac
	local bridge="${NET:0:15}"
	if ! DOCKER_HOST=$1 docker network inspect "$NET" >/dev/null 2>&1; then
		DOCKER_HOST=$1 docker network create --driver bridge --label org.envgap.sandbox=1 \
			--opt com.docker.network.bridge.name="$bridge" \
			--opt com.docker.network.bridge.enable_icc=false >/dev/null
		log "created the sandbox network $NET (bridge $bridge)"
	fi
	bridge=$(DOCKER_HOST=$1 docker network inspect "$NET" --format '{{index .Options "com.docker.network.bridge.name"}}')
	[ -n "$bridge" ] || bridge="br-$(DOCKER_HOST=$1 docker network inspect "$NET" --format '{{.Id}}' | cut -c1-12)"
	bash "$WALL" apply "$bridge"
	log "the sandbox network $NET (bridge $bridge) is walled in (core/sandbox/wall.sh)"
}

# 1. An engine that already answers is used as it is.
for candidate in "${DOCKER_HOST:-}" unix:///var/run/docker.sock; do
	[ -n "$candidate" ] || continue
	[ "$candidate" = "$PODMAN_HOST" ] && continue # ours: still check the base image below
	if api_answers "$candidate"; then
		log "a Docker API already answers at $candidate"
		docker_wall "$candidate"
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

# 2c. Subordinate ids for the containers' user namespaces (UsernsMode auto: each sandbox
# container gets its own 65536 of them, so its root is not the host's). The files are
# overridable only to test this step (images/setup_test.go).
subid_range "${ENVGAP_SUBUID_FILE:-/etc/subuid}" containers
subid_range "${ENVGAP_SUBGID_FILE:-/etc/subgid}" containers

# 2d. The API service.
if api_answers "$PODMAN_HOST"; then
	log "podman service already answers at $PODMAN_HOST"
else
	mkdir -p "$(dirname "$SOCK")"
	rm -f "$SOCK"
	log "starting podman system service (log: $LOG)"
	# Started in /: conmon writes files such as "oom" into its working directory.
	# With no descriptor of ours (own_fds_only, images/lib-apt.sh).
	own_fds_only setsid nohup sh -c 'cd / && exec podman system service --time=0 "$1"' sh "$PODMAN_HOST" >>"$LOG" 2>&1 </dev/null &
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

# 4. The sandbox network and its rules (core/sandbox/wall.sh; see its header).
if ! podman network exists "$NET"; then
	podman network create --disable-dns --label org.envgap.sandbox=1 "$NET" >/dev/null
	log "created the sandbox network $NET"
fi
bridge=$(podman network inspect "$NET" --format '{{.NetworkInterface}}')
[ -n "$bridge" ] || die "the network $NET has no bridge interface"
bash "$WALL" apply "$bridge"
log "the sandbox network $NET (bridge $bridge) is walled in: its containers reach envgap's marked listeners on the host and nothing else (core/sandbox/wall.sh)"

echo "export DOCKER_HOST=$PODMAN_HOST"
