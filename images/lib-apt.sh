# Sourced by images/setup-engine.sh, setup-slurm.sh and setup-browser.sh (not run alone):
# the OS package install and the daemon start the set-ups share. The sourcing script
# defines log and die.

# own_fds_only CMD...: runs CMD with no descriptor of the caller's but 0, 1 and 2. Every
# daemon a set-up starts goes through it: a daemon lives on, and a descriptor it inherits
# stays open as long. `make -jN` (make test runs its set-ups that way) reads its jobserver
# pipe to the end when it finishes: a daemon holding that pipe, or a lock's descriptor,
# kept make (and the CI job) waiting for ever. Called as a background job (`... &`), the
# job's own process becomes CMD; otherwise a subshell does.
own_fds_only() {
	if [ "$BASHPID" != "$$" ]; then
		close_inherited_fds
		exec "$@"
	fi
	(
		close_inherited_fds
		exec "$@"
	)
}

close_inherited_fds() {
	local fd
	for fd in /proc/$BASHPID/fd/*; do
		fd=${fd##*/}
		case $fd in 0 | 1 | 2) ;; *) eval "exec $fd>&-" 2>/dev/null || true ;; esac
	done
}

# apt_install PKG...: installs those of the packages that are not installed yet,
# with apt's lock timeout (another apt run on the machine is waited for, not failed
# on) and one retry after 20 s; says when all are already installed. The packages'
# own start-up hooks may fail where no init system runs: the set-ups start their
# daemons themselves.
apt_install() {
	local missing=() pkg
	for pkg in "$@"; do
		if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
			missing+=("$pkg")
		fi
	done
	if [ "${#missing[@]}" -eq 0 ]; then
		log "$* are installed"
		return 0
	fi
	log "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt_install_once "${missing[@]}"; then
		log "install failed; trying once more in 20 s"
		sleep 20
		apt_install_once "${missing[@]}" || die "apt-get install ${missing[*]} failed twice"
	fi
}

# apt_install_once PKG...: one update and install, one set-up at a time: apt's lock
# timeout covers dpkg's lock but not the package lists' (a second `apt-get update` at once
# fails at once), so the set-ups that make test runs side by side take turns on a lock of
# their own.
apt_install_once() {
	mkdir -p /run/lock
	(
		flock -w 900 9 || { echo "another set-up held /run/lock/envgap-apt.lock for 900 s" >&2; exit 1; }
		# apt does not get the lock's descriptor: a daemon a package's hook starts would hold
		# the lock for its life.
		apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 9>&- &&
			apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$@" >&2 9>&-
	) 9>/run/lock/envgap-apt.lock
}
