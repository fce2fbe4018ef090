# Sourced by images/setup-engine.sh (not run alone): the sandbox network's addresses.

# reclaim_leases DIR: removes from DIR, the CNI host-local plugin's leases of a network
# (/var/lib/cni/networks/NAME: one file per address taken, named by the IPv4 address,
# holding the container's id on its first line), the leases of containers that no longer
# exist, and prints how many it removed. A removed container's address is given back when
# the engine tears down its network; when that does not happen the lease stays, and once
# the network's 253 addresses are all held every start fails ("no IP addresses available
# in range set"). Only regular files named by an address are looked at (links and the
# plugin's own files, lock and last_reserved_ip.*, are left alone), and a lease is removed
# only when podman says its container does not exist (exit code 1): a podman that fails
# (any other code) removes nothing.
reclaim_leases() {
	local dir=$1 f id rc n=0
	[ -d "$dir" ] || { echo 0; return 0; }
	for f in "$dir"/*; do
		[[ ${f##*/} =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] || continue
		[ -f "$f" ] && [ ! -L "$f" ] || continue
		id=$(head -n 1 "$f" | tr -d '\r')
		[[ $id =~ ^[0-9a-f]{12,64}$ ]] || continue
		rc=0
		podman container exists "$id" >/dev/null 2>&1 || rc=$?
		if [ "$rc" -eq 1 ]; then
			rm -f "$f"
			n=$((n + 1))
		fi
	done
	echo "$n"
}
