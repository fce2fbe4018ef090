package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/schemas"
)

// Contained is how agent commands run in boxes (run --agent CMD --agent-image IMAGE): the
// agent image for each task's evaluation image, and the hosts the door lets through
// besides the evaluation image's package sources (an agent CLI's model API).
type Contained struct {
	// Images maps a card image name (envgap-python-eval) to an agent image (an engine
	// reference); the key "" is the agent image of every other card image.
	Images map[string]string
	// AllowHosts are "host:port" targets.
	AllowHosts []string

	mu      sync.Mutex
	checked map[[2]string]error
}

// ImageChecker checks an agent image against a card image (verify.Stage is one).
type ImageChecker interface {
	CheckAgentImage(ctx context.Context, agentRef, cardImage string) error
}

// ImageFor returns the agent image of a card image, or "" when none is given for it.
func (c *Contained) ImageFor(card string) string {
	if img, ok := c.Images[card]; ok {
		return img
	}
	return c.Images[""]
}

// CardImages returns the card images of tasks, sorted, each once.
func CardImages(tasks []schemas.Task) []string {
	set := map[string]bool{}
	for i := range tasks {
		set[core.TaskRecipe(&tasks[i]).Image] = true
	}
	out := make([]string, 0, len(set))
	for img := range set {
		out = append(out, img)
	}
	sort.Strings(out)
	return out
}

// Boxes opens agent boxes and checks agent images (verify.Stage and core.Core are such).
type Boxes interface {
	BoxOpener
	ImageChecker
}

// Box returns the box of an attempt on t (nil for a nil Contained: the command runs on
// this host). boxes opens it and checks its image (see Image); nil: the evaluation
// runner cannot, an error.
func (c *Contained) Box(ctx context.Context, t *schemas.Task, boxes Boxes, limits sandbox.Limits) (*BoxRun, error) {
	if c == nil {
		return nil, nil
	}
	if boxes == nil {
		return nil, errors.New("the evaluation runner cannot open agent boxes")
	}
	img, err := c.Image(ctx, core.TaskRecipe(t).Image, boxes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.InstanceID, err)
	}
	return &BoxRun{Opener: boxes, Image: img, AllowHosts: c.AllowHosts, Limits: limits}, nil
}

// ErrNoImage is returned (wrapped) by Image for a card image no --agent-image serves.
var ErrNoImage = errors.New("no --agent-image")

// Image returns the agent image of a card image; with a checker (nil: none), it is
// checked to be built on the card image (once per pair: a check made before the run
// starts is not made again when each box opens).
func (c *Contained) Image(ctx context.Context, card string, checker ImageChecker) (string, error) {
	img := c.ImageFor(card)
	if img == "" {
		return "", fmt.Errorf("%w for the tasks on the evaluation image %s: give IMAGE for every task or %s=IMAGE", ErrNoImage, card, card)
	}
	if checker != nil {
		if err := c.check(ctx, checker, img, card); err != nil {
			return "", fmt.Errorf("--agent-image: %w", err)
		}
	}
	return img, nil
}

// ParseAgentImages reads --agent-image values: IMAGE (every task) or CARD=IMAGE (the
// tasks whose evaluation image is CARD, e.g. envgap-python-eval=my-agent:py).
func ParseAgentImages(values []string, cards []string) (map[string]string, error) {
	known := map[string]bool{}
	for _, c := range cards {
		known[c] = true
	}
	out := map[string]string{}
	for _, v := range values {
		card, img, ok := strings.Cut(strings.TrimSpace(v), "=")
		if !ok {
			card, img = "", card
		}
		if img == "" || strings.ContainsAny(img, " \t\n") {
			return nil, fmt.Errorf("--agent-image %q: want IMAGE or EVAL-IMAGE=IMAGE", v)
		}
		if ok && !known[card] {
			return nil, fmt.Errorf("--agent-image %q: %q is not an evaluation image (one of %s)", v, card, strings.Join(cards, ", "))
		}
		if prev, dup := out[card]; dup && prev != img {
			what := "every task"
			if card != "" {
				what = card
			}
			return nil, fmt.Errorf("--agent-image: two images for %s (%s and %s)", what, prev, img)
		}
		out[card] = img
	}
	return out, nil
}

var hostName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$`)

// ParseAllowHosts reads --allow-host values: HOST or HOST:PORT (port 443 when none is
// given), a DNS name or an IP address ([::1]:443 for IPv6 with a port). It returns
// "host:port" targets, lower-case, sorted, each once.
func ParseAllowHosts(values []string) ([]string, error) {
	set := map[string]bool{}
	for _, v := range values {
		raw := strings.ToLower(strings.TrimSpace(v))
		if strings.Contains(raw, "://") || strings.ContainsAny(raw, "/?#@") {
			return nil, fmt.Errorf("--allow-host %q: give a host or host:port, not a URL", v)
		}
		host, port := raw, "443"
		if h, p, err := net.SplitHostPort(raw); err == nil {
			host, port = h, p
		} else if strings.HasPrefix(raw, "[") && strings.HasSuffix(raw, "]") {
			host = raw[1 : len(raw)-1]
		}
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("--allow-host %q: the port must be a number from 1 to 65535", v)
		}
		if net.ParseIP(host) == nil && (len(host) > 253 || !hostName.MatchString(host)) {
			return nil, fmt.Errorf("--allow-host %q: %q is not a host name or an IP address", v, host)
		}
		set[net.JoinHostPort(host, strconv.Itoa(n))] = true
	}
	out := make([]string, 0, len(set))
	for h := range set {
		out = append(out, h)
	}
	sort.Strings(out)
	return out, nil
}

func (c *Contained) check(ctx context.Context, ch ImageChecker, img, card string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := [2]string{img, card}
	if err, ok := c.checked[key]; ok {
		return err
	}
	err := ch.CheckAgentImage(ctx, img, card)
	if ctx.Err() != nil {
		return err
	}
	if c.checked == nil {
		c.checked = map[[2]string]error{}
	}
	c.checked[key] = err
	return err
}
