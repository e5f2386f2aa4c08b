package stepgen

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/autoshell/agent/event"
	"github.com/autoshell/agent/executor"
	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/planner"
)

// replanMarker starts a phase's closing text when the model says the phase
// cannot succeed.
const replanMarker = "REPLAN:"

// adaptive plans the task, then runs each phase: requests offering the
// step tools until the model closes the phase (phase_done after its last
// steps, or a reply without a tool call). The planning reply may carry
// the first phase's steps, and its phase_done; a reply may go on with the
// next phase's steps after an honoured phase_done. A phase the model says
// cannot succeed (its summary starts with "REPLAN:") replaces the rest of
// the plan once; a second time ends the run.
func (r *runner) adaptive(ctx context.Context, task string) error {
	r.offered = r.taskTools(task)
	pl := &planner.LLMPlanner{Chat: r.chat, First: r.firstPhase(task)}
	var lp planner.LLMPlan
	var closed []phaseNote // closing text of each phase done
	from := 0
	if rs := r.cfg.Resume; rs != nil && rs.Plan != nil && len(rs.Plan.Phases) > 0 {
		lp.Plan, from = rs.Plan, min(rs.From, len(rs.Plan.Phases))
		for _, c := range rs.Closed {
			closed = append(closed, phaseNote{text: c, after: -1}) // where their steps end is not known
		}
	} else {
		var err error
		if lp, err = pl.Plan(ctx, task, r.cfg.Environment); err != nil {
			return err
		}
	}
	plan := lp.Plan
	plan.Name = "task"
	r.res.Plan = plan
	r.emitPlan(plan)
	replanned := false
	var carry *llm.Response // the steps a reply gave the next phase
	for i := from; i < len(plan.Phases); i++ {
		ph := plan.Phases[i]
		r.exec.SetPhase(ph.Phase)
		r.phaseNow = phaseInfo(ph)
		info := phaseInfo(ph)
		r.emit(event.Event{Kind: event.KindPhase, Phase: &info})
		first := carry
		if i == 0 && len(lp.First.ToolCalls) > 0 {
			first = &lp.First // the planning reply's steps of phase 1
		}
		text, inPhase, next, err := r.phase(ctx, task, plan, ph, closed, first)
		if err != nil {
			return err
		}
		carry = next
		if reason, ok := strings.CutPrefix(strings.TrimSpace(text), replanMarker); ok {
			reason = strings.TrimSpace(reason)
			if replanned {
				return fmt.Errorf("phase %d (%s) cannot succeed: %s", ph.Phase, ph.Goal, oneLine(reason, 300))
			}
			replanned = true
			r.emit(event.Event{Kind: event.KindReplan, Replan: &event.Replan{Phase: ph.Phase, Reason: reason}})
			var np planner.LLMPlan
			if inPhase != nil { // the plan the model sent beside its REPLAN:
				np = *inPhase
			} else if np, err = pl.Replan(ctx, task, r.cfg.Environment, plan, ph, reason, r.history()); err != nil {
				return err
			} else {
				carry = nil // steps written before the new plan was
			}
			rest := np.Plan.Phases
			for j := range rest {
				rest[j].Phase = ph.Phase + 1 + j
			}
			plan.Phases = append(plan.Phases[:i+1:i+1], rest...)
			closed = append(closed, phaseNote{fmt.Sprintf("Phase %d could not succeed: %s", ph.Phase, reason), r.exec.Vars().Len()})
			r.emitPlan(plan)
			continue
		}
		closed = append(closed, phaseNote{fmt.Sprintf("Phase %d: %s", ph.Phase, text), r.exec.Vars().Len()})
		r.res.Answer = text
		if reason, ok := failedReason(text); ok { // the task cannot be done: no later phase
			return fmt.Errorf("%w: phase %d (%s): %s", ErrTaskFailed, ph.Phase, ph.Goal, oneLine(reason, 300))
		}
	}
	return nil
}

func (r *runner) emitPlan(plan *planner.Plan) {
	pe := &event.Plan{Name: plan.Name}
	for _, ph := range plan.Phases {
		pe.Phases = append(pe.Phases, phaseInfo(ph))
	}
	r.emit(event.Event{Kind: event.KindPlan, Plan: pe})
}

func phaseInfo(ph planner.Phase) event.PhaseInfo {
	return executor.PhaseInfo(ph, 0)
}

// phase asks for steps until the model closes the phase, and returns its
// summary, the new plan the closing reply carried beside a REPLAN:
// summary (nil if none), and the calls of the closing reply after its
// phase_done: the next phase's first steps (nil if none; in the plan's
// last phase they are this phase's). first, when not nil, is the first
// round's reply (the planning reply's steps, or the previous phase's
// carried ones). Each request is bounded: the system prompt holds the
// summary of what ran before the last round, and the last round's tool
// calls and their replies follow it verbatim (so no output is sent twice).
func (r *runner) phase(ctx context.Context, task string, plan *planner.Plan, ph planner.Phase, closed []phaseNote, first *llm.Response) (string, *planner.LLMPlan, *llm.Response, error) {
	var exchange []llm.Message // the last round: assistant message and its tool replies
	sys := r.phasePrompt(task, plan, ph, closed)
	for round := 1; ; round++ {
		if round > r.cfg.MaxRounds {
			return "", nil, nil, fmt.Errorf("%w: phase %d (%s) still not done after %d requests", ErrMaxRounds, ph.Phase, ph.Goal, r.cfg.MaxRounds)
		}
		var resp llm.Response
		if round == 1 && first != nil {
			resp = *first
		} else {
			msgs := []llm.Message{
				{Role: llm.RoleSystem, Content: sys},
				{Role: llm.RoleUser, Content: phaseInstruction(ph, round)},
			}
			msgs = append(msgs, exchange...)
			req := llm.Request{Messages: msgs, Tools: stepRequestTools(r.offered), Control: controlTools}
			var err error
			if resp, err = r.chat.Chat(ctx, req); err != nil {
				return "", nil, nil, err
			}
			if len(r.offered) < len(r.tools) && len(resp.ToolCalls) == 0 {
				// a call to a tool not offered, written as plain JSON text, is
				// a call, not the phase's closing text
				resp = llm.ExtractTextCalls(resp, toolNames(req.Tools), r.exec.Registry().Names(), PhaseDoneName)
			}
		}
		if len(r.offered) < len(r.tools) {
			r.offer(r.acceptUnoffered(&resp)) // the model reached for another tool: offer it from now on
		}
		r.thought(ph.Phase, resp)
		if len(resp.ToolCalls) == 0 {
			text := strings.TrimSpace(resp.Content)
			if text == "" {
				text = "(phase closed without a summary)"
			}
			r.closePhase(plan, ph, text)
			return text, nil, nil, nil
		}
		sys = r.phasePrompt(task, plan, ph, closed) // the history before this round, for the next request
		cur, later := resp, llm.Response{}
		if ph.Phase != plan.Phases[len(plan.Phases)-1].Phase {
			cur, later = splitAfterDone(resp)
		}
		steps, done, plans := splitDone(cur)
		replies, reasons, err := r.runCalls(ctx, steps)
		if err != nil {
			return "", nil, nil, err
		}
		if len(done) > 0 {
			text, doneReplies, ok := closing(cur, done, reasons)
			if ok {
				r.closePhase(plan, ph, text)
				var next *llm.Response
				if len(later.ToolCalls) > 0 {
					next = &later
				}
				return text, replanned(resp, text, plans), next, nil
			}
			replies = append(replies, doneReplies...)
		}
		replies = append(replies, unusedPlans(plans)...)
		replies = append(replies, notBegun(later, ph)...)
		exchange = append([]llm.Message{r.assistant(resp)}, replies...)
	}
}

// closePhase reports a phase's closing summary.
func (r *runner) closePhase(plan *planner.Plan, ph planner.Phase, text string) {
	r.emit(event.Event{Kind: event.KindAnswer, Answer: &event.Answer{Phase: ph.Phase, Text: text, Final: ph.Phase == len(plan.Phases)}})
}

// phaseNote is a phase's closing text in the phase prompts, and where it
// goes: after the first after steps of the history (execctx.Context.Len
// when it closed); -1 when that is not known (a resumed run's phases).
type phaseNote struct {
	text  string
	after int
}

// phasePrompt is a phase request's system prompt, laid out for the
// providers' prompt caches, which bill the part of a request that repeats
// an earlier request's beginning at a fraction of the price: what holds
// for the whole task first (the rules, the environment, the task: the
// same bytes as the planning prompt's beginning, promptHead), then the
// plan (only a replan changes it), then the steps run, each phase's
// closing text after its last step (they only grow at the end, until
// older steps are shortened), then what changes from request to request
// (the variables and files the steps do not show); the current phase is
// the user message after it (phaseInstruction).
// Nothing in it changes with time alone, and nothing is said twice: a
// phase done is its number and summary (the plan has its goal).
func (r *runner) phasePrompt(task string, plan *planner.Plan, ph planner.Phase, closed []phaseNote) string {
	var b strings.Builder
	b.WriteString(r.promptHead(task))
	b.WriteString("\n## Plan\n")
	for _, p := range plan.Phases {
		fmt.Fprintf(&b, "%d. %s\n", p.Phase, p.Goal)
	}
	hist := r.historyParts()
	var placed, unplaced []phaseNote
	for _, c := range closed {
		if c.after < 0 {
			unplaced = append(unplaced, c)
		} else {
			placed = append(placed, c)
		}
	}
	b.WriteString("\n## Steps run\n")
	if hist.Steps == "" && len(placed) == 0 {
		b.WriteString("(none yet)\n")
	}
	b.WriteString(withNotes(hist.Steps, placed))
	if len(unplaced) > 0 {
		b.WriteString("\n## Phases done\n")
		for _, c := range unplaced {
			b.WriteString(oneLine(c.text, 600) + "\n")
		}
	}
	if hist.Vars+hist.Files != "" {
		b.WriteString("\n" + hist.Vars + hist.Files)
	}
	return b.String()
}

// withNotes puts each note's text on a line of its own in the step
// entries steps (execctx.SummaryParts.Steps): before the first entry
// numbered above its after, or at the end. An entry begins a line with
// its number and ". "; no other line of the entries begins with a digit.
func withNotes(steps string, notes []phaseNote) string {
	if len(notes) == 0 {
		return steps
	}
	var b strings.Builder
	for line := range strings.Lines(steps) {
		if n, ok := entryNumber(line); ok {
			for len(notes) > 0 && notes[0].after < n {
				b.WriteString(oneLine(notes[0].text, 600) + "\n")
				notes = notes[1:]
			}
		}
		b.WriteString(line)
	}
	if len(notes) > 0 && b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	for _, c := range notes {
		b.WriteString(oneLine(c.text, 600) + "\n")
	}
	return b.String()
}

// entryNumber is the number of the step entry line begins, if it begins
// one ("12. read_file [ok…").
func entryNumber(line string) (int, bool) {
	digits, _, ok := strings.Cut(line, ". ")
	if !ok || digits == "" || len(digits) > 9 || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}

// promptHead begins every adaptive request's system prompt, the planning
// request's too: the rules, the other tools, the environment and the
// task — the same bytes for the whole task, so that a provider's prompt
// cache serves them.
func (r *runner) promptHead(task string) string {
	return stepRules + r.moreTools() + "\n## Environment\n" + r.cfg.Environment + "\n\n## Task\n" + task + "\n"
}

// moreTools is the system prompt's line naming the tools beside the core
// ones: the same whatever a request offers (a task offers some of them
// when its text calls for them; any can be called), so that the prompt's
// beginning stays the same. Names that share a prefix up to "_" are
// written once with their endings ("container_list/logs"): the line is
// in every request.
func (r *runner) moreTools() string {
	var more []string
	for _, t := range r.tools {
		if !slices.Contains(CoreTools, t.Name) {
			more = append(more, t.Name)
		}
	}
	if len(more) == 0 {
		return ""
	}
	return fmt.Sprintf("Other tools (described when offered): %s.\n", strings.Join(groupNames(more), ", "))
}

// groupNames joins the names sharing their part up to the first "_" into
// one entry, "prefix_a/b/c", in the order of the first; a group of one
// stays as it is.
func groupNames(names []string) []string {
	var out []string
	groups := map[string]int{} // prefix → index in out
	ends := map[string][]string{}
	for _, n := range names {
		prefix, end, ok := strings.Cut(n, "_")
		if !ok {
			out = append(out, n)
			continue
		}
		if _, seen := groups[prefix]; !seen {
			groups[prefix] = len(out)
			out = append(out, n)
		}
		ends[prefix] = append(ends[prefix], end)
	}
	for prefix, i := range groups {
		if len(ends[prefix]) > 1 {
			out[i] = prefix + "_" + strings.Join(ends[prefix], "/")
		}
	}
	return out
}

// phaseInstruction is a phase request's user message: the phase to do,
// its goal and what shows it done. It is the request's last part, the
// one that changes from phase to phase (the system prompt does not say
// it again).
func phaseInstruction(ph planner.Phase, round int) string {
	var b strings.Builder
	verb := "Do"
	if round > 1 {
		verb = "Continue"
	}
	fmt.Fprintf(&b, "%s phase %d: %s", verb, ph.Phase, ph.Goal)
	if ph.Description != "" {
		fmt.Fprintf(&b, "\nDescription: %s", ph.Description)
	}
	if ph.SuccessCriteria != "" {
		fmt.Fprintf(&b, "\nSuccess criteria: %s", ph.SuccessCriteria)
	}
	if round > 1 {
		b.WriteString("\nAdd phase_done after its last steps, or call it alone if it is done.")
	}
	return b.String()
}

// stepRules is the fixed part of the step requests' system prompt (the
// adaptive-execution spec's step generation prompt, for function calling)
// and the beginning of the planning prompt's. It is sent with every
// request: keep it short. What a phase request's user message would say
// again each time (how to close a phase) is here, in the part a
// provider's prompt cache serves.
const stepRules = `You are a command-line agent doing a task on a host in phases, by calling tools (1-3 per reply, run in order).
Every tool also takes ignore_errors (true: failure expected). A Python-style condition that is false skips the step;
"{{x}}" in a parameter is variable x; "last" is the latest result (last.stdout, last.exit_code, last.success).
After a failure, correct course; never repeat a denied step unchanged, nor one that succeeded. The next phase's
steps may follow phase_done if they need no result you have not seen.
`

// CoreTools are offered in every adaptive step request: the
// adaptive-execution spec's five core tools. The other tools are offered
// in a task whose text calls for them (toolHints), and all of them once
// the model calls one that was not offered. Tool definitions are most of
// a step request's size, and ReAct, which cannot know what the task
// needs, offers them all every time.
var CoreTools = []string{"execute_command", "read_file", "write_file", "edit_file", "check_condition"}

// toolHints are words and phrases (lower case, matched at word starts) in
// the task that bring a tool beside the core ones into its requests. They are specific on purpose: "find" alone says nothing about the
// find tool ("find the ERROR lines", "find out why"); a tool the hints
// miss is still listed by name and runs when called.
var toolHints = map[string][]string{
	"find":              {"locate", "find file", "find the file", "find director", "which file", "where is", "查找文件", "找文件", "哪个文件"},
	"grep":              {"grep", "search", "matching", "lines containing", "occurrence", "搜索", "匹配"},
	"wget":              {"wget", "download", "url", "http", "下载", "网址"},
	"ps":                {"process", "pid", "running", "进程"},
	"ss":                {"port", "socket", "listen", "connection", "network", "端口", "监听", "连接", "网络"},
	"lsof":              {"lsof", "open file", "port", "in use", "端口", "占用"},
	"sys_monitor":       {"sys_monitor", "cpu", "memory", "ram", "disk", "load", "usage", "resource", "monitor", "内存", "磁盘", "负载", "使用率", "资源", "监控"},
	"upload_file":       {"upload", "transfer", "local machine", "my machine", "上传", "传输", "本地"},
	"download_file":     {"download", "transfer", "local machine", "my machine", "下载", "传输", "本地"},
	"container_list":    containerHints,
	"container_logs":    containerHints,
	"container_inspect": containerHints,
	"container_start":   containerHints,
	"container_stop":    containerHints,
	"container_restart": containerHints,
	"session_files":     {"this file", "that file", "these files", "the file", "uploaded", "earlier", "previous", "before", "上传", "之前", "这个文件", "那个文件"},
	"semantic_search":   {"search", "semantic", "which file", "where is", "where do", "mentions", "passage", "related to", "搜索", "查找", "哪里"},
}

// containerHints bring the container tools.
var containerHints = []string{"container", "docker", "podman", "容器"}

// taskTools returns the tools every request of a task offers: the core
// tools and those the task's text calls for (toolHints). A phase's text
// brings none: the tools come first in a request, so a request offering
// one more tool than the one before shares no cached prefix with it (and
// the model wrote the phases knowing the other tools by name; calling one
// offers them all). Tool names themselves are not hints: find, ps and ss
// are common words.
func (r *runner) taskTools(task string) []llm.Tool {
	text := " " + strings.ToLower(task)
	wanted := func(name string) bool {
		if slices.Contains(CoreTools, name) {
			return true
		}
		for _, w := range toolHints[name] {
			if containsWord(text, w) {
				return true
			}
		}
		return false
	}
	var out []llm.Tool
	for _, t := range r.tools {
		if wanted(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// containsWord reports whether w occurs in text at the start of a word;
// a w in a script without spaces between words (Chinese) anywhere.
func containsWord(text, w string) bool {
	if w != "" && w[0] >= 0x80 {
		return strings.Contains(text, w)
	}
	for i := 0; ; {
		j := strings.Index(text[i:], w)
		if j < 0 {
			return false
		}
		j += i
		if j == 0 || !isWordByte(text[j-1]) {
			return true
		}
		i = j + 1
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// acceptUnoffered takes back the "unknown tool" problems of calls naming a
// registered tool the task did not offer, so that they run like any
// other call (beyond the third, they are still refused), and returns
// the names of those that run. The tool error of a truly unknown tool names every tool,
// offered or not.
func (r *runner) acceptUnoffered(resp *llm.Response) []string {
	var found []string
	kept := resp.Problems[:0:0]
	for _, p := range resp.Problems {
		if p.Kind == llm.ProblemUnknownTool {
			p.Known = r.exec.Registry().Names()
			if i := slices.IndexFunc(resp.ToolCalls, func(tc llm.ToolCall) bool { return tc.ID == p.CallID }); i >= 0 {
				if _, ok := r.exec.Registry().Lookup(resp.ToolCalls[i].Name); ok {
					if i-controlCallsBefore(resp.ToolCalls, i) >= llm.MaxToolCalls {
						p.Kind = llm.ProblemTooManyCalls
						p.Name = resp.ToolCalls[i].Name
						kept = append(kept, p)
						continue
					}
					found = append(found, resp.ToolCalls[i].Name)
					continue
				}
			}
		}
		kept = append(kept, p)
	}
	resp.Problems = kept
	return found
}

// offer adds the tools named to those the task's requests offer, in the
// registry's order. Only those: every tool would make each later request
// carry all the definitions (~14 KB), and a request whose tools differ
// from the one before shares no cached prefix with it, however many
// tools it adds.
func (r *runner) offer(names []string) {
	if len(names) == 0 {
		return
	}
	var out []llm.Tool
	for _, t := range r.tools {
		if slices.Contains(names, t.Name) || slices.ContainsFunc(r.offered, func(o llm.Tool) bool { return o.Name == t.Name }) {
			out = append(out, t)
		}
	}
	r.offered = out
}

// toolNames lists the names of tools.
func toolNames(tools []llm.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}
