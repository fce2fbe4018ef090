package sandbox

import (
	"context"
	"fmt"

	"time"

	"github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
)

// ImageID returns the id of an image on the engine, or an error wrapping ErrImageMissing
// that says to run `envgap build-images`.
func (e *Engine) ImageID(ctx context.Context, ref string) (string, error) {
	img, err := e.inspect(ctx, ref, ": run `envgap build-images`")
	return img.ID, err
}

// ImageLayers returns the diff ids of an image's layers, lowest first (for telling
// whether one image is built on another: its layers start with the other's).
func (e *Engine) ImageLayers(ctx context.Context, ref string) ([]string, error) {
	img, err := e.inspect(ctx, ref, "")
	return img.RootFS.Layers, err
}

// inspect inspects an image; a missing one is an error wrapping ErrImageMissing, with
// hint after its message.
func (e *Engine) inspect(ctx context.Context, ref, hint string) (image.InspectResponse, error) {
	var img image.InspectResponse
	err := e.call(ctx, maxCallTimeout, time.Time{}, "inspecting image "+ref, func(ctx context.Context) (err error) {
		img, err = e.cli.ImageInspect(ctx, ref)
		return err
	})
	if errdefs.IsNotFound(err) {
		return img, fmt.Errorf("%w: %s is not on the engine at %s%s", ErrImageMissing, ref, e.host, hint)
	}
	return img, err
}
