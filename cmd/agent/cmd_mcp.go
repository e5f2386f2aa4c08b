package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/autoshell/agent/mcpserver"
	"github.com/autoshell/agent/safety"
)

// mcpOptions are `agent mcp`'s flags.
type mcpOptions struct {
	host    hostOptions
	batch   batchOptions
	approve string
	http    string
	idle    time.Duration
	limits  limitOptions // --allow-write, --read-only: every step of every call
}

// mcpTokenEnv holds the bearer token of `agent mcp --http` (never a flag:
// flags show in ps).
const mcpTokenEnv = "AGENT_MCP_TOKEN"

// runMCP is `agent mcp`: agent's step tools, list_hosts, run_plan and undo
// served to an MCP client over stdio, or over streamable HTTP with --http.
func runMCP(ctx context.Context, a *app, args []string) error {
	fs := pflag.NewFlagSet("mcp", pflag.ContinueOnError)
	var o mcpOptions
	o.host.addFlags(fs)
	_ = fs.MarkHidden("ssh-host") // every call names its host
	o.batch.inv.addFlags(fs, "let calls name the hosts of the Ansible inventory `SOURCE`; list_hosts and run_plan use it")
	fs.StringVar(&o.batch.limit, "limit", "", "only the inventory's hosts matching `PATTERN`")
	fs.IntVar(&o.batch.forks, "forks", defaultForks, "run_plan's default `N` hosts at once")
	fs.StringVar(&o.approve, "approve", "ask", "`MODE`: never, ask (the client's user is asked by MCP elicitation; refused when it cannot ask), medium or all")
	fs.StringVar(&o.http, "http", "", "serve streamable HTTP on `ADDR` (host:port; a bare :port is loopback) at /mcp instead of stdio; "+mcpTokenEnv+" is the bearer token, required off loopback")
	fs.DurationVar(&o.idle, "idle-timeout", mcpserver.DefaultIdleTimeout, "close a host's connection unused for `DURATION`")
	o.limits.addFlags(fs)
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: agent mcp [-i INVENTORY [--limit PAT]] [--approve MODE] [--http ADDR] [host flags]\n\n"+
			"Serve agent's tools to an MCP client (Claude Code, Codex, …) on stdin/stdout.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := a.parseFlags(fs, args, usage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("mcp takes no arguments (got %q)", fs.Args())
	}
	if err := a.mcpGlobalsUnused(); err != nil {
		return err
	}
	mergeHost(&a.host, o.host, fs)
	a.task.limits.merge(o.limits, fs) // applied by loadPolicy, for every host the server opens
	if a.host.sshHost != "" {
		return usagef("mcp: --ssh-host does not apply: every call names its host")
	}
	given := o.batch.inv
	o.batch.inv = a.task.batch.inv
	mergeInventory(&o.batch.inv, given, fs)
	if !fs.Changed("limit") {
		o.batch.limit = a.task.batch.limit
	}
	if !fs.Changed("forks") {
		o.batch.forks = a.task.batch.forks
	}
	if !fs.Changed("approve") && a.task.approve != "" {
		o.approve = a.task.approve
	}
	if o.batch.limit != "" && !o.batch.inv.given() {
		return usagef("mcp: --limit needs -i INVENTORY")
	}
	if o.batch.forks < 1 {
		return usagef("mcp: --forks must be at least 1")
	}
	mode, err := safety.ParseMode(o.approve)
	if err != nil {
		return usagef("--approve: %v", err)
	}
	policy, err := a.loadPolicy()
	if err != nil {
		return err
	}
	spec, err := o.batch.inv.spec(ctx)
	if err != nil {
		return err
	}
	bec, err := a.becomeSettings(ctx) // -b, --become-user, --become-method, -K, the config's become section
	if err != nil {
		return err
	}
	srv, err := mcpserver.New(mcpserver.Options{
		Policy: policy, Approve: mode, Inventory: spec, Limit: o.batch.limit, Become: bec,
		SSH: a.host.overrides(), Forks: o.batch.forks, IdleTimeout: o.idle, Version: version,
		Warn: func(msg string) { fmt.Fprintln(a.stderr, "agent mcp:", msg) },
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	if o.http == "" {
		err := srv.ServeStdio(ctx)
		if ctx.Err() != nil || errors.Is(err, io.EOF) {
			return nil // the client left, or agent was stopped
		}
		return err
	}
	return serveMCPHTTP(ctx, a, srv, o.http)
}

// mcpGlobalsUnused refuses the global flags that mean nothing to mcp.
func (a *app) mcpGlobalsUnused() error {
	t := a.task
	var bad []string
	for flag, set := range map[string]bool{
		"--json": t.json, "--dry-run": t.dryRun, "--save-plan": t.savePlan != "", "--transcript": t.transcript != "", "--send-secrets": t.sendSecrets,
		"--plan-once": t.batch.planOnce, "--out": t.batch.out != "", "--model": t.model != "", "--base-url": t.baseURL != "",
	} {
		if set {
			bad = append(bad, flag)
		}
	}
	if len(bad) > 0 {
		return usagef("mcp: %s do(es) not apply to agent mcp", strings.Join(bad, ", "))
	}
	return nil
}

// serveMCPHTTP serves srv on addr until ctx ends. Off loopback a token is
// required.
func serveMCPHTTP(ctx context.Context, a *app, srv *mcpserver.Server, addr string) error {
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--http %s: %v", addr, err)
	}
	token := os.Getenv(mcpTokenEnv)
	if !loopback(host) && token == "" {
		return usagef("--http %s is not a loopback address: set %s to the bearer token clients must send", addr, mcpTokenEnv)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler(token))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	auth := "no token"
	if token != "" {
		auth = "bearer token from " + mcpTokenEnv
	}
	fmt.Fprintf(a.stderr, "agent mcp: serving http://%s/mcp (%s)\n", ln.Addr(), auth)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		return nil
	}
}

// loopback reports whether host names only this machine.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
