#!/bin/sh
# base-setup.sh: the build step of envgap-eval-common, the image the four
# evaluation images are built FROM. Runs inside the image build as root; the
# build context puts it at /tmp/envgap/base-setup.sh next to the optional files
# below.
#
#  - apt: the package lists (kept in the image, gzip-compressed and without
#    translations, for the images built on it; each of them removes them) and
#    ca-certificates, bash and strace (tracing, D3), nothing else;
#  - /tmp/envgap/host-ca.crt, if present (builds on the local base only): the
#    host's CA bundle, so that TLS through the host's intercepting proxy works
#    inside containers (git, npm, curl, Java); each certificate is added to the
#    system store with update-ca-certificates;
#  - /work (the project) and /evidence (what a run leaves for the harness).
set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get -o Acquire::GzipIndexes=true -o Acquire::CompressionTypes::Order::=gz -o Acquire::Languages=none update
apt-get install -y --no-install-recommends -o Dpkg::Options::=--force-unsafe-io ca-certificates bash strace
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
