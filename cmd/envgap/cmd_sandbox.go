package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/egress"
	"github.com/envgap/envgap/core/sandbox"
	"github.com/envgap/envgap/schemas"
	"github.com/spf13/cobra"
)

type sandboxCheckOptions struct {
	Engine string
	Image  string
}

func newSandboxCommand(f *factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "sandbox",
		Short: "Check the sandbox's wall (see sandbox check)",
		Args:  exactArgs(0),
	}
	opts := &sandboxCheckOptions{}
	check := &cobra.Command{
		Use:   "check",
		Short: "Probe the sandbox's wall from inside real sandbox containers; exit 5 when anything leaks",
		Long: `Connect to the engine (which checks the sandbox network and, on this host, its rules,
putting them back when missing), then probe from inside a container on the sandbox network:
envgap's own listener on the gateway must be reached; a host port envgap did not open, a host
service bound to all addresses, another run's container, a raw IP and the internet, the cloud
metadata address, DNS of an arbitrary name and IPv6 must not; the capabilities must be the
core's alone, with no-new-privileges, and no device node can be made. Then the egress door,
from a container holding one door session's credential: its own session passes a request on;
a CONNECT to :80 is refused; a tunnel whose TLS ClientHello names another host than the
CONNECT host is closed unforwarded; another run's door session refuses a request without a
credential and one with this container's (407), counting neither. Then the registry proxy's
sessions, from inside a container that holds one: a request inside its session is answered;
a request outside the session, a later cut-off, and another run's session are refused and
recorded in its session. And the user namespace: the container's root must not be the host's
(its uid_map is not the identity, and a file it creates in its mounted workspace is owned on
the host by another uid than 0); on an engine that cannot give one (a Docker daemon without
userns-remap, Podman without subordinate ids) the line is a WARNING, not a leak. Prints a
table (probe, expected, result) and exits 5 when any probe leaks.`,
		Example: "  envgap sandbox check\n  envgap sandbox check --json",
		Args:    exactArgs(0),
		RunE: func(c *cobra.Command, args []string) error {
			return f.run(c, opts, func() error { return runSandboxCheck(c, f, opts) })
		},
	}
	check.Flags().StringVar(&opts.Engine, "engine", "", "Docker Engine API endpoint (default $DOCKER_HOST)")
	check.Flags().StringVar(&opts.Image, "image", "", "image of the probe containers (default the python evaluation image)")
	c.AddCommand(check)
	return c
}

func runSandboxCheck(c *cobra.Command, f *factory, opts *sandboxCheckOptions) error {
	eng, err := sandbox.Connect(c.Context(), opts.Engine)
	if err != nil {
		return err
	}
	defer eng.Close()
	image := opts.Image
	if image == "" {
		image = schemas.ImageRef("envgap-python-eval")
	}
	// The wall's probes, the door's and the registry's at once (each with its own
	// containers, listeners and sessions); the table keeps that order.
	var doorProbes, regProbes []sandbox.Probe
	doorErr, regErr := make(chan error, 1), make(chan error, 1)
	go func() {
		var err error
		doorProbes, err = egress.CheckDoor(c.Context(), eng, image, nil)
		doorErr <- err
	}()
	go func() {
		var err error
		regProbes, err = core.CheckRegistrySessions(c.Context(), eng, image)
		regErr <- err
	}()
	probes, err := eng.CheckWall(c.Context(), image)
	if derr := <-doorErr; err == nil && derr != nil {
		err = fmt.Errorf("probing the egress door: %w", derr)
	}
	if rerr := <-regErr; err == nil && rerr != nil {
		err = fmt.Errorf("registry session probes: %w", rerr)
	}
	if err != nil {
		return err
	}
	probes = append(append(probes, doorProbes...), regProbes...)
	leaks, warnings := 0, 0
	for _, p := range probes {
		if p.Leak {
			leaks++
		}
		if p.Warning {
			warnings++
		}
	}
	if f.Global.JSON {
		if err := f.printJSON(struct {
			Engine   string          `json:"engine"`
			Wall     *sandbox.Wall   `json:"wall"`
			UserNS   sandbox.UserNS  `json:"user_namespace"`
			Probes   []sandbox.Probe `json:"probes"`
			Leaking  int             `json:"leaking"`
			Warnings int             `json:"warnings"`
		}{eng.Host(), eng.Wall(), eng.UserNS(), probes, leaks, warnings}); err != nil {
			return err
		}
	} else {
		w := eng.Wall()
		fmt.Fprintf(f.Out, "engine %s, sandbox network %s (%s, bridge %s), host rules: %s\n\n", eng.Host(), w.Network, w.Subnet, orDash(w.Iface), w.Checked)
		tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "probe\texpected\tresult\t")
		for _, p := range probes {
			mark := ""
			if p.Leak {
				mark = "  LEAK"
			} else if p.Warning {
				mark = "  WARNING"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s%s\t\n", p.Name, p.Expected, p.Result, mark)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(f.Out, "\n%d probes, %d leaking, %d warnings\n", len(probes), leaks, warnings)
	}
	if leaks > 0 {
		return damageError{fmt.Errorf("sandbox check: %d of %d probes leak", leaks, len(probes))}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
