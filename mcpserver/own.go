package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/journal"
	"github.com/autoshell/agent/planner"
	"github.com/autoshell/agent/redact"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/statedir"
	"github.com/autoshell/agent/tools"
)

// ListHostsParams are list_hosts' parameters.
type ListHostsParams struct {
	Limit string `json:"limit,omitempty" description:"Ansible host pattern over the server's selection (web:&prod, web:!db, ~regex); default all."`
}

// RunPlanParams are run_plan's parameters.
type RunPlanParams struct {
	Plan  string `json:"plan" description:"The plan, in agent's plan file YAML (phases of steps: tool, parameters, save_output_as, condition)."`
	Hosts string `json:"hosts" description:"Where: an Ansible host pattern over the server's inventory, or with no inventory comma-separated SSH destinations."`
	Forks int    `json:"forks,omitempty" description:"Hosts at a time; default the server's --forks."`
}

// UndoParams are undo's parameters.
type UndoParams struct {
	Host    string `json:"host" description:"The host whose changes to put back."`
	Session string `json:"session,omitempty" description:"The session (a step result's session, one of this client's); default this client's current session on the host."`
	Force   bool   `json:"force,omitempty" description:"Also restore files changed by others since."`
}

// Tool names of the server's own tools.
const (
	ListHostsName = "list_hosts"
	RunPlanName   = "run_plan"
	UndoName      = "undo"
)

func (s *Server) addOwnTools() {
	s.mcp.AddTool(&mcp.Tool{Name: ListHostsName, InputSchema: ownSchema(tools.SchemaOf[ListHostsParams]()),
		Description: "List the inventory's hosts (the server's -i and --limit, narrowed by limit) with their groups and effective SSH settings."},
		s.listHosts)
	s.mcp.AddTool(&mcp.Tool{Name: RunPlanName, InputSchema: ownSchema(tools.SchemaOf[RunPlanParams]()),
		Description: "Run a plan on every host the pattern selects, forks at a time (agent's batch engine): one result per host. The whole plan is checked before anything runs; every step goes through the safety checks."},
		s.runPlan)
	s.mcp.AddTool(&mcp.Tool{Name: UndoName, InputSchema: ownSchema(tools.SchemaOf[UndoParams]()),
		Description: "Put back the files a session changed on a host: the file tools' changes and the files and directory trees medium-risk shell commands wrote, removed or created (a file changed again since is refused unless force). What an approved high-risk command did beyond the files it named is not journaled."},
		s.undo)
}

// hostEntry is one host of list_hosts, as `agent inventory list --json`
// prints it, with secret variables left out or masked: the caller is a
// model.
type hostEntry struct {
	Name       string         `json:"name"`
	Groups     []string       `json:"groups"`
	Host       string         `json:"host"`
	Port       int            `json:"port"`
	User       string         `json:"user"`
	Connection string         `json:"connection,omitempty"`
	Vars       map[string]any `json:"vars"`
}

func (s *Server) listHosts(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var p ListHostsParams
	if err := decodeOwn(req.Params.Arguments, s.o.MaxArgBytes, &p); err != nil {
		return toolError("%s: %v", ListHostsName, err), nil
	}
	if len(s.o.Inventory.Sources) == 0 {
		return toolError("%s: the server has no inventory (start it with agent mcp -i FILE); hosts are ~/.ssh/config aliases or user@host[:port]", ListHostsName), nil
	}
	hosts, err := s.selectHosts(p.Limit)
	if err != nil {
		return toolError("%s: %v", ListHostsName, err), nil
	}
	out := make([]hostEntry, 0, len(hosts))
	for _, h := range hosts {
		e := hostEntry{Name: h.Name, Groups: append([]string{}, h.Groups...), Vars: map[string]any{}}
		if h.SSH != nil {
			e.Host, e.Port, e.User = h.SSH.HostName, h.SSH.Port, h.SSH.User
		}
		if k, _ := engine.Connection(h.Connection); k != engine.ConnSSH {
			e.Connection = cmp.Or(h.Connection, k)
		}
		for k, v := range h.Vars {
			switch {
			case engine.HiddenVar(k):
			case redact.SecretKey(k):
				e.Vars[k] = redact.Redacted
			default:
				e.Vars[k] = v
			}
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b hostEntry) int { return strings.Compare(a.Name, b.Name) })
	return jsonResult(map[string]any{"hosts": out}, false), nil
}

// selectHosts is the server's selection narrowed by limit: Ansible's
// patterns, both applied.
func (s *Server) selectHosts(limit string) ([]engine.Target, error) {
	hosts, err := engine.InventoryHosts(s.o.Inventory, s.o.Limit, s.o.SSH)
	if err != nil || strings.TrimSpace(limit) == "" {
		return hosts, err
	}
	narrow, err := engine.InventoryHosts(s.o.Inventory, limit, s.o.SSH)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, t := range narrow {
		keep[t.Name] = true
	}
	return slices.DeleteFunc(hosts, func(t engine.Target) bool { return !keep[t.Name] }), nil
}

// planHost is run_plan's result on one host.
type planHost struct {
	Host string `json:"host"`
	event.HostEnd
	Steps []planStep `json:"step_results"`
}

// planStep is one step of a host's run.
type planStep struct {
	Step     int    `json:"step"`
	Tool     string `json:"tool"`
	Status   string `json:"status"`
	Risk     string `json:"risk,omitempty"`
	Decision string `json:"decision,omitempty"`
	Output   string `json:"output"`
}

// maxStepOutput bounds each step's output in run_plan's result.
const maxStepOutput = 4 << 10

func (s *Server) runPlan(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var p RunPlanParams
	if err := decodeOwn(req.Params.Arguments, s.o.MaxArgBytes, &p); err != nil {
		return toolError("%s: %v", RunPlanName, err), nil
	}
	if strings.TrimSpace(p.Hosts) == "" {
		return toolError("%s: missing required parameter \"hosts\"", RunPlanName), nil
	}
	if p.Forks < 0 {
		return toolError("%s: forks must be at least 1", RunPlanName), nil
	}
	plan, err := planner.Parse(strings.NewReader(p.Plan), "plan")
	if err != nil {
		return toolError("%s: %v", RunPlanName, err), nil
	}
	hosts, err := s.planHosts(p.Hosts)
	if err != nil {
		return toolError("%s: %v", RunPlanName, err), nil
	}
	if err := s.planBecome(plan); err != nil {
		return toolError("%s: %v", RunPlanName, err), nil
	}
	var mu sync.Mutex
	steps := map[string][]planStep{}
	b, err := engine.OpenBatch(engine.BatchOptions{
		Hosts: hosts, Forks: cmp.Or(p.Forks, s.o.Forks), Policy: s.o.Policy, Become: s.o.Become, Redact: s.secrets,
		Approver: safety.NewApprover(s.o.Approve, elicitPrompter{}, safety.WithScope(safety.ScopeBatch), safety.WithLogins(logins(hosts))),
		Dial:     engine.DialOptions{},
		Emit: func(ev event.Event) {
			if ev.Kind != event.KindStep {
				return
			}
			st := ev.Step
			out := st.Output
			if len(out) > maxStepOutput {
				out = out[:maxStepOutput] + "\n… [output truncated]"
			}
			mu.Lock()
			steps[ev.Host] = append(steps[ev.Host], planStep{Step: st.Step, Tool: st.Tool, Status: st.Status, Risk: st.Risk, Decision: st.Decision, Output: out})
			mu.Unlock()
		},
	})
	if err != nil {
		return toolError("%s: %v", RunPlanName, err), nil
	}
	defer b.Close()
	if err := planner.Validate(plan, s.reg, b.PresetVars()); err != nil {
		return toolError("%s: %v", RunPlanName, err), nil
	}
	if err := executor.CheckPlanPermissions(plan, s.reg, s.o.Policy, nil); err != nil {
		return toolError("%s: %v", RunPlanName, err), nil
	}
	ctx, end := s.begin(ctx, req)
	defer end()
	stop, _ := s.progress(ctx, req, fmt.Sprintf("run_plan on %d hosts", len(hosts)))
	res := b.RunPlan(withCaller(ctx, req.Session), plan)
	stop()
	out := struct {
		Session string      `json:"session"`
		Summary event.Batch `json:"summary"`
		Hosts   []planHost  `json:"hosts"`
	}{Session: res.Session, Summary: res.Batch}
	mu.Lock()
	for _, h := range res.Hosts {
		out.Hosts = append(out.Hosts, planHost{Host: h.Host, HostEnd: h.HostEnd, Steps: append([]planStep{}, steps[h.Host]...)})
	}
	mu.Unlock()
	return jsonResult(out, res.Failed > 0 || res.NotRun > 0), nil
}

// planHosts are run_plan's hosts: the inventory's selection by pattern
// (within the server's --limit), or SSH destinations.
func (s *Server) planHosts(pattern string) ([]engine.Target, error) {
	if len(s.o.Inventory.Sources) > 0 {
		hosts, err := s.selectHosts(pattern)
		if err == nil && len(hosts) == 0 {
			err = fmt.Errorf("no inventory hosts match %q", pattern)
		}
		return hosts, err
	}
	var out []engine.Target
	for _, d := range strings.Split(pattern, ",") {
		if d = strings.TrimSpace(d); d == "" {
			continue
		}
		t, err := engine.HostTarget(sshDest(d), s.o.SSH)
		if err != nil {
			return nil, err
		}
		t.Name = d
		out = append(out, t)
	}
	return out, nil
}

// logins are the hosts' login users, for batch approvals.
func logins(hosts []engine.Target) map[string]string {
	m := map[string]string{}
	for _, t := range hosts {
		if t.SSH != nil {
			m[t.Name] = t.SSH.User
		}
	}
	return m
}

// undoResult is undo's structured result.
type undoResult struct {
	Host     string   `json:"host"`
	Session  string   `json:"session"`
	Restored []string `json:"restored"`
}

func (s *Server) undo(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var p UndoParams
	if err := decodeOwn(req.Params.Arguments, s.o.MaxArgBytes, &p); err != nil {
		return toolError("%s: %v", UndoName, err), nil
	}
	host := strings.TrimSpace(p.Host)
	if host == "" {
		return toolError("%s: missing required parameter \"host\"", UndoName), nil
	}
	ctx, end := s.begin(ctx, req)
	defer end()
	scope := s.clients.of(req.Session).scope
	key := poolKey(scope, host)
	current := s.hosts.session(key)
	id := cmp.Or(strings.TrimSpace(p.Session), current)
	if !s.hosts.owns(scope, id) {
		// One client's undo never puts back another's changes (nor the
		// operator's own runs: agent undo does that).
		return toolError("%s: session %s is not one of this client's sessions (its current one on %s is %s)", UndoName, id, host, current), nil
	}
	if err := statedir.CheckSessionID(id); err != nil {
		return toolError("%s: %v", UndoName, err), nil
	}
	l, err := s.hosts.acquire(ctx, key)
	if err != nil {
		return toolError("%s: %v", UndoName, err), nil
	}
	defer l.release()
	// The host's open journal of the current session is closed for
	// changes once restored: later calls get a new connection and session.
	if id == current {
		s.hosts.retire(key, true)
	}
	stateDir, err := statedir.Dir()
	if err != nil {
		return toolError("%s: %v", UndoName, err), nil
	}
	h := l.Host()
	acts, err := engine.UndoWith(ctx, h.Transport(), stateDir, id, h.Name, engine.UndoOptions{Force: p.Force, Become: h.Become(),
		By: safety.ByPolicy, Approval: "the client's own session: its undo asks no question"})
	res := undoResult{Host: host, Session: id, Restored: []string{}}
	for _, a := range acts {
		res.Restored = append(res.Restored, a.String())
	}
	switch {
	case errors.Is(err, journal.ErrAlreadyRestored):
		return textResult(fmt.Sprintf("session %s on %s: nothing left to undo (already restored)", id, host), false, res), nil
	case err != nil:
		return textResult(fmt.Sprintf("undo on %s: %s (restored: %s)", host, h.Redact(err.Error()), strings.Join(res.Restored, "; ")), true, res), nil
	case len(acts) == 0:
		return textResult(fmt.Sprintf("session %s changed no file on %s", id, host), false, res), nil
	}
	return textResult(fmt.Sprintf("undo on %s (session %s):\n%s", host, id, strings.Join(res.Restored, "\n")), false, res), nil
}

// planBecome refuses a plan whose steps say become: true when the server
// was not started with become: the client writes the plan, and a model
// escalates only when the operator enabled it (as in agent run).
func (s *Server) planBecome(plan *planner.Plan) error {
	if s.o.Become.Enabled {
		return nil
	}
	for _, ph := range plan.Phases {
		for i, st := range ph.Steps {
			if st.Become {
				return fmt.Errorf("phase %d step %d says become: true, but this server was not started with --become "+
					"(the operator enables become: agent mcp -b); remove become from the plan", ph.Phase, i+1)
			}
		}
	}
	return nil
}
