package engine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/autoshell/agent/audit"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/execctx"
	"github.com/autoshell/agent/redact"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/session"
	"github.com/autoshell/agent/statedir"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// A batch does the same work on every host selected from an inventory,
// Forks hosts at a time. Each host has its own connection, execution
// context (inventory_hostname, group_names and the host's inventory
// variables, then --var) and undo journal; the hosts share one session,
// one audit log and one approver (safety.ScopeBatch: an answer applies to
// every host where the same resolved step comes up). A host that cannot be
// reached, refuses or changed its key, rejects the login or times out is
// failed and the others go on. Once ctx ends no new host starts, the
// running ones are cancelled, and the result still covers every host.

// BatchOptions say how to run a batch.
type BatchOptions struct {
	Hosts []Target
	Forks int // at least 1
	// Vars are --var k=v, over the inventory's variables.
	Vars []string
	// Redact is the session's secret set, shared by the batch's hosts;
	// nil: one per host.
	Redact   *redact.Set
	Policy   safety.Policy
	Approver *safety.Approver
	DryRun   bool
	// Dial has the SSH options the connections share (a prompter that
	// asks one question at a time); each host's warnings become its
	// KindWarning events.
	Dial DialOptions
	// Become is the operator's become settings; each host's inventory
	// variables go over them (ResolveBecome).
	Become Become
	// Session is the session id; "" starts a new one.
	Session string
	// Record receives the session's record (Host's, and each host's end);
	// nil: none. The caller closes it.
	Record *session.Log
	// Resume continues a recorded session: hosts that finished are not
	// run again, the others go on from where they stopped.
	Resume *Resume
	// Emit receives every host's events, host set and secrets scrubbed,
	// each host's in order: a host ends with its done event, then a
	// KindHost event with its result; the batch ends with KindBatch.
	Emit event.Sink
	// RecordNeeds: each step reports what it needed of declared
	// permissions (--save-plan with --plan-once).
	RecordNeeds bool
	// Search is each host's semantic_search ranking (HostOptions.Search).
	Search SearchOptions
}

// HostResult is how the work ended on one host.
type HostResult struct {
	Host string
	event.HostEnd
}

// BatchResult is how a batch ended: each host's result, and the totals of
// the batch event.
type BatchResult struct {
	Session string
	Hosts   []HostResult
	event.Batch
}

// Batch is a batch run: what its hosts share.
type Batch struct {
	o       BatchOptions
	session string
	audit   *audit.Log
	emitMu  sync.Mutex
	start   time.Time
}

// OpenBatch checks the options and opens what the hosts share: the
// session and the audit log. Nothing has run when it fails. The caller
// must Close the batch.
func OpenBatch(o BatchOptions) (*Batch, error) {
	if o.Forks < 1 {
		return nil, configf("--forks must be at least 1")
	}
	if len(o.Hosts) == 0 {
		return nil, configf("no hosts selected")
	}
	if _, err := ParseVars(o.Vars); err != nil {
		return nil, err
	}
	forks, warn := capForks(o.Forks)
	o.Forks = forks
	if o.Dial.SSH.Keys == nil {
		// A key's passphrase is asked once for the batch, not per host.
		o.Dial.SSH.Keys = sshtr.NewKeyCache()
	}
	b := &Batch{o: o, session: o.Session, start: time.Now()}
	if b.session == "" {
		b.session = statedir.NewSessionID()
	}
	if warn != "" {
		b.emit(event.Event{Kind: event.KindWarning, Warning: &event.Warning{Text: warn}})
	}
	if o.Resume != nil {
		if err := b.skipFinished(); err != nil {
			return nil, err
		}
	}
	auditPath, err := statedir.AuditPath()
	if err != nil {
		return nil, err
	}
	if b.audit, err = audit.Open(auditPath); err != nil {
		return nil, err
	}
	return b, nil
}

// Session is the batch's session id.
func (b *Batch) Session() string { return b.session }

// Close releases what the hosts shared.
func (b *Batch) Close() {
	if b.audit != nil {
		b.audit.Close()
		b.audit = nil
	}
}

// emit passes ev on; the hosts' goroutines emit one at a time.
func (b *Batch) emit(ev event.Event) {
	if ev.Kind == event.KindHost && b.o.Record != nil {
		b.o.Record.Write(session.Record{R: session.RecHost, Host: ev.Host, Status: ev.HostEnd.Status, Text: ev.HostEnd.Err}, true)
	}
	if b.o.Emit == nil {
		return
	}
	b.emitMu.Lock()
	defer b.emitMu.Unlock()
	b.o.Emit(ev)
}

// batchHost is one host of a batch: its sink and, once connected, its
// open Host.
type batchHost struct {
	b       *Batch
	t       Target
	redact  Redactor
	secrets []string // the host's secret values (secretValues)
	h       *Host
	err     error         // why it did not connect
	took    time.Duration // dialling

	mu    sync.Mutex
	paths map[string]bool // files changed
	done  bool            // a done event was emitted
}

// hostWork does the batch's work on one connected host and fills in res
// (Status, How, Steps, LLMCalls, Err). It returns the error that broke the
// run, if any.
type hostWork func(ctx context.Context, h *batchHost, res *HostResult) error

// event passes an event of the batch's own about the host on, scrubbed.
func (bh *batchHost) event(ev event.Event) {
	if ev.Session == "" {
		ev.Session = bh.b.session
	}
	bh.pass(bh.redact.Event(ev))
}

// pass is the host's sink for scrubbed events (the Host's): it counts
// what the result needs and passes the event on. The model's usage is
// reported per host.
func (bh *batchHost) pass(ev event.Event) {
	bh.mu.Lock()
	switch ev.Kind {
	case event.KindStep:
		if st := ev.Step; st.Status == "ok" && st.Diff != "" && !st.DryRun {
			bh.paths[st.Path] = true
		}
		for _, p := range ev.Step.Journaled { // a shell command's files undo restores
			bh.paths[p] = true
		}
	case event.KindDone:
		bh.done = true
	}
	bh.mu.Unlock()
	ev.Host = bh.t.Name
	if ev.Kind == event.KindLLM {
		l := *ev.LLM
		l.PerHost = bh.t.Name
		ev.LLM = &l
	}
	bh.b.emit(ev)
}

// warn reports a message for the person about the host.
func (bh *batchHost) warn(msg string) {
	bh.event(event.Event{Kind: event.KindWarning, Warning: &event.Warning{Text: msg}})
}

// note writes a line for the host's log only.
func (bh *batchHost) note(msg string) {
	bh.event(event.Event{Kind: event.KindWarning, Warning: &event.Warning{Text: msg, LogOnly: true}})
}

func (bh *batchHost) changed() int {
	bh.mu.Lock()
	defer bh.mu.Unlock()
	return len(bh.paths)
}

func (bh *batchHost) sawDone() bool {
	bh.mu.Lock()
	defer bh.mu.Unlock()
	return bh.done
}

// each runs work on hosts, Forks at a time, in order of the list; once ctx
// ends, hosts not started are not run. results[i] is hosts[i]'s.
func (b *Batch) each(ctx context.Context, hosts []Target, work hostWork) []HostResult {
	return b.eachFrom(ctx, hosts, nil, work)
}

// eachFrom is each where pre[i], when pre is not nil and pre[i] is not, is
// hosts[i] already dialled.
func (b *Batch) eachFrom(ctx context.Context, hosts []Target, pre []*batchHost, work hostWork) []HostResult {
	results := make([]HostResult, len(hosts))
	sem := make(chan struct{}, b.o.Forks)
	var wg sync.WaitGroup
	for i, t := range hosts {
		var c *batchHost
		if pre != nil {
			c = pre[i]
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			results[i] = b.drop(t, c, "interrupted")
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if c == nil {
				c = b.dial(ctx, t)
			}
			results[i] = b.runOn(ctx, c, work)
		}()
	}
	wg.Wait()
	return results
}

// notRun records a host that was not started.
func (b *Batch) notRun(t Target, why string) HostResult {
	res := HostResult{Host: t.Name, HostEnd: event.HostEnd{Status: event.HostNotRun, Err: why}}
	b.emit(event.Event{Kind: event.KindDone, Host: t.Name, Session: b.session,
		Done: &event.Done{Status: "failed", Summary: "not run: " + why}})
	b.emit(event.Event{Kind: event.KindHost, Host: t.Name, Session: b.session, HostEnd: &res.HostEnd})
	return res
}

// drop records t as not run, closing its connection c if it has one.
func (b *Batch) drop(t Target, c *batchHost, why string) HostResult {
	if c != nil && c.h != nil {
		c.h.Close()
	}
	return b.notRun(t, why)
}

// dial connects to t and prepares its execution context.
func (b *Batch) dial(ctx context.Context, t Target) *batchHost {
	start := time.Now()
	set := b.o.Redact
	if set == nil {
		set = redact.NewSet()
	}
	bh := &batchHost{b: b, t: t, redact: Redactor{Set: set}, secrets: b.secretValues(t), paths: map[string]bool{}}
	addSecrets(set, bh.secrets, nil)
	bh.h, bh.err = b.connect(ctx, bh)
	bh.took = time.Since(start)
	return bh
}

// runOn does work on a dialled host and records how it ended: a host that
// did not connect is failed (not run once ctx ended) and work is not
// called.
func (b *Batch) runOn(ctx context.Context, c *batchHost, work hostWork) (res HostResult) {
	start := time.Now().Add(-c.took)
	t := c.t
	res = HostResult{Host: t.Name, HostEnd: event.HostEnd{Status: event.HostFailed}}
	defer func() {
		res.Err = c.redact.String(res.Err)
		res.DurationMS = time.Since(start).Milliseconds()
		res.Changed = c.changed()
		if !c.sawDone() {
			status := "failed"
			if res.Status == event.HostOK {
				status = "success"
			}
			c.event(event.Event{Kind: event.KindDone, Session: b.session,
				Done: &event.Done{Status: status, Summary: res.Err, Steps: res.Steps}})
		}
		end := res.HostEnd
		c.event(event.Event{Kind: event.KindHost, Session: b.session, HostEnd: &end})
	}()
	if c.err != nil {
		res.Err = c.err.Error()
		c.note("agent: " + res.Err)
		if ctx.Err() != nil {
			res.Status, res.Err = event.HostNotRun, "interrupted"
		}
		return res
	}
	defer c.h.Close()
	if err := work(ctx, c, &res); err != nil {
		res.Status = event.HostFailed
		if res.Err == "" {
			res.Err = err.Error()
		}
	}
	if ctx.Err() != nil && res.Status != event.HostOK {
		res.Status, res.Err = event.HostFailed, "interrupted"
		if res.Steps > 0 {
			res.Err = fmt.Sprintf("interrupted at step %d", res.Steps)
		}
	}
	return res
}

// connect dials the host and opens it for steps, with its variables set.
func (b *Batch) connect(ctx context.Context, bh *batchHost) (*Host, error) {
	vars, err := hostVars(bh.t, b.o.Vars, bh.warn)
	if err != nil {
		return nil, err
	}
	d := b.o.Dial
	d.SSH.Warn = bh.warn
	hb, err := ResolveBecome(bh.t, b.o.Become)
	if err != nil {
		return nil, err
	}
	tr, err := b.dialRetrying(ctx, bh, d)
	if err != nil {
		return nil, err
	}
	// The Host scrubs its events with the host's secrets; the batch host
	// counts them and passes them on.
	h, err := OpenOn(tr, bh.t.Name, HostOptions{
		Policy: b.o.Policy, Approver: b.o.Approver, Session: b.session, Audit: b.audit,
		Emit: bh.pass, Secrets: bh.secrets, Redact: bh.redact.Set, DryRun: b.o.DryRun, Vars: vars, Become: hb, Record: b.o.Record, RecordNeeds: b.o.RecordNeeds,
		Search: b.o.Search,
	})
	if err != nil {
		return nil, err
	}
	if err := h.checkBecome(ctx); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// finish ends the batch: its result, and the KindBatch event.
func (b *Batch) finish(results []HostResult) BatchResult {
	r := BatchResult{Session: b.session, Hosts: results}
	r.Batch = event.Batch{Hosts: len(results), DurationMS: time.Since(b.start).Milliseconds()}
	for _, h := range results {
		r.LLMCalls += h.LLMCalls
		switch h.Status {
		case event.HostOK:
			r.OK++
		case event.HostNotRun:
			r.NotRun++
		default:
			r.Failed++
		}
	}
	ev := r.Batch
	b.emit(event.Event{Kind: event.KindBatch, Session: b.session, Batch: &ev})
	return r
}

// ParseVars reads --var k=v into a new execution context; a malformed one
// is a ConfigError.
func ParseVars(kvs []string) (*execctx.Context, error) {
	vars := execctx.New()
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, configf("--var %q: want name=value", kv)
		}
		if err := vars.Set(k, v); err != nil {
			return nil, configf("--var %q: %v", kv, err)
		}
	}
	return vars, nil
}

// hostVars is a host's execution context before the work starts:
// inventory_hostname, group_names, the host's inventory variables (names
// that are not valid variable names are left out with a warning), then
// --var, which wins.
func hostVars(t Target, kvs []string, warn func(string)) (*execctx.Context, error) {
	vars, err := ParseVars(kvs)
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
	names := make([]string, 0, len(t.Vars))
	for k := range t.Vars {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		set(k, t.Vars[k])
	}
	groups := make([]any, len(t.Groups))
	for i, g := range t.Groups {
		groups[i] = g
	}
	set("inventory_hostname", t.Name)
	set("group_names", groups)
	markSecretVars(vars, t.Secrets)
	return vars, nil
}

// markSecretVars keeps secrets among vars from the model: Ansible's
// connection and privilege passwords (HiddenVar) are left out of what it
// is shown, other secret-named variables (redact.SecretKey) show as
// [REDACTED]. Both still work in templates.
func markSecretVars(vars *execctx.Context, vaulted []string) {
	for k := range vars.Vars() {
		switch {
		case HiddenVar(k) || slices.Contains(vaulted, k):
			vars.SetExposure(k, execctx.ExposeNone)
		case redact.SecretKey(k):
			vars.SetExposure(k, execctx.ExposeName)
		}
	}
}

// HiddenVar reports whether an inventory variable is a connection or
// privilege secret the model has no use for: ansible_password,
// ansible_ssh_pass, ansible_become_pass(word), any *_pass or *_password,
// and Ansible Vault's vault_* variables.
func HiddenVar(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, "_pass") || strings.HasSuffix(n, "_password") || strings.HasPrefix(n, "vault_") ||
		n == "ansible_password" || n == "ansible_ssh_pass" || n == "ansible_become_pass"
}

// SecretValues are the string values of vars' secret-named variables
// (HiddenVar or redact.SecretKey), minSecretValue bytes or longer, longest
// first, for output that must not show them.
func SecretValues(vars map[string]any) []string {
	var out []string
	for k, v := range vars {
		var s string
		switch v := v.(type) {
		case string:
			s = v
		case int, int64, float64: // password=12345678 in INI is a number
			s = fmt.Sprint(v)
		}
		if len(s) >= minSecretValue && (HiddenVar(k) || redact.SecretKey(k)) {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// secretValues are the values of t's secret-named variables, --var
// included.
func (b *Batch) secretValues(t Target) []string {
	vars := make(map[string]any, len(t.Vars)+len(b.o.Vars))
	for k, v := range t.Vars {
		vars[k] = v
	}
	for _, kv := range b.o.Vars {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	out := SecretValues(vars)
	for _, k := range t.Secrets { // vaulted values, whatever their names
		out = append(out, leafStrings(t.Vars[k])...)
	}
	// The become password: the operator's (-K), the inventory's rendered.
	for _, pw := range []string{b.o.Become.Password, t.BecomeVars["password"].Value} {
		if len(pw) >= minSecretValue {
			out = append(out, pw)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// leafStrings are the strings (and numbers) inside v at least
// minSecretValue bytes long.
func leafStrings(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			out = append(out, leafStrings(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, leafStrings(e)...)
		}
	case nil, bool:
	default:
		if s := fmt.Sprint(x); len(s) >= minSecretValue {
			out = append(out, s)
		}
	}
	return out
}

// minSecretValue is the shortest secret value replaced in output (shorter
// ones would hit ordinary text).
const minSecretValue = 4
