package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/envgap/envgap/core/egress"
	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/schemas"
)

// BoxOpener is a Runner that also opens boxes (the sandbox's Engine is one).
type BoxOpener interface {
	OpenBox(ctx context.Context, spec sandbox.BoxSpec) (*sandbox.Box, error)
}

// BoxSpec is an agent's box for one attempt on one task.
type BoxSpec struct {
	InstanceID string
	Image      string         // the card's image name (envgap-python-eval)
	Cutoff     schemas.Cutoff // the registry cut-off
	// Dir is the workspace on the host, mounted at the box's working directory
	// (WorkDir; empty: the sandbox's default, /work).
	Dir     string
	WorkDir string
	// Mounts are further host paths of the box (read-only unless writable).
	Mounts []sandbox.Mount
	Limits sandbox.Limits
	// AgentImage is the engine reference of the image the box runs (an agent CLI's image
	// built on the evaluation image, see CheckAgentImage); empty: the evaluation image.
	// The door's allowlist is the evaluation image's either way, plus AllowHosts.
	AgentImage string
	// AllowHosts are further "host:port" targets the door lets through (the model API
	// hosts of an agent CLI).
	AllowHosts []string
}

// Box is an agent's box: a container from the task's evaluation image on the sandbox
// network, with the registry proxy's session at the task's cut-off and the egress door,
// exactly as a run's container has them.
type Box struct {
	*sandbox.Box
	sess *registry.Session
	door *egress.Session
	host string

	closeOnce sync.Once
}

// OpenBox opens a box. Close it when the attempt ends: the box is removed and the
// refused connections returned.
func (c *Core) OpenBox(ctx context.Context, spec BoxSpec) (*Box, error) {
	op, ok := c.Runner.(BoxOpener)
	if !ok {
		return nil, errors.New("this engine runner cannot open agent boxes")
	}
	cutoff := spec.Cutoff
	if cutoff.IsZero() {
		return nil, fmt.Errorf("%s: no registry cut-off given", spec.InstanceID)
	}
	door, doorEnv, doorFiles, err := c.OpenDoor(ctx, spec.Image, spec.AllowHosts...)
	if err != nil {
		return nil, &InfraError{fmt.Errorf("%s: egress door: %w", spec.InstanceID, err)}
	}
	sess := c.Proxy.NewSession(cutoff)
	image := spec.AgentImage
	if image == "" {
		image = c.ImageRef(spec.Image)
	}
	b, err := op.OpenBox(ctx, sandbox.BoxSpec{Image: image, Dir: spec.Dir, WorkDir: spec.WorkDir, Mounts: spec.Mounts, SystemFiles: doorFiles,
		Env: append(sess.Env(c.ProxyURL), doorEnv...), Network: sandbox.NetworkDefault, Limits: spec.Limits,
		Labels:  map[string]string{"org.envgap.instance": spec.InstanceID, "org.envgap.side": "agent"},
		Started: c.bindSession(sess)})
	if err != nil {
		sess.Close()
		if door != nil {
			door.Close()
		}
		return nil, &InfraError{fmt.Errorf("%s: agent box: %w", spec.InstanceID, err)}
	}
	return &Box{Box: b, sess: sess, door: door, host: egress.HostOf(c.ProxyURL)}, nil
}

// HostAddr is the address the box reaches this host at (where the registry proxy and
// the door listen): a server for the box listens there.
func (b *Box) HostAddr() string { return b.host }

// ErrNotBuiltOn is returned (wrapped) by CheckAgentImage for an agent image that is not
// built on the evaluation image.
var ErrNotBuiltOn = errors.New("not built on the evaluation image")

// LayerReader is a Runner that lists an image's layers (the sandbox's Engine is one).
type LayerReader interface {
	ImageLayers(ctx context.Context, ref string) ([]string, error)
}

// CheckAgentImage checks that an agent image (an engine reference) is on the engine and
// built on a card image (FROM it: its layers start with the card image's), so that the
// agent acts on what scoring runs on.
func (c *Core) CheckAgentImage(ctx context.Context, agentRef, cardImage string) error {
	lr, ok := c.Runner.(LayerReader)
	if !ok {
		return errors.New("this engine runner cannot list image layers")
	}
	base, err := lr.ImageLayers(ctx, c.ImageRef(cardImage))
	if err != nil {
		return err
	}
	layers, err := lr.ImageLayers(ctx, agentRef)
	if err != nil {
		return err
	}
	if len(layers) < len(base) || !slices.Equal(layers[:len(base)], base) {
		return fmt.Errorf("%s: %w %s (%s): build it FROM %s", agentRef, ErrNotBuiltOn, cardImage, c.ImageRef(cardImage), c.ImageRef(cardImage))
	}
	return nil
}

// Refused returns the connections the door refused so far.
func (b *Box) Refused() []schemas.ConnectionCount {
	if b.door == nil {
		return nil
	}
	return b.door.Record().Refused
}

// Close removes the box and closes its sessions; it returns the refused connections.
// Only the first call does anything (later ones return nothing), so a caller may defer it
// and call it too.
func (b *Box) Close() ([]schemas.ConnectionCount, error) {
	var refused []schemas.ConnectionCount
	var err error
	b.closeOnce.Do(func() {
		err = b.Box.Close()
		b.sess.Close()
		if b.door != nil {
			refused = b.door.Close().Refused
		}
	})
	return refused, err
}
