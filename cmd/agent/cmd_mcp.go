package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/autoshell/agent/mcpserver"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/statedir"
)

// mcpOptions are `agent mcp`'s flags.
type mcpOptions struct {
	host    hostOptions
	batch   batchOptions
	approve string
	http    string
	idle    time.Duration
	// --http's access: the token's file, no token on loopback, more
	// allowed browser origins, the idle HTTP session's end.
	tokenFile      string
	noAuth         bool
	origins        []string
	sessionTimeout time.Duration
	limits         limitOptions // --allow-write, --read-only: every step of every call
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
	fs.StringVar(&o.http, "http", "", "serve streamable HTTP on `ADDR` (host:port, a bare :port is loopback; or unix:PATH, a 0600 socket only your uid may use) at /mcp instead of stdio")
	fs.StringVar(&o.tokenFile, "token-file", "", "the bearer token --http clients must send is in `FILE` (default: "+mcpTokenEnv+", else a random one written to the state directory and shown once)")
	fs.BoolVar(&o.noAuth, "insecure-no-auth", false, "serve --http on loopback without a token: any local user can then run steps as you")
	fs.StringArrayVar(&o.origins, "allow-origin", nil, "also accept browser requests from `ORIGIN` (scheme://host:port; repeatable); loopback origins of the server's port always are")
	fs.DurationVar(&o.sessionTimeout, "session-timeout", mcpserver.DefaultSessionTimeout, "end an --http session that made no request for `DURATION`, cancelling its calls")
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
		for _, f := range []string{"token-file", "insecure-no-auth", "allow-origin", "session-timeout"} {
			if fs.Changed(f) {
				return usagef("mcp: --%s applies to --http only", f)
			}
		}
		err := srv.ServeStdio(ctx)
		if ctx.Err() != nil || errors.Is(err, io.EOF) {
			return nil // the client left, or agent was stopped
		}
		return err
	}
	return serveMCPHTTP(ctx, a, srv, o)
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

// serveMCPHTTP serves srv on o.http until ctx ends: on a unix socket
// only this uid may connect to; on TCP with a bearer token (the
// operator's, or a random one written 0600 to the state directory and
// shown once), which only --insecure-no-auth on loopback drops.
func serveMCPHTTP(ctx context.Context, a *app, srv *mcpserver.Server, o mcpOptions) error {
	addr := o.http
	hopts := mcpserver.HTTPOptions{NoAuth: o.noAuth, Origins: o.origins, SessionTimeout: o.sessionTimeout}
	if o.sessionTimeout <= 0 {
		return usagef("--session-timeout must be positive")
	}
	var ln net.Listener
	var err error
	auth := ""
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		if o.tokenFile != "" || o.noAuth {
			return usagef("--http unix:%s: the socket's peer uid is checked; --token-file and --insecure-no-auth do not apply", path)
		}
		if path == "" || !filepath.IsAbs(path) {
			return usagef("--http unix:PATH needs an absolute PATH")
		}
		if ln, err = mcpserver.ListenUnix(path); err != nil {
			return fmt.Errorf("mcp: %w", err)
		}
		defer os.Remove(path)
		hopts.NoAuth, auth = true, "unix socket, your uid only"
	} else {
		if strings.HasPrefix(addr, ":") {
			addr = "127.0.0.1" + addr
		}
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return usagef("--http %s: %v", addr, err)
		}
		if o.noAuth && !loopback(host) {
			return usagef("--insecure-no-auth: %s is not a loopback address; off loopback a token is always required", addr)
		}
		if o.noAuth && (o.tokenFile != "" || os.Getenv(mcpTokenEnv) != "") {
			return usagef("--insecure-no-auth and a token (--token-file, %s) contradict each other", mcpTokenEnv)
		}
		if !o.noAuth {
			if hopts.Token, auth, err = mcpToken(o.tokenFile); err != nil {
				return err
			}
		}
		if ln, err = net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("mcp: %w", err)
		}
		if o.noAuth {
			auth = "NO AUTHENTICATION: every local user can run steps as you"
			fmt.Fprintln(a.stderr, "agent mcp: warning: --insecure-no-auth: any process on this machine, of any user, can call the tools as you")
		}
		if hopts.Token != "" && auth == "" { // generated: written for the operator
			file, err := writeMCPToken(ln.Addr(), hopts.Token)
			if err != nil {
				ln.Close()
				return err
			}
			defer os.Remove(file)
			fmt.Fprintf(a.stderr, "agent mcp: bearer token (shown once; also in %s): %s\n", file, hopts.Token)
			auth = "bearer token in " + file
		}
	}
	h, err := srv.Handler(hopts)
	if err != nil {
		ln.Close()
		return usagef("--allow-origin: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	where := "http://" + ln.Addr().String() + "/mcp"
	if ln.Addr().Network() == "unix" {
		where = "http+unix://" + strings.TrimPrefix(addr, "unix:") + " at /mcp"
	}
	fmt.Fprintf(a.stderr, "agent mcp: serving %s (%s)\n", where, auth)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		// Running calls are cancelled (their commands killed) by
		// srv.Close; the HTTP server is given a moment to answer them.
		srv.Close()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if hs.Shutdown(sctx) != nil {
			hs.Close() // the clients' open event streams
		}
		return nil
	}
}

// mcpToken is the operator's bearer token: from file (which others must
// not be able to read), else $AGENT_MCP_TOKEN; neither gives a random one
// and an empty source.
func mcpToken(file string) (token, source string, err error) {
	if file != "" {
		fi, err := os.Stat(file)
		if err != nil {
			return "", "", usagef("--token-file: %v", err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			return "", "", usagef("--token-file %s: mode %v lets others read it; chmod 600 it", file, fi.Mode().Perm())
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return "", "", usagef("--token-file: %v", err)
		}
		token = strings.TrimSpace(string(b))
		if len(token) < 16 || strings.ContainsAny(token, " \t\r\n") {
			return "", "", usagef("--token-file %s: the token must be one word of at least 16 characters", file)
		}
		return token, "bearer token from " + file, nil
	}
	if t := os.Getenv(mcpTokenEnv); t != "" {
		if len(t) < 16 || strings.ContainsAny(t, " \t\r\n") {
			return "", "", usagef("%s must be one word of at least 16 characters", mcpTokenEnv)
		}
		return t, "bearer token from " + mcpTokenEnv, nil
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("mcp: token: %w", err)
	}
	return hex.EncodeToString(b), "", nil
}

// writeMCPToken writes a generated token 0600 to
// STATE/mcp/http-PORT.token (removed when the server ends).
func writeMCPToken(addr net.Addr, token string) (string, error) {
	dir, err := statedir.Dir()
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "mcp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("mcp: token file: %w", err)
	}
	_, port, _ := net.SplitHostPort(addr.String())
	file := filepath.Join(dir, "http-"+port+".token")
	_ = os.Remove(file)
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("mcp: token file: %w", err)
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("mcp: token file: %w", err)
	}
	return file, f.Close()
}

// loopback reports whether host names only this machine.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
