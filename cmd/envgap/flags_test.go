package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// parse runs the command line down to the options struct (factory.RunF): the flags
// alone, nothing run. It returns the options handed over (nil: none), stderr and the error.
func parse(t *testing.T, args ...string) (any, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	var got any
	f := &factory{Global: &globalOptions{}, Out: &out, Err: &errOut, Getenv: func(string) string { return "" }}
	f.RunF = func(_ *cobra.Command, opts any) error {
		got = opts
		return nil
	}
	root := newRootCommand(f)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	if out.Len() > 0 {
		t.Errorf("%v: wrote %q to stdout before running", args, out.String())
	}
	return got, errOut.String(), err
}

func TestFlagHandling(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		usage  string                // a usage error naming this; "" : parsed
		check  func(opts any) string // what is wrong with the options handed over, or ""
		stderr string                // a warning expected on stderr
	}{
		{args: []string{"propose", "--agent", "a"}, check: func(o any) string {
			if p := o.(*proposeOptions); p.Agent.Raw != "a" || p.AttemptTimeout != 20*time.Minute {
				return "default attempt timeout"
			}
			return ""
		}},
		{args: []string{"propose", "--agent", "a", "--attempt-timeout", "5m", "--ids", "x,y", "--ids", "z"}, check: func(o any) string {
			if p := o.(*proposeOptions); p.AttemptTimeout != 5*time.Minute || strings.Join(p.IDs, " ") != "x y z" {
				return "attempt timeout or ids"
			}
			return ""
		}},
		{args: []string{"propose", "--agent", "a", "--timeout", "7m"}, stderr: "--timeout is deprecated: use --attempt-timeout", check: func(o any) string {
			if o.(*proposeOptions).AttemptTimeout != 7*time.Minute {
				return "--timeout is not an alias of --attempt-timeout"
			}
			return ""
		}},
		{args: []string{"propose", "--agent", "a", "--attempt-timeout", "0s"}, usage: "--attempt-timeout must be positive"},
		{args: []string{"propose"}, usage: "--agent is required"},
		{args: []string{"run", "--agent", "noop", "--split", "lite", "--out", "d", "--k", "3", "--attempt-timeout", "90s"}, check: func(o any) string {
			if r := o.(*runOptions); r.K != 3 || r.AttemptTimeout != 90*time.Second || r.MaxAttempts != 10 || r.Split != "lite" || r.Jobs != 1 {
				return "run options"
			}
			return ""
		}},
		{args: []string{"run", "--agent", "noop", "--split", "lite", "--out", "d", "--attempt-timeout", "-1s"}, usage: "--attempt-timeout must be positive"},
		{args: []string{"run", "--agent", "noop", "--split", "nope", "--out", "d"}, usage: "nope"},
		{args: []string{"run", "--agent", "noop", "--out", "d"}, usage: "--split is required"},
		{args: []string{"eval", "--pred", "gold", "--split", "secure", "--out", "d", "--jobs", "2"}, check: func(o any) string {
			if e := o.(*evalOptions); e.Pred != "gold" || e.Jobs != 2 || e.Split != "secure" || e.Slurm.Slurm {
				return "eval options"
			}
			return ""
		}},
		{args: []string{"eval", "--split", "lite", "--out", "d"}, usage: "--pred is required"},
		{args: []string{"eval", "--pred", "gold", "--split", "lite", "--out", "d", "--partition", "p"}, usage: "--partition needs --slurm"},
		{args: []string{"verify", "--ids", "a,b", "--jobs", "2", "--repeat", "3"}, check: func(o any) string {
			if v := o.(*verifyOptions); strings.Join(v.IDs, " ") != "a b" || v.Jobs != 2 || v.Repeat != 3 {
				return "verify options"
			}
			return ""
		}},
		{args: []string{"verify", "--jobs", "0"}, usage: "--jobs and --repeat must be at least 1"},
		{args: []string{"verify", "--workers", "3"}, usage: "--workers needs --slurm"},
		{args: []string{"verify", "--no-such-flag"}, usage: "unknown flag"},
		{args: []string{"study", "run", "--agent", "openai", "--model", "org/m 1", "--budget", "2", "--price-in", "1", "--out", "d"}, check: func(o any) string {
			if r := o.(*studyRunOptions); !r.Agent.IsModel() || r.AgentName != "org-m-1" || r.Budget != 2 || r.PriceIn != 1 || r.MaxTurns != 100 || r.ContextTokens == 0 {
				return "study run's model agent options"
			}
			return ""
		}, stderr: "does not know the context of model org/m 1"},
		{args: []string{"recheck", "--date", "2026-01-02"}, check: func(o any) string {
			if r := o.(*recheckOptions); r.Date != "2026-01-02" || r.Slurm.Slurm {
				return "recheck options"
			}
			return ""
		}},
		// The model agents' flags are checked alike by run, propose and study run.
		{args: []string{"propose", "--agent", "openai"}, usage: "--agent openai needs --model"},
		{args: []string{"run", "--agent", "bedrock", "--model", "m", "--base-url", "http://127.0.0.1:1/v1", "--split", "lite", "--out", "d"}, usage: "--base-url is for --agent openai"},
		{args: []string{"study", "run", "--agent", "bedrock", "--model", "m", "--base-url", "http://127.0.0.1:1/v1", "--out", "d"}, usage: "--base-url is for --agent openai"},
		{args: []string{"study", "run", "--agent", "openai", "--model", "m", "--region", "r", "--out", "d"}, usage: "--region is for --agent bedrock"},
		{args: []string{"study", "run", "--agent", "openai", "--model", "m", "--budget", "-1", "--out", "d"}, usage: "cannot be negative"},
		{args: []string{"run", "--agent", "my-agent", "--model", "m", "--split", "lite", "--out", "d"}, usage: "--model, --base-url and --region are for --agent openai or bedrock"},
		{args: []string{"run", "--agent", "gold", "--agent-image", "img", "--split", "lite", "--out", "d"}, usage: "--agent-image is for an agent command, not --agent gold"},
		{args: []string{"study", "run", "--agent", "openai", "--model", "m", "--agent-image", "img", "--out", "d"}, usage: "--agent-image is for an agent command: --agent openai"},
		// The commands without checks of their own hand their options over as parsed.
		{args: []string{"site", "--hub", "h", "--out", "o", "--results", "a,b", "c"}, check: func(o any) string {
			if s := o.(*siteOptions); s.Hub != "h" || s.Out != "o" || strings.Join(s.Results, " ") != "a b c" {
				return "site options (--results and arguments together)"
			}
			return ""
		}},
		{args: []string{"trajectories", "r", "--out", "o"}, check: func(o any) string {
			if tr := o.(*trajectoriesOptions); tr.Format != "atif" || tr.Out != "o" {
				return "trajectories options"
			}
			return ""
		}},
		{args: []string{"trajectories", "r", "--out", "o", "--format", "json"}, usage: "the only format is atif"},
		{args: []string{"registry", "serve", "--addr", "127.0.0.1:0", "--cutoff", "2020-01-01"}, check: func(o any) string {
			if r := o.(*registryServeOptions); r.Addr != "127.0.0.1:0" || r.Cutoff != "2020-01-01" {
				return "registry serve options"
			}
			return ""
		}},
		{args: []string{"sandbox", "check", "--image", "img"}, check: func(o any) string {
			if sc := o.(*sandboxCheckOptions); sc.Image != "img" {
				return "sandbox check options"
			}
			return ""
		}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			opts, stderr, err := parse(t, tc.args...)
			if tc.usage != "" {
				var ue usageError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.usage) {
					t.Fatalf("err %v, want a usage error saying %q", err, tc.usage)
				}
				if opts != nil {
					t.Errorf("the run function was reached with %+v", opts)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if opts == nil {
				t.Fatal("the run function was not reached")
			}
			if what := tc.check(opts); what != "" {
				t.Errorf("%s: got %+v", what, opts)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q, want %q", stderr, tc.stderr)
			}
		})
	}
}
