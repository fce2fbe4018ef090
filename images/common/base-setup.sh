#!/bin/sh
# base-setup.sh: the first build step of every envgap evaluation image.
# Runs inside the image build as root; the build context puts it at
# /tmp/envgap/base-setup.sh next to the optional files below.
#
#  - apt: ca-certificates, bash and strace (tracing, D3), nothing else;
#  - /tmp/envgap/host-ca.crt, if present (builds on the local base only): the
#    host's CA bundle, so that TLS through the host's intercepting proxy works
#    inside containers (git, npm, curl, Java); each certificate is added to the
#    system store with update-ca-certificates;
#  - /work (the project) and /evidence (what a run leaves for the harness).
set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends ca-certificates bash strace
if [ -s /tmp/envgap/host-ca.crt ]; then
	dir=/usr/local/share/ca-certificates/envgap-host
	mkdir -p "$dir"
	awk -v dir="$dir" '
		/-----BEGIN CERTIFICATE-----/ { n++; f = sprintf("%s/host-%03d.crt", dir, n) }
		n > 0 && f != "" { print > f }
		/-----END CERTIFICATE-----/ { close(f); f = "" }
	' /tmp/envgap/host-ca.crt
	update-ca-certificates
fi
mkdir -p /work /evidence
