package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/envgap/envgap/schemas"
	"github.com/envgap/envgap/verify/egress"
	"github.com/envgap/envgap/verify/registry"
	"github.com/envgap/envgap/verify/sandbox"
)

// BoxOpener is a Runner that also opens boxes (the sandbox's Engine is one).
type BoxOpener interface {
	OpenBox(ctx context.Context, spec sandbox.BoxSpec) (*sandbox.Box, error)
}

// BoxSpec is an agent's box for one attempt on one task.
type BoxSpec struct {
	InstanceID   string
	Image        string // the card's image name (envgap-python-eval)
	RegistryDate string
	// Dir is the workspace on the host, mounted at the box's working directory.
	Dir    string
	Limits sandbox.Limits
}

// Box is an agent's box: a container from the task's evaluation image on the sandbox
// network, with the registry proxy's session at the task's cut-off and the egress door,
// exactly as a run's container has them.
type Box struct {
	*sandbox.Box
	sess *registry.Session
	door *egress.Session
}

// OpenBox opens a box. Close it when the attempt ends: the box is removed and the
// refused connections returned.
func (c *Core) OpenBox(ctx context.Context, spec BoxSpec) (*Box, error) {
	op, ok := c.Runner.(BoxOpener)
	if !ok {
		return nil, errors.New("this engine runner cannot open agent boxes")
	}
	cutoff, err := schemas.ParseCutoff(spec.RegistryDate)
	if err != nil {
		return nil, fmt.Errorf("%s: registry_date: %w", spec.InstanceID, err)
	}
	door, doorEnv, doorFiles, err := c.OpenDoor(ctx, spec.Image)
	if err != nil {
		return nil, &InfraError{fmt.Errorf("%s: egress door: %w", spec.InstanceID, err)}
	}
	sess := c.Proxy.NewSession(cutoff)
	b, err := op.OpenBox(ctx, sandbox.BoxSpec{Image: c.ImageRef(spec.Image), Dir: spec.Dir, SystemFiles: doorFiles,
		Env: append(sess.Env(c.ProxyURL), doorEnv...), Network: sandbox.NetworkDefault, Limits: spec.Limits,
		Labels: map[string]string{"org.envgap.instance": spec.InstanceID, "org.envgap.side": "agent"}})
	if err != nil {
		sess.Close()
		if door != nil {
			door.Close()
		}
		return nil, &InfraError{fmt.Errorf("%s: agent box: %w", spec.InstanceID, err)}
	}
	return &Box{Box: b, sess: sess, door: door}, nil
}

// Refused returns the connections the door refused so far.
func (b *Box) Refused() []schemas.ConnectionCount {
	if b.door == nil {
		return nil
	}
	return b.door.Record().Refused
}

// Close removes the box and closes its sessions; it returns the refused connections.
func (b *Box) Close() ([]schemas.ConnectionCount, error) {
	err := b.Box.Close()
	b.sess.Close()
	var refused []schemas.ConnectionCount
	if b.door != nil {
		refused = b.door.Close().Refused
	}
	return refused, err
}
