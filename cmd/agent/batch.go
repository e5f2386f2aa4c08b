package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	execctx "github.com/autoshell/agent/context"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/tools"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// A batch run does the same work on every host selected from an
// inventory, --forks hosts at a time. Each host has its own SSH
// connection, execution context (inventory_hostname, group_names and the
// host's inventory variables, then --var) and undo journal; the hosts
// share one session, one audit log and one approver (an answer applies to
// every host where the same resolved step comes up). A host that cannot
// be reached, refuses or changed its key, rejects the login or times out
// is failed and the others go on. Ctrl-C starts no new host, cancels the
// running ones and still prints the summary.

// Host statuses in the summary.
const (
	hostOK     = "ok"
	hostFailed = "failed"
	hostNotRun = "not run"
)

// hostResult is how the work ended on one host.
type hostResult struct {
	Host    string
	Status  string // hostOK, hostFailed or hostNotRun
	How     string // plan, adaptive, react, planned, replayed, fallback; "" when not connected
	Steps   int
	Changed int // files changed
	// LLMCalls are the model's calls made for this host.
	LLMCalls int
	Duration time.Duration
	Err      string
}

// batch is one batch run.
type batch struct {
	a        *app
	o        batchOptions
	flags    stepFlags
	vars     []string // --var k=v, over the inventory's variables
	hosts    []inventoryHost
	policy   safety.Policy
	approver *safety.Approver
	audit    *safety.Audit
	session  string
	out      *batchOutput
	sshOpts  sshtr.Options
	closers  []func()
}

// openBatch checks the batch flags, selects the hosts and opens what the
// hosts share. Nothing has run when it fails (usage errors exit 2).
func (a *app) openBatch(o batchOptions, f stepFlags, vars []string, policy safety.Policy) (_ *batch, err error) {
	if a.host.sshHost != "" {
		return nil, usagef("-i and --ssh-host: choose the inventory or one host")
	}
	if o.forks < 1 {
		return nil, usagef("--forks must be at least 1")
	}
	if _, err := parseVars(vars); err != nil {
		return nil, err
	}
	hosts, err := a.selectHosts(o.inventory, o.limit)
	if err != nil {
		return nil, err
	}
	if len(hosts) == 0 {
		what := "the inventory"
		if o.limit != "" {
			what = fmt.Sprintf("--limit %q", o.limit)
		}
		return nil, usagef("-i %s: no hosts selected by %s", o.inventory, what)
	}
	b := &batch{a: a, o: o, flags: f, vars: vars, hosts: hosts, policy: policy, session: safety.NewSessionID()}
	defer func() {
		if err != nil {
			b.Close()
		}
	}()
	mode, prompter, closeTTY, err := resolveApproval(f.approve)
	if err != nil {
		return nil, err
	}
	b.closers = append(b.closers, closeTTY)
	if b.out, err = newBatchOutput(a, o.out, f.json, len(hosts)); err != nil {
		return nil, err
	}
	b.closers = append(b.closers, b.out.Close)
	if prompter != nil {
		users := make(map[string]string, len(hosts))
		for _, h := range hosts {
			if h.SSH != nil {
				users[h.Name] = h.SSH.User
			}
		}
		prompter = &batchPrompter{next: prompter, out: b.out, users: users}
	}
	b.approver = safety.NewApprover(mode, prompter)
	auditPath, err := safety.AuditPath()
	if err != nil {
		return nil, err
	}
	if b.audit, err = safety.OpenAudit(auditPath); err != nil {
		return nil, err
	}
	b.closers = append(b.closers, func() { b.audit.Close() })
	var hk sshtr.Prompter
	if p := newTerminalPrompter(); p != nil {
		hk = &lockedPrompter{next: p, out: b.out}
	}
	b.sshOpts = sshtr.Options{Prompter: hk}
	return b, nil
}

// Close releases what the hosts shared, last opened first.
func (b *batch) Close() {
	for i := len(b.closers) - 1; i >= 0; i-- {
		b.closers[i]()
	}
}

// hostRun is one host's open connection and execution context, for a
// hostWork.
type hostRun struct {
	host  inventoryHost
	steps *stepRun
	exec  *planner.Executor
	sink  *hostSink
	// vars are the host's variables before any step (hostVars).
	vars map[string]any
}

// hostWork does the batch's work on one connected host and fills in
// res (Status, How, Steps, LLMCalls, Err). It returns the error that broke
// the run, if any.
type hostWork func(ctx context.Context, h *hostRun, res *hostResult) error

// each runs work on hosts, forks at a time, in order of the list; once
// ctx ends, hosts not started are not run. results[i] is hosts[i]'s.
func (b *batch) each(ctx context.Context, hosts []inventoryHost, work hostWork) []hostResult {
	return b.eachFrom(ctx, hosts, nil, work)
}

// eachFrom is each where pre[i], when pre is not nil and pre[i] is not,
// is hosts[i] already connected.
func (b *batch) eachFrom(ctx context.Context, hosts []inventoryHost, pre []*hostConn, work hostWork) []hostResult {
	results := make([]hostResult, len(hosts))
	sem := make(chan struct{}, b.o.forks)
	var wg sync.WaitGroup
	for i, h := range hosts {
		var c *hostConn
		if pre != nil {
			c = pre[i]
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			results[i] = b.drop(h, c, "interrupted")
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if c == nil {
				c = b.dial(ctx, h)
			}
			results[i] = b.runOn(ctx, c, work)
		}()
	}
	wg.Wait()
	return results
}

// notRun records a host that was not started.
func (b *batch) notRun(h inventoryHost, why string) hostResult {
	res := hostResult{Host: h.Name, Status: hostNotRun, Err: why}
	b.out.hostDone(res, &planner.DoneEvent{Event: planner.EventDone, Host: h.Name, Session: b.session,
		Status: "failed", Summary: "not run: " + why})
	return res
}

// drop records h as not run, closing its connection c if it has one.
func (b *batch) drop(h inventoryHost, c *hostConn, why string) hostResult {
	if c != nil {
		if c.hr != nil {
			c.hr.steps.Close()
		}
		c.sink.Close()
	}
	return b.notRun(h, why)
}

// hostConn is a host dialled for work: its sink, and its run or the error
// that kept it from connecting.
type hostConn struct {
	h    inventoryHost
	sink *hostSink
	hr   *hostRun
	err  error
	took time.Duration // dialling
}

// dial connects to h and prepares its execution context.
func (b *batch) dial(ctx context.Context, h inventoryHost) *hostConn {
	start := time.Now()
	c := &hostConn{h: h, sink: b.out.newHostSink(h.Name, b.secretValues(h))}
	c.hr, c.err = b.connect(ctx, h, c.sink)
	c.took = time.Since(start)
	return c
}

// runHost connects to h, prepares its execution context and does work.
func (b *batch) runHost(ctx context.Context, h inventoryHost, work hostWork) hostResult {
	return b.runOn(ctx, b.dial(ctx, h), work)
}

// runOn does work on a dialled host and records how it ended: a host that
// did not connect is failed (not run after Ctrl-C) and work is not called.
func (b *batch) runOn(ctx context.Context, c *hostConn, work hostWork) (res hostResult) {
	start := time.Now().Add(-c.took)
	h, sink := c.h, c.sink
	res = hostResult{Host: h.Name, Status: hostFailed}
	defer func() {
		res.Err = sink.redact.String(res.Err)
		res.Duration = time.Since(start)
		res.Changed = sink.changed()
		var done *planner.DoneEvent
		if !sink.sawDone() {
			status := "failed"
			if res.Status == hostOK {
				status = "success"
			}
			done = &planner.DoneEvent{Event: planner.EventDone, Host: h.Name, Session: b.session,
				Status: status, Summary: res.Err, Steps: res.Steps}
		}
		sink.Close()
		b.out.hostDone(res, done)
	}()
	if c.err != nil {
		res.Err = c.err.Error()
		sink.logNote("agent: " + res.Err)
		if ctx.Err() != nil {
			res.Status, res.Err = hostNotRun, "interrupted"
		}
		return res
	}
	hr := c.hr
	defer hr.steps.Close()
	if err := work(ctx, hr, &res); err != nil {
		res.Status = hostFailed
		if res.Err == "" {
			res.Err = err.Error()
		}
	}
	if ctx.Err() != nil && res.Status != hostOK {
		res.Status, res.Err = hostFailed, "interrupted"
		if res.Steps > 0 {
			res.Err = fmt.Sprintf("interrupted at step %d", res.Steps)
		}
	}
	return res
}

// connect dials h and opens its steps, with the host's variables set.
func (b *batch) connect(ctx context.Context, h inventoryHost, sink *hostSink) (*hostRun, error) {
	opts := b.sshOpts
	opts.Warn = sink.warn
	tr, err := h.dial(ctx, opts) // local for ansible_connection=local
	if err != nil {
		return nil, err
	}
	steps, err := openStepsOn(stepTarget{
		tr: tr, host: h.Name, session: b.session, approver: b.approver, render: sink, audit: b.audit,
	}, b.policy, b.flags.dryRun)
	if err != nil {
		return nil, err
	}
	vars, err := hostVars(h, b.vars, sink.warn)
	if err != nil {
		steps.Close()
		return nil, err
	}
	cfg := steps.exec
	cfg.Vars = vars
	return &hostRun{host: h, steps: steps, exec: planner.NewExecutor(cfg), sink: sink, vars: vars.Vars()}, nil
}

// hostVars is a host's execution context before the work starts:
// inventory_hostname, group_names, the host's inventory variables (names
// that are not valid variable names are left out with a warning), then
// --var, which wins.
func hostVars(h inventoryHost, kvs []string, warn func(string)) (*execctx.Context, error) {
	vars, err := parseVars(kvs)
	if err != nil {
		return nil, err
	}
	set := func(k string, v any) {
		if _, ok := vars.Get(k); ok {
			return // --var wins
		}
		if err := vars.Set(k, v); err != nil {
			warn(fmt.Sprintf("inventory variable %s left out: %v", k, err))
		}
	}
	names := make([]string, 0, len(h.Vars))
	for k := range h.Vars {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		set(k, h.Vars[k])
	}
	groups := make([]any, len(h.Groups))
	for i, g := range h.Groups {
		groups[i] = g
	}
	set("inventory_hostname", h.Name)
	set("group_names", groups)
	markSecretVars(vars)
	return vars, nil
}

// markSecretVars keeps secrets among vars from the model: Ansible's
// connection and privilege passwords (hiddenVar) are left out of what it
// is shown, other secret-named variables (safety.SecretKey) show as
// [REDACTED]. Both still work in templates.
func markSecretVars(vars *execctx.Context) {
	for k := range vars.Vars() {
		switch {
		case hiddenVar(k):
			vars.SetExposure(k, execctx.ExposeNone)
		case safety.SecretKey(k):
			vars.SetExposure(k, execctx.ExposeName)
		}
	}
}

// hiddenVar reports whether an inventory variable is a connection or
// privilege secret the model has no use for: ansible_password,
// ansible_ssh_pass, ansible_become_pass(word), any *_pass or *_password,
// and Ansible Vault's vault_* variables.
func hiddenVar(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, "_pass") || strings.HasSuffix(n, "_password") || strings.HasPrefix(n, "vault_") ||
		n == "ansible_password" || n == "ansible_ssh_pass" || n == "ansible_become_pass"
}

// secretValues are the string values of vars' secret-named variables
// (hiddenVar or safety.SecretKey), minSecretValue bytes or longer, for
// output that must not show them.
func secretValues(vars map[string]any) []string {
	var out []string
	for k, v := range vars {
		var s string
		switch v := v.(type) {
		case string:
			s = v
		case int, int64, float64: // password=12345678 in INI is a number
			s = fmt.Sprint(v)
		}
		if len(s) >= minSecretValue && (hiddenVar(k) || safety.SecretKey(k)) {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// secretValues are the values of h's secret-named variables, --var
// included.
func (b *batch) secretValues(h inventoryHost) []string {
	vars := make(map[string]any, len(h.Vars)+len(b.vars))
	for k, v := range h.Vars {
		vars[k] = v
	}
	for _, kv := range b.vars {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	return secretValues(vars)
}

// minSecretValue is the shortest secret value replaced in output (shorter
// ones would hit ordinary text).
const minSecretValue = 4

// undoCommand is the command that undoes the batch's session on the hosts
// it changed: the inventory, and the SSH flags the run was given.
func (b *batch) undoCommand() string {
	args := []string{"agent", "undo", b.session}
	h := b.a.host
	if h.configFile != "" {
		args = append(args, "-F", tools.Quote(h.configFile))
	}
	if h.user != "" {
		args = append(args, "-l", tools.Quote(h.user))
	}
	if h.port != 0 {
		args = append(args, "-p", fmt.Sprint(h.port))
	}
	for _, id := range h.identities {
		args = append(args, "--identity", tools.Quote(id))
	}
	return strings.Join(append(args, "-i", tools.Quote(b.o.inventory)), " ")
}

// finish prints the summary and maps the results to agent's exit
// status: 0 when every host succeeded, 3 when some failed (or were not
// run), 130 after Ctrl-C.
func (b *batch) finish(ctx context.Context, results []hostResult, llmCalls int) error {
	b.out.summary(results, llmCalls, b.session, b.undoCommand())
	if ctx.Err() != nil {
		fmt.Fprintln(b.a.stderr, "agent: interrupted")
		return exitError{code: exitInterrupted}
	}
	for _, r := range results {
		if r.Status != hostOK {
			return exitError{code: exitSomeHosts}
		}
	}
	return nil
}
