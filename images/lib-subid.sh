# Sourced by images/setup-engine.sh (not run alone): the subordinate ids Podman gives its
# containers' user namespaces. The sourcing script defines log and die.

# subid_range FILE USER: makes sure FILE (/etc/subuid or /etc/subgid) gives USER a range
# of subordinate ids, adding one when USER has none: USER:START:COUNT with START past the
# end of every range FILE already gives (2147483647 at least, the upper half of the ids,
# COUNT up to the last id, 2147483648 when nothing is there yet), so it overlaps no other
# entry. An entry USER already has is kept as it is (never a second one). Podman (run as
# root) takes its containers' ranges (UsernsMode auto, 65536 ids each) from USER
# "containers"; without one, envgap's containers run without a user namespace.
subid_range() {
	local file=$1 user=$2 line start
	if [ -f "$file" ] && line=$(grep -m 1 "^${user}:" "$file"); then
		log "$file already gives $user subordinate ids ($line)"
		return 0
	fi
	# The end of the highest range (fields start:count; lines that are not entries skipped).
	start=$(awk -F: -v s=2147483647 '$2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ && $2 + $3 > s { s = $2 + $3 } END { printf "%.0f\n", s }' "$file" 2>/dev/null || echo 2147483647)
	[ -n "$start" ] || start=2147483647
	# The last id is 4294967294 (4294967295 is "no id"): the range ends there.
	local count
	count=$(awk -v s="$start" 'BEGIN { printf "%.0f\n", 4294967295 - s }')
	if [ "$(awk -v c="$count" 'BEGIN { print (c >= 65536) }')" != 1 ]; then
		die "$file has no room for $user's subordinate ids past its other ranges (ending at $start): add a range of at least 65536 ids for $user by hand"
	fi
	[ -f "$file" ] || install -m 0644 /dev/null "$file"
	# A last line without its newline would join ours.
	if [ -s "$file" ] && [ -n "$(tail -c 1 "$file")" ]; then
		echo >>"$file"
	fi
	echo "${user}:${start}:${count}" >>"$file"
	log "added ${user}:${start}:${count} to $file (Podman gives each sandbox container a user namespace of 65536 of these ids: its root is not the host's root)"
}
