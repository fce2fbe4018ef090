package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/lib/agent"
	"github.com/envgap/envgap/lib/agent/loop"
	"github.com/envgap/envgap/lib/agent/model"
	"github.com/envgap/envgap/lib/agent/model/bedrock"
	"github.com/envgap/envgap/lib/agent/model/openai"
	"github.com/envgap/envgap/lib/agent/model/scripted"
	"github.com/envgap/envgap/schemas"
	"github.com/spf13/cobra"
)

// modelFlags are the flags of envgap's own model agents (--agent openai|bedrock), the
// same for run, propose and study run (newModelAgent reads them).
type modelFlags struct {
	Model         string
	BaseURL       string
	Region        string
	MaxTurns      int
	MaxTokens     int64
	ContextTokens int64
	Budget        float64
	PriceIn       float64
	PriceOut      float64
	Prices        string
	// AgentImages and AllowHosts run an agent command in a box (--agent-image,
	// --allow-host).
	AgentImages []string
	AllowHosts  []string
}

func (b *modelFlags) add(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&b.Model, "model", "", "the model id (--agent openai|bedrock)")
	fl.StringVar(&b.BaseURL, "base-url", "", "an OpenAI-compatible server (vLLM, Ollama, llama.cpp, ...); default the OpenAI API (key from OPENAI_API_KEY)")
	fl.StringVar(&b.Region, "region", "", "the AWS region of --agent bedrock (default: the AWS chain's)")
	fl.IntVar(&b.MaxTurns, "max-turns", loop.DefaultLimits().MaxTurns, "model calls per attempt")
	fl.Int64Var(&b.ContextTokens, "context-tokens", 0, "the model's context in tokens: older tool outputs are elided as the conversation nears it; 0: never")
	b.addBudgetFlags(c, "attempt")
	addContainedFlags(c, &b.AgentImages, &b.AllowHosts)
}

// addBudgetFlags adds --max-tokens, --budget and the prices; per names what they bound
// (an attempt of run, a protocol round of study run).
func (b *modelFlags) addBudgetFlags(c *cobra.Command, per string) {
	fl := c.Flags()
	fl.Int64Var(&b.MaxTokens, "max-tokens", 0, "tokens (input and output of every call) per "+per+"; 0: no limit")
	fl.Float64Var(&b.Budget, "budget", 0, "USD per "+per+" (needs a price); 0: no limit")
	fl.Float64Var(&b.PriceIn, "price-in", 0, "USD per million input tokens (cost_usd; overrides --prices)")
	fl.Float64Var(&b.PriceOut, "price-out", 0, "USD per million output tokens")
	fl.StringVar(&b.Prices, "prices", "", `a prices file: {"MODEL": {"in_per_mtok": X, "out_per_mtok": Y}, ...}`)
}

// addContainedFlags adds --agent-image and --allow-host.
func addContainedFlags(c *cobra.Command, images, hosts *[]string) {
	c.Flags().StringArrayVar(images, "agent-image", nil, "run the agent command in a box from this image, built FROM the tasks' evaluation image (IMAGE, or EVAL-IMAGE=IMAGE per evaluation image; repeatable)")
	c.Flags().StringArrayVar(hosts, "allow-host", nil, "with --agent-image: a host the box may reach besides the registries, e.g. the agent's model API (HOST or HOST:PORT, default port 443; HTTPS is let through on 443 alone, other ports take plain HTTP; repeatable)")
}

// checkFlags refuses bad flags before anything starts (run, propose): the model flags go
// with a model agent only.
func (b *modelFlags) checkFlags(spec agent.Spec) error {
	if err := checkContainedFlags(spec, b.AgentImages, b.AllowHosts); err != nil {
		return err
	}
	if !spec.IsModel() {
		if b.Model != "" || b.BaseURL != "" || b.Region != "" {
			return usageError{fmt.Errorf("--model, --base-url and --region are for --agent %s or %s, not %q", agent.NameOpenAI, agent.NameBedrock, spec.Raw)}
		}
		return nil
	}
	return b.checkModel(spec)
}

// checkModel refuses flags that do not fit a model agent (every command's).
func (b *modelFlags) checkModel(spec agent.Spec) error {
	switch {
	case b.Model == "":
		return usageError{fmt.Errorf("--agent %s needs --model", spec.Raw)}
	case spec.Kind == agent.KindBedrock && b.BaseURL != "":
		return usageError{errors.New("--base-url is for --agent openai")}
	case spec.Kind == agent.KindOpenAI && b.Region != "":
		return usageError{errors.New("--region is for --agent bedrock")}
	case b.MaxTurns < 1:
		return usageError{errors.New("--max-turns must be at least 1")}
	case b.MaxTokens < 0 || b.ContextTokens < 0 || b.Budget < 0 || b.PriceIn < 0 || b.PriceOut < 0:
		return usageError{errors.New("--max-tokens, --context-tokens, --budget and the prices cannot be negative")}
	}
	return nil
}

// price is the model's price: --price-in/--price-out, else the prices file's entry, else nil.
func (b *modelFlags) price() (*model.Price, error) {
	if b.PriceIn > 0 || b.PriceOut > 0 {
		return &model.Price{InPerMTok: b.PriceIn, OutPerMTok: b.PriceOut}, nil
	}
	if b.Prices != "" {
		raw, err := os.ReadFile(b.Prices)
		if err != nil {
			return nil, usageError{fmt.Errorf("--prices: %w", err)}
		}
		ps, err := model.ReadPrices(raw)
		if err != nil {
			return nil, usageError{fmt.Errorf("--prices %s: %w", b.Prices, err)}
		}
		if p, ok := ps[b.Model]; ok {
			return &p, nil
		}
	}
	return nil, nil
}

// newModelAgent is the one constructor of envgap's own model agents (run, propose, study
// run): the model (retried, each retry said on stderr), its limits and price. It returns
// nil for any other agent. An unreachable --base-url is refused here, before any
// container starts, and so is a --budget without a price.
func newModelAgent(ctx context.Context, f *factory, spec agent.Spec, b *modelFlags) (*agent.ModelAgent, error) {
	if !spec.IsModel() {
		return nil, nil
	}
	price, err := b.price()
	if err != nil {
		return nil, err
	}
	if b.Budget > 0 && price == nil {
		return nil, usageError{fmt.Errorf("--budget needs the model's price: --price-in/--price-out or a --prices file with %q", b.Model)}
	}
	var m model.Model
	switch spec.Kind {
	case agent.KindOpenAI:
		if b.BaseURL != "" {
			if err := reachable(ctx, b.BaseURL); err != nil {
				return nil, usageError{fmt.Errorf("--base-url %s: %w", redact(b.BaseURL), err)}
			}
		}
		m, err = openai.New(openai.Options{Model: b.Model, BaseURL: b.BaseURL, APIKey: f.Getenv(openai.EnvKey)})
	case agent.KindBedrock:
		m, err = bedrock.New(ctx, bedrock.Options{Model: b.Model, Region: b.Region})
	}
	if err != nil {
		return nil, usageError{err}
	}
	lim := loop.DefaultLimits()
	lim.MaxTurns, lim.MaxTokens, lim.ContextTokens, lim.BudgetUSD = b.MaxTurns, b.MaxTokens, b.ContextTokens, b.Budget
	retry := model.RetryPolicy{OnRetry: func(err error, wait time.Duration) {
		fmt.Fprintf(f.Err, "%s: %v; retrying in %s\n", spec.Raw, err, wait.Round(time.Second))
	}}
	return &agent.ModelAgent{Provider: spec.Raw, Model: model.Retry(m, retry), Limits: lim, Price: price}, nil
}

// contained returns how an agent command runs in a box (nil: on this host, said on
// stderr); see containedOn. cards are the tasks' evaluation images (nil: any, checked
// when each box opens).
func (b *modelFlags) contained(ctx context.Context, f *factory, spec agent.Spec, cards []string, checker agent.ImageChecker) (*agent.Contained, error) {
	if !spec.IsCommand() {
		return nil, nil
	}
	return containedOn(ctx, f, b.AgentImages, b.AllowHosts, cards, checker)
}

// containedOn reads --agent-image and --allow-host for an agent command: nil (and a word
// on stderr that it is not contained) without images; else the images, each checked on
// the engine before anything starts to be built on the evaluation images it serves (cards;
// nil: any evaluation image may be named, and each box checks its image when it opens).
func containedOn(ctx context.Context, f *factory, imageFlags, hostFlags, cards []string, checker agent.ImageChecker) (*agent.Contained, error) {
	if len(imageFlags) == 0 {
		fmt.Fprintln(f.Err, "envgap: the agent command runs on this host, not contained: it has your privileges and network (the live registries, the project's later history); give --agent-image IMAGE to run it in a box (docs/agents.md)")
		return nil, nil
	}
	known := cards
	if known == nil {
		for _, e := range schemas.Ecosystems {
			known = append(known, e.Image())
		}
	}
	images, err := agent.ParseAgentImages(imageFlags, known)
	if err != nil {
		return nil, usageError{err}
	}
	hosts, err := agent.ParseAllowHosts(hostFlags)
	if err != nil {
		return nil, usageError{err}
	}
	c := &agent.Contained{Images: images, AllowHosts: hosts}
	if checker == nil && len(cards) > 0 {
		return nil, errors.New("this engine cannot check agent images")
	}
	for _, card := range cards {
		// Checked here, the boxes find the pair checked (Contained caches it).
		_, err := c.Image(ctx, card, checker)
		switch {
		case errors.Is(err, core.ErrNotBuiltOn) || errors.Is(err, sandbox.ErrImageMissing):
			if _, own := images[card]; !own && len(cards) > 1 {
				err = fmt.Errorf("%w; these tasks run on %d evaluation images (%s): give one image for each, as --agent-image EVAL-IMAGE=IMAGE", err, len(cards), strings.Join(cards, ", "))
			}
			return nil, usageError{err}
		case errors.Is(err, agent.ErrNoImage):
			return nil, usageError{err}
		case err != nil:
			return nil, err
		}
	}
	return c, nil
}

// checkContainedFlags refuses --allow-host without --agent-image, and --agent-image for
// an agent that is not a command.
func checkContainedFlags(spec agent.Spec, images, hosts []string) error {
	if len(hosts) > 0 && len(images) == 0 {
		return usageError{errors.New("--allow-host goes with --agent-image (it opens the box's door to a host)")}
	}
	if len(images) == 0 {
		return nil
	}
	switch {
	case spec.IsModel():
		return usageError{fmt.Errorf("--agent-image is for an agent command: --agent %s acts in a box from the task's evaluation image", spec.Raw)}
	case spec.IsBuiltin():
		return usageError{fmt.Errorf("--agent-image is for an agent command, not --agent %s", spec.Raw)}
	}
	if _, err := agent.ParseAllowHosts(hosts); err != nil {
		return usageError{err}
	}
	return nil
}

// reachable dials the URL's host and port.
func reachable(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("not an http(s) URL")
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	d := net.Dialer{Timeout: 10 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return fmt.Errorf("unreachable: %w", err)
	}
	return conn.Close()
}

// redact drops a URL's userinfo.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	return u.String()
}

// newModelServeCommand is the demo's stand-in model: a scripted conversation served over
// the OpenAI chat-completions wire format.
func newModelServeCommand(f *factory) *cobra.Command {
	var script, addr, urlFile string
	c := &cobra.Command{
		Use:    "model-serve --script FILE",
		Short:  "Serve a scripted stand-in model over the OpenAI chat-completions wire format (tests and the demo)",
		Hidden: true,
		Args:   exactArgs(0),
		RunE: func(c *cobra.Command, args []string) error {
			s, err := scripted.Read(script)
			if err != nil {
				return usageError{err}
			}
			return serveURL(c.Context(), addr, "/v1", urlFile, scripted.NewServer(s), func(base string) {
				fmt.Fprintf(f.Out, "scripted model %q (not a model: it plays %s) at %s\n", s.Model, script, base)
			})
		},
	}
	c.Flags().StringVar(&script, "script", "", "the script (lib/agent/model/scripted)")
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "where to listen")
	c.Flags().StringVar(&urlFile, "url-file", "", "write the base URL to this file once listening")
	c.MarkFlagRequired("script")
	return c
}
