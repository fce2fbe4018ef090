// Package egress is the one door out of the sandbox network: an HTTP forward proxy
// (absolute-form requests and CONNECT) that lets a container reach only the hosts of an
// allowlist and records every other connection it is asked for.
//
// # The policy
//
// Scoring containers and agent boxes run on the sandbox network (`envgap`, walled in by
// core/sandbox/wall.sh). The kernel refuses every connection from that network to
// anything but the host's own addresses (a policy-routing rule sends its traffic to a
// table whose only route is `prohibit`), and the host's firewall lets it reach only
// sockets envgap marked (sandbox.ListenHost, which the door's Listen is set to): the
// registry proxy (core/registry, PyPI and npm at the task's cut-off) and this door. The door forwards only what the
// card leaves undated: the OS packages of the image's own apt sources and Maven's
// repositories, read from the image itself (ImageHosts), never from a list of hosts
// written in code. Everything else is answered 403 and counted per host and port.
//
// # Sessions
//
// Door.Open starts one session per container run: its own listener on the door's host
// (port chosen by the kernel), so a request is attributed by the port it arrives on, and
// its own random secret, which only that container is given (the proxy URL's userinfo,
// sent as Proxy-Authorization): a request without it, or with another session's, is
// answered 407 and counted in no record. The secret is never logged, stored or forwarded.
// Session.Env and Session.Files point the clients at it (HTTP(S)_PROXY in both cases,
// NO_PROXY for the registry proxy, npm's proxy settings, apt's Acquire::http(s)::Proxy,
// Maven's settings.xml proxies with username and password, and MAVEN_OPTS).
// Session.Close stops the listener, cuts its tunnels and returns the Record: the
// connections refused (with the reason) and the connections let through, each with a
// count. Sessions of one Door share its pool of kept-alive upstream connections.
//
// # What passes
//
// CONNECT goes only to an allowed host on port 443, and a tunnel is opened only when the
// client's first bytes are a TLS ClientHello whose SNI is the CONNECT host: the door
// reads the hello (at most MaxHelloBytes, within HelloTimeout; TLS is never terminated),
// then dials and sends it on unchanged. Plain-HTTP requests are forwarded only to an
// allowed host:port, with Host forced to the target. A session carries at most MaxConns
// connections at once and MaxBytes bytes in all (DefaultMaxConns, DefaultMaxBytes).
//
// A client that ignores the proxy settings connects directly; the kernel refuses it
// (no route: EHOSTUNREACH or "administratively prohibited"). Such refusals are counted
// by the kernel (iptables chain ENVGAP-EGRESS-COUNT, `iptables -t mangle -L
// ENVGAP-EGRESS-COUNT -v`) for the whole network, not per run: a run's record holds the
// refusals at the door.
//
// # Hostile input
//
// Target hosts are matched exactly (case-insensitive, with the port) against the
// allowlist; an allowed name that resolves to a loopback, link-local, multicast or
// unspecified address is refused at dial time, so the door never becomes a way into the
// host. Request lines and hosts are bounded in length, and a session keeps at most
// MaxDistinct distinct refused targets (the rest are counted under "(other)").
package egress
