#!/usr/bin/env bash
# wall.sh: the sandbox network's wall on the host (one definition of the rules, used by
# images/setup-engine.sh to put them in place and by envgap, which embeds this file, to
# check them when it connects to a local engine and to put them back when they are gone).
#
#   wall.sh apply  IFACE   replace the rules (idempotent: none twice)
#   wall.sh check  IFACE   exit 0 when every rule is in place, else exit 3 and name each
#                          missing one on stderr
#   wall.sh remove IFACE   remove them (tests of a network of their own)
#
# IFACE is the network's bridge on this host (it may not exist yet: Podman creates it when
# the first container joins). The rules match what arrives on IFACE, whatever its source
# address says. Run as root. The rules:
#
#  1. INPUT (chain $CHAIN, jumped to first for everything that arrives on IFACE): replies,
#     and new connections to sockets envgap marked (SO_MARK $MARK: the registry proxy, the
#     egress door and the agents' repro server; core/sandbox.ListenHost) are accepted;
#     everything else is rejected. A host service that envgap did not open is not reached,
#     whatever address it is bound to.
#  2. FORWARD (chain $ISOLATE, first): nothing passes from one port of the bridge to
#     another (br_netfilter hands bridged frames to iptables; both sysctls are set), so a
#     container reaches no other container of the network: no other run's.
#  3. Routing: whatever arrives on IFACE for an address that is not the host's own goes to
#     table $TABLE, whose only route is `prohibit` (ip rule pref $PREF, iif IFACE): the
#     sender gets "no route to host" at once. The registry proxy and the egress door on the
#     gateway are the only way out (core/egress). Refused attempts are counted by the
#     mangle chain $COUNT (iptables -t mangle -L $COUNT -v).
#  4. IPv6: nothing from IFACE is accepted or forwarded (ip6tables chain $CHAIN6, first in
#     INPUT and FORWARD); envgap also starts its containers with IPv6 disabled.
set -euo pipefail

CHAIN="${ENVGAP_SANDBOX_CHAIN:-ENVGAP-SANDBOX}"
ISOLATE="${ENVGAP_ISOLATE_CHAIN:-ENVGAP-ISOLATE}"
CHAIN6="${ENVGAP_SANDBOX6_CHAIN:-ENVGAP-SANDBOX6}"
COUNT="${ENVGAP_EGRESS_COUNT_CHAIN:-ENVGAP-EGRESS-COUNT}"
TABLE="${ENVGAP_EGRESS_TABLE:-7749}"
PREF="${ENVGAP_EGRESS_PREF:-7749}"
MARK="${ENVGAP_WALL_MARK:-0xe4a0000}"

die() { echo "wall: $*" >&2; exit 2; }
[ $# = 2 ] || die "usage: wall.sh apply|check|remove IFACE"
op=$1 iface=$2
case "$iface" in '' | *[!A-Za-z0-9_.-]*) die "bad interface name '$iface'" ;; esac
for tool in iptables ip6tables ip; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool is missing: the sandbox's wall cannot be kept without it"
done

# unjump TOOL TABLE HOOK CHAIN: remove every rule of HOOK that jumps to CHAIN.
unjump() {
	"$1" -t "$2" -S "$3" | { grep -- "-j $4\$" || true; } | sed 's/^-A //' | while read -r rule; do
		# shellcheck disable=SC2086
		"$1" -t "$2" -D $rule
	done
}

# first RULES HOOK CHAIN: true when, in RULES (the output of iptables -S), the jump from
# IFACE to CHAIN comes before any rule of HOOK that is not another network's such jump
# (those match only their own interface, so they cannot accept what arrives on IFACE).
first() {
	printf '%s\n' "$1" | awk -v hook="$2" -v want="-A $2 -i $iface -j $3" '
		$1 == "-A" && $2 == hook {
			if ($0 == want) { found = 1; exit }
			if (!($3 == "-i" && $5 == "-j" && NF == 6)) exit
		}
		END { exit !found }'
}

# has RULES LINE: true when RULES has LINE.
has() { printf '%s\n' "$1" | grep -qxF -- "$2"; }

remove() {
	for h in INPUT:"$CHAIN" FORWARD:"$ISOLATE"; do unjump iptables filter "${h%%:*}" "${h#*:}"; done
	for h in INPUT FORWARD; do unjump ip6tables filter "$h" "$CHAIN6"; done
	unjump iptables mangle PREROUTING "$COUNT"
	for c in "$CHAIN" "$ISOLATE"; do iptables -F "$c" 2>/dev/null || true; iptables -X "$c" 2>/dev/null || true; done
	ip6tables -F "$CHAIN6" 2>/dev/null || true
	ip6tables -X "$CHAIN6" 2>/dev/null || true
	iptables -t mangle -F "$COUNT" 2>/dev/null || true
	iptables -t mangle -X "$COUNT" 2>/dev/null || true
	for pref in "$PREF" "$((PREF + 1))"; do
		while ip -4 rule del pref "$pref" 2>/dev/null; do :; done
	done
	ip -4 route flush table "$TABLE" 2>/dev/null || true
}

apply() {
	# Bridged frames go through iptables (and ip6tables): rule 2 needs it.
	[ -d /proc/sys/net/bridge ] || modprobe br_netfilter 2>/dev/null || true
	[ -d /proc/sys/net/bridge ] || die "br_netfilter is not loaded (modprobe br_netfilter): containers of the network could reach one another"
	sysctl -qw net.bridge.bridge-nf-call-iptables=1 net.bridge.bridge-nf-call-ip6tables=1

	iptables -N "$CHAIN" 2>/dev/null || true
	iptables -F "$CHAIN"
	iptables -A "$CHAIN" -m conntrack --ctstate ESTABLISHED,RELATED -j RETURN
	# The mark of the socket a packet is for (--restore-skmark), then only envgap's.
	iptables -A "$CHAIN" -m socket --restore-skmark -m mark --mark "$MARK" -j RETURN
	iptables -A "$CHAIN" -p tcp -j REJECT --reject-with tcp-reset
	iptables -A "$CHAIN" -j REJECT
	unjump iptables filter INPUT "$CHAIN"
	iptables -I INPUT 1 -i "$iface" -j "$CHAIN"

	iptables -N "$ISOLATE" 2>/dev/null || true
	iptables -F "$ISOLATE"
	iptables -A "$ISOLATE" -o "$iface" -p tcp -j REJECT --reject-with tcp-reset
	iptables -A "$ISOLATE" -o "$iface" -j REJECT
	iptables -A "$ISOLATE" -j RETURN
	# Podman's CNI firewall plugin inserts its own jump (to CNI-FORWARD, which accepts its
	# containers' traffic) at the top of FORWARD when the first container of a boot joins a
	# network, unless the jump is there already: on a fresh host it would land above the
	# isolation and let containers of different runs reach one another. Put the plugin's jump
	# in place first (the plugin fills its chain as before), then ours above it.
	if [[ $iface == cni-* ]]; then
		iptables -N CNI-FORWARD 2>/dev/null || true
		iptables -C FORWARD -m comment --comment "CNI firewall plugin rules" -j CNI-FORWARD 2>/dev/null ||
			iptables -A FORWARD -m comment --comment "CNI firewall plugin rules" -j CNI-FORWARD
	fi
	unjump iptables filter FORWARD "$ISOLATE"
	iptables -I FORWARD 1 -i "$iface" -j "$ISOLATE"

	ip6tables -N "$CHAIN6" 2>/dev/null || true
	ip6tables -F "$CHAIN6"
	ip6tables -A "$CHAIN6" -j DROP
	for h in INPUT FORWARD; do
		unjump ip6tables filter "$h" "$CHAIN6"
		ip6tables -I "$h" 1 -i "$iface" -j "$CHAIN6"
	done

	ip -4 route replace prohibit default table "$TABLE"
	for pref in "$PREF" "$((PREF + 1))"; do
		while ip -4 rule del pref "$pref" 2>/dev/null; do :; done
	done
	ip -4 rule add pref "$PREF" iif "$iface" lookup "$TABLE"

	iptables -t mangle -N "$COUNT" 2>/dev/null || true
	iptables -t mangle -F "$COUNT"
	iptables -t mangle -A "$COUNT" -j RETURN
	unjump iptables mangle PREROUTING "$COUNT"
	iptables -t mangle -A PREROUTING -i "$iface" -m addrtype ! --dst-type LOCAL \
		-m conntrack --ctstate NEW -j "$COUNT"
}

check() {
	local missing=() v4 v6 routes
	v4=$(iptables -S)
	v6=$(ip6tables -S)
	routes=$(ip -4 route show table "$TABLE" 2>/dev/null | sed 's/ *$//')
	[ "$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null)" = 1 ] ||
		missing+=("bridged traffic is not filtered (net.bridge.bridge-nf-call-iptables is not 1)")
	[ "$(cat /proc/sys/net/bridge/bridge-nf-call-ip6tables 2>/dev/null)" = 1 ] ||
		missing+=("bridged IPv6 traffic is not filtered (net.bridge.bridge-nf-call-ip6tables is not 1)")
	first "$v4" INPUT "$CHAIN" || missing+=("INPUT does not send what arrives on $iface to $CHAIN first")
	[ "$(printf '%s\n' "$v4" | grep -c -- "^-A $CHAIN ")" = 4 ] &&
		has "$v4" "-A $CHAIN -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN" &&
		has "$v4" "-A $CHAIN -m socket --restore-skmark -m mark --mark $MARK -j RETURN" &&
		has "$v4" "-A $CHAIN -p tcp -j REJECT --reject-with tcp-reset" &&
		has "$v4" "-A $CHAIN -j REJECT --reject-with icmp-port-unreachable" ||
		missing+=("chain $CHAIN does not admit envgap's listeners alone")
	first "$v4" FORWARD "$ISOLATE" || missing+=("FORWARD does not send what arrives on $iface to $ISOLATE first")
	has "$v4" "-A $ISOLATE -o $iface -p tcp -j REJECT --reject-with tcp-reset" &&
		has "$v4" "-A $ISOLATE -o $iface -j REJECT --reject-with icmp-port-unreachable" ||
		missing+=("chain $ISOLATE does not keep the containers of $iface apart")
	first "$v6" INPUT "$CHAIN6" || missing+=("ip6tables INPUT does not send what arrives on $iface to $CHAIN6 first")
	first "$v6" FORWARD "$CHAIN6" || missing+=("ip6tables FORWARD does not send what arrives on $iface to $CHAIN6 first")
	has "$v6" "-A $CHAIN6 -j DROP" || missing+=("ip6tables chain $CHAIN6 does not drop")
	[ "$routes" = "prohibit default" ] || missing+=("routing table $TABLE is not a single prohibit route")
	ip -4 rule show pref "$PREF" | grep -qE "iif $iface( \[detached\])? lookup $TABLE\$" ||
		missing+=("no ip rule (pref $PREF) sends what arrives on $iface to table $TABLE")
	if [ ${#missing[@]} -gt 0 ]; then
		printf 'missing: %s\n' "${missing[@]}" >&2
		exit 3
	fi
}

case "$op" in
apply) apply ;;
check) check ;;
remove) remove ;;
*) die "unknown operation '$op' (apply, check or remove)" ;;
esac
