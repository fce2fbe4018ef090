package sandbox

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Labels naming the process that created a container (its owner). A sweep removes the
// containers of owners that are gone, at once, and never those of a live owner.
const (
	LabelOwnerHost  = "org.envgap.owner.host"  // the owner's host name
	LabelOwnerPID   = "org.envgap.owner.pid"   // its process id
	LabelOwnerStart = "org.envgap.owner.start" // boot id and start time of the process (pid reuse)
)

// Owner identifies a process on a host.
type Owner struct {
	Host  string
	PID   int
	Start string // "<boot id>/<start time in clock ticks>"; "" where /proc cannot tell
}

var (
	selfOnce  sync.Once
	selfOwner Owner
)

// Self is the owner this process puts on the containers it creates.
func Self() Owner {
	selfOnce.Do(func() {
		host, _ := os.Hostname()
		pid := os.Getpid()
		selfOwner = Owner{Host: host, PID: pid, Start: processStart(pid)}
	})
	return selfOwner
}

func (o Owner) labels() map[string]string {
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

// ownerState says what a sweep on this host knows of a container's owner.
type ownerState int

const (
	ownerUnknown ownerState = iota // no owner labels, or another host: only age decides
	ownerAlive                     // the owner still runs: never touched
	ownerGone                      // the owner process is dead or its pid was reused
)

// state decides whether o still runs, as seen from the process self.
func (o Owner) state(self Owner) ownerState {
	if o.Host != self.Host || o.Host == "" {
		return ownerUnknown
	}
	if o.PID == self.PID && o.Start == self.Start {
		return ownerAlive
	}
	start := processStart(o.PID)
	if start == "" {
		if processExists(o.PID) {
			return ownerAlive // no /proc to tell pid reuse: keep it
		}
		return ownerGone
	}
	if o.Start != "" && start != o.Start {
		return ownerGone // the pid now names another process (or the host rebooted)
	}
	return ownerAlive
}

// processStart returns "<boot id>/<start ticks>" of pid from /proc, or "" when unknown.
func processStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// Field 2 (comm) may hold spaces and parentheses: the fields after it start after the
	// last ')'. starttime is field 22, the 20th after comm.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(boot)) + "/" + f[19]
}

// processExists reports whether a process with pid exists (signal 0).
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
