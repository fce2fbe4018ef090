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
	var img image.InspectResponse
	err := e.call(ctx, maxCallTimeout, time.Time{}, "inspecting image "+ref, func(ctx context.Context) (err error) {
		img, err = e.cli.ImageInspect(ctx, ref)
		return err
	})
	if err != nil {
		if errdefs.IsNotFound(err) {
			return "", fmt.Errorf("%w: %s is not on the engine at %s: run `envgap build-images`", ErrImageMissing, ref, e.host)
		}
		return "", err
	}
	return img.ID, nil
}

// ImageLayers returns the diff ids of an image's layers, lowest first (for telling
// whether one image is built on another: its layers start with the other's).
func (e *Engine) ImageLayers(ctx context.Context, ref string) ([]string, error) {
	var img image.InspectResponse
	err := e.call(ctx, maxCallTimeout, time.Time{}, "inspecting image "+ref, func(ctx context.Context) (err error) {
		img, err = e.cli.ImageInspect(ctx, ref)
		return err
	})
	if err != nil {
		if errdefs.IsNotFound(err) {
			return nil, fmt.Errorf("%w: %s is not on the engine at %s", ErrImageMissing, ref, e.host)
		}
		return nil, err
	}
	return img.RootFS.Layers, nil
}
