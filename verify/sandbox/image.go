package sandbox

import (
	"context"
	"fmt"

	"github.com/containerd/errdefs"
)

// ImageID returns the id of an image on the engine, or an error wrapping ErrImageMissing
// that says to run `envgap build-images`.
func (e *Engine) ImageID(ctx context.Context, ref string) (string, error) {
	img, err := e.cli.ImageInspect(ctx, ref)
	if err != nil {
		if errdefs.IsNotFound(err) {
			return "", fmt.Errorf("%w: %s is not on the engine at %s: run `envgap build-images`", ErrImageMissing, ref, e.host)
		}
		return "", fmt.Errorf("inspecting image %s: %w", ref, err)
	}
	return img.ID, nil
}
