package sandbox

import (
	"strconv"

	"github.com/envgap/envgap/data"
)

// Labels naming the process that created a container (its owner). A sweep removes the
// containers of owners that are gone, at once, and never those of a live owner.
const (
	LabelOwnerHost  = "org.envgap.owner.host"  // the owner's host name
	LabelOwnerPID   = "org.envgap.owner.pid"   // its process id
	LabelOwnerStart = "org.envgap.owner.start" // boot id and start time of the process (pid reuse)
)

// Owner identifies a process on a host (the store's claims name theirs the same way).
type Owner = data.Owner

// Self is the owner this process puts on the containers it creates.
func Self() Owner { return data.Self() }

func ownerLabels(o Owner) map[string]string {
	return map[string]string{LabelOwnerHost: o.Host, LabelOwnerPID: strconv.Itoa(o.PID), LabelOwnerStart: o.Start}
}

// ownerOf reads a container's owner labels; ok is false when it has none (a container of
// an older envgap).
func ownerOf(labels map[string]string) (Owner, bool) {
	host, hok := labels[LabelOwnerHost]
	pid, err := strconv.Atoi(labels[LabelOwnerPID])
	if !hok || err != nil || pid <= 0 {
		return Owner{}, false
	}
	return Owner{Host: host, PID: pid, Start: labels[LabelOwnerStart]}, true
}

// What a sweep on this host knows of a container's owner.
const (
	ownerUnknown = data.OwnerUnknown // no owner labels, or another host: only age decides
	ownerAlive   = data.OwnerAlive   // the owner still runs: never touched
	ownerGone    = data.OwnerGone    // the owner process is dead or its pid was reused
)

func processStart(pid int) string { return data.ProcessStart(pid) }
