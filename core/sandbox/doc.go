// Package sandbox runs commands in fresh containers through a Docker Engine
// API (a Docker daemon, or Podman's compatible service; see
// images/setup-engine.sh). It is the only code of envgap that runs containers.
//
// # One run
//
// Engine.Run takes a Spec and does, in order:
//
//  1. checks the spec without touching the engine: file paths must be
//     relative, clean and inside WorkDir (no absolute path, no `..`), WorkDir
//     absolute; a bad spec is an error before anything is created;
//  2. waits for Spec.Prepare, if any (a caller's turn to prepare a container); a missing
//     image fails the create below (ErrImageMissing: run `envgap build-images`), and
//     Result.ImageID is the image of the created container's inspection;
//  3. creates one container: `sleep infinity` under the engine's init
//     process, the spec's network ("none" by default, or with network: the
//     engine's sandbox network, never its default bridge; see HostAddress and
//     ListenHost for a server containers reach), memory (swap equal to memory), pids
//     and CPU limits, every capability dropped but Capabilities (what the images'
//     steps need as root, and SYS_PTRACE for strace), no-new-privileges, IPv6
//     disabled, the label org.envgap.sandbox=1, the owner labels
//     (org.envgap.owner.host, .pid, .start: this process) and the spec's labels,
//     in a user namespace where the engine gives one (userns.go: Podman's
//     auto:size=65536, a Docker daemon's userns-remap; Result.UserNS says which);
//     never AutoRemove;
//  4. copies the files into WorkDir (CopyToContainer, one tar) and starts it;
//  5. runs each step with `bash -c COMMAND` (Spec.Shell overrides) as an exec
//     in WorkDir, stdout and stderr merged into one capture;
//  6. copies the Collect paths out, up to Limits.CollectBytes in total;
//  7. removes the container (force) with a fresh context, also when ctx was
//     cancelled or the run failed (then within a few seconds: what is left is
//     swept by the next command, see below). With Spec.RemoveLater, a run that went
//     well returns before: the removal goes on in the background and Result.Removed
//     reports its end (the caller waits for it).
//
// # The wall
//
// Containers with network run on the sandbox network (`envgap`, or
// $ENVGAP_SANDBOX_NETWORK), which the host walls in (wall.sh, embedded here and run by
// images/setup-engine.sh): from it, the host admits only connections to sockets envgap
// marked (WallMark, set by ListenHost), forwards nothing from one container to another,
// routes nothing outside (prohibit), and drops IPv6. Connect fails closed (ErrNoWall)
// when the network is missing or not envgap's; for an engine on this host (a unix
// socket here) it also checks the rules with wall.sh check (as root), puts them back
// with wall.sh apply when they are missing, and records the check under WallDir (keyed
// by the network's id and bridge, the boot id and the script), so later commands of the
// same boot skip it for wallTTL. An engine on another host cannot be checked from here:
// its network is checked, its rules are its host's set-up's (Wall.Checked "remote").
// An engine opened with Options.NoWall (image builds) refuses runs with network.
//
// # Step results
//
// Exit 127 sets CommandNotFound. A step still running at its timeout is
// stopped by killing the container (an exec cannot be killed on its own
// through the API); it is marked TimedOut and every later step Skipped. Exit
// 137 under a memory limit, when the step did not time out, sets OOMKilled:
// Podman never reports State.OOMKilled, so it is inferred (a step that kills
// itself with SIGKILL would be reported the same way).
//
// A container that writes more than Limits.DiskBytes (its writable layer, and a box's
// mounted directory) is killed and its step marked DiskExceeded, the later steps Skipped
// (the project's outcome, as running out of memory is). The bound is measured, not a
// quota (overlay on ext4 has none): see disk.go. When the engine's storage (on this host)
// falls below HostDiskFloor of free space, the run ends with ErrHostDiskLow, an
// infrastructure fault, before the host's disk fills.
//
// Output is captured with bounded memory however much a step prints: the
// SHA-256 of the full output (OutputSHA256) and its size (OutputSize) are
// computed while streaming, and Output keeps at most Limits.OutputBytes of
// it. When the output is longer, Output is its first half-cap bytes, then the
// line "\n[envgap: N bytes omitted]\n", then its last half-cap bytes, and
// Truncated is set. (A failure message is usually at the end, its cause often
// at the start.)
//
// # Errors
//
// An infrastructure fault (engine unreachable or failing mid-run, image
// missing, context cancelled) is an error of Run, never a StepResult. What the
// commands do (fail, time out, run out of memory or processes) is a result.
//
// # Deadlines
//
// Every engine call has a deadline (at most 30 s, and at least 10 s but no more than
// the step timeout), and every call made during a step ends by the step's timeout
// plus 5 s. A frozen or stuck engine therefore ends a run with an error wrapping
// ErrEngineUnresponsive soon after the step timeout, and a cancelled run returns
// within a few seconds whatever the engine does.
//
// # Boxes
//
// Engine.OpenBox creates one long-lived container an agent acts in, command after
// command (Box.Exec: an exec under coreutils timeout, output captured as a step's).
// Its host paths are bind mounts: BoxSpec.Dir read-write at WorkDir, and each of
// BoxSpec.Mounts (a directory or a regular file, read-only unless Writable) at its
// target, a parent before what is mounted inside it; on Podman every one is
// nosuid,nodev. A mount's source must be a directory or a regular file, not a link (the
// engine would mount what it points at). In a user namespace, what is mounted writable is
// given to the container's root once it started (never through a link, never past the
// mount's filesystem; Box.Own for what the harness writes there later), and a read-only
// mount must be readable by others.
//
// # Leftovers
//
// A process killed mid-run (kill -9) leaves its container running. Connect
// removes, at once, the containers whose owner is a process of this host that is
// gone (dead, or its pid now names a process started at another time); Sweep also
// removes, by age, those of other hosts or without owner labels. The containers of
// a live process (another verify running at the same time) are never touched.
package sandbox
