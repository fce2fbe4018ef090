package main

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/core/shell"
	"github.com/envgap/envgap/crawl"
	"github.com/envgap/envgap/crawl/gitfetch"
	"github.com/envgap/envgap/harness/eval"
	"github.com/envgap/envgap/lib/safeinstall"
	"github.com/envgap/envgap/verify"
	"github.com/spf13/cobra"
)

// checkoutSource returns how verify materialises GitHub candidates: the files of
// base_commit alone, fetched at depth 1 (no later history, so never the fix), read from
// git's tree with their modes and link targets.
func checkoutSource(urlTemplate string) core.ProjectSource {
	return func(ctx context.Context, repo, commit string) ([]core.File, error) {
		url, err := crawl.GitURL(urlTemplate, repo)
		if err != nil {
			return nil, err
		}
		tree, err := gitfetch.ReadCommit(ctx, url, commit, "")
		if err != nil {
			return nil, err
		}
		files := make([]core.File, len(tree))
		for i, f := range tree {
			files[i] = core.File{Path: f.Path, Content: f.Content, Mode: f.Mode.Perm(), Link: f.Link}
		}
		return files, nil
	}
}

// reproCommand is how an agent runs repro_command: this binary's agent-repro ("" when
// the binary cannot name itself: no repro server then).
func reproCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return shell.Quote(exe) + " agent-repro"
}

// npmRegistry returns the npm registry a command uses: the URL given on its command line,
// else the npm client's configured registry (asked once, here, and passed down to the
// registry proxy, the audit or the image build).
func npmRegistry(ctx context.Context, given string) (string, error) {
	if given != "" {
		return given, nil
	}
	return registry.NPMConfigRegistry(ctx)
}

// npmRegistryOrWarn is npmRegistry for commands that can do without npm: when the npm
// client cannot say, it warns and returns "" (npm requests through the proxy then fail
// with a message saying to pass the URL).
func npmRegistryOrWarn(ctx context.Context, f *factory, given, flag string) string {
	u, err := npmRegistry(ctx, given)
	if err != nil {
		fmt.Fprintf(f.Err, "warning: %v; npm will not work (pass %s URL)\n", err, flag)
	}
	return u
}

// evaluator opens the engines and the registry proxy and returns the evaluator with the
// safe-install check wired in.
func (o *scoringOptions) evaluator(c *cobra.Command, f *factory) (*eval.Evaluator, *verify.Session, error) {
	ev := &eval.Evaluator{}
	if !o.NoSafeInstall {
		check, source, err := o.checker(c.Context())
		if err != nil {
			return nil, nil, err
		}
		// The check's rules are part of the memo key: a changed safe-install rule scores
		// again (without a container).
		ev.SafeInstall, ev.SafeInstallSource = check, source+" rules="+safeinstall.RulesVersion
	}
	sess, vo, err := o.open(c, f)
	if err != nil {
		return nil, nil, err
	}
	ev.Store, ev.Runner, ev.Checkout, ev.Limits = sess.Stage.Store, sess.Stage, vo.Checkout, vo.Limits
	return ev, sess, nil
}

// checker builds the safe-install check of the upstreams, and a name of what it asks (the OSV file
// by the digest of its content).
func (o *auditUpstreams) checker(ctx context.Context) (*safeinstall.Checker, string, error) {
	npmURL, err := npmRegistry(ctx, o.NPMRegistry)
	if err != nil {
		return nil, "", usageError{fmt.Errorf("%w (or pass --npm-registry URL)", err)}
	}
	client := &http.Client{Timeout: o.Timeout}
	a := &safeinstall.Checker{
		PyPI:  &safeinstall.PyPI{Base: o.PyPI, Client: client},
		NPM:   &safeinstall.NPM{Base: npmURL, Client: client},
		Maven: &safeinstall.Maven{Base: o.Maven, Client: client},
		OSV:   &safeinstall.OSVAPI{Base: o.OSVURL, Client: client},
	}
	if o.OSVFile != "" {
		db, err := safeinstall.LoadOSVFile(o.OSVFile)
		if err != nil {
			return nil, "", usageError{err}
		}
		a.OSV = db
	}
	return a, fmt.Sprintf("pypi=%s npm=%s maven=%s osv=%s", o.PyPI, npmURL, o.Maven, a.OSV.Source()), nil
}
