package session

import (
	"maps"
	"slices"
	"time"
)

// Info is what agent sessions shows of a session.
type Info struct {
	ID        string    `json:"id"`
	Started   time.Time `json:"started"`
	Updated   time.Time `json:"updated"`
	Kind      string    `json:"kind"`
	Target    string    `json:"target,omitempty"`
	Client    string    `json:"client,omitempty"`
	Inventory []string  `json:"inventory,omitempty"`
	Limit     string    `json:"limit,omitempty"`
	Task      string    `json:"task,omitempty"`
	Plan      string    `json:"plan,omitempty"`
	// State is done, failed, interrupted or running.
	State   string `json:"state"`
	Resumed int    `json:"resumed,omitempty"` // times agent resume took it up
	Hosts   Hosts  `json:"hosts"`
	Usage
	// Cost is in the config's currency, when the model has a price.
	Cost *float64 `json:"cost,omitempty"`
	// Error says why the file could not be read (wholly or past a line).
	Error string `json:"error,omitempty"`
}

// Hosts counts a session's hosts by how their work ended.
type Hosts struct {
	Done    int `json:"done"`
	Failed  int `json:"failed"`
	Pending int `json:"pending"`
}

// Usage is the model's usage over a session.
type Usage struct {
	Model            string `json:"model,omitempty"`
	LLMCalls         int    `json:"llm_calls"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
}

// Tokens is prompt and completion tokens.
func (u Usage) Tokens() int { return u.PromptTokens + u.CompletionTokens }

// Session is a session read back: its start, and how far each host got.
type Session struct {
	ID    string
	Start Start
	Info  Info
	// Hosts by name, in the order they first appear.
	Hosts map[string]*HostProgress
	Order []string
}

// HostProgress is how far the work on one host got.
type HostProgress struct {
	Name string
	// Status is the last end recorded for the host: success or failed
	// (its done record), ok, failed or not run (a batch host's), "" while
	// unfinished.
	Status string
	// Started and Ended hold each step's latest step_start and step
	// records, by step number (a resumed run records its steps again).
	Started map[int]Record
	Ended   map[int]Record
	// Answers are the texts that closed the model's phases, by phase.
	Answers map[int]string
	// Plan is the model's phases on this host, the latest.
	Plan *Record
}

// Finished reports whether the host's work ended well: it is not run
// again.
func (h *HostProgress) Finished() bool { return h.Status == "ok" || h.Status == "success" }

// Unknown is the step that was running when agent stopped (started, never
// ended), nil when none was.
func (h *HostProgress) Unknown() *Record {
	var out *Record
	for n, r := range h.Started {
		if _, ok := h.Ended[n]; ok {
			continue
		}
		if out == nil || n > out.Step {
			r := r
			out = &r
		}
	}
	return out
}

// Steps are the ended steps in order.
func (h *HostProgress) Steps() []Record {
	out := make([]Record, 0, len(h.Ended))
	for _, n := range slices.Sorted(maps.Keys(h.Ended)) {
		out = append(out, h.Ended[n])
	}
	return out
}

// Build reads recs (Parse's) of session id into a Session.
func Build(id string, recs []Record) *Session {
	s := &Session{ID: id, Hosts: map[string]*HostProgress{}}
	s.Info.ID = id
	state := ""
	for _, r := range recs {
		s.Info.Updated = r.Time
		host := func() *HostProgress {
			h := s.Hosts[r.Host]
			if h == nil {
				h = &HostProgress{Name: r.Host, Started: map[int]Record{}, Ended: map[int]Record{}, Answers: map[int]string{}}
				s.Hosts[r.Host] = h
				s.Order = append(s.Order, r.Host)
			}
			return h
		}
		switch r.R {
		case RecStart:
			if r.Start != nil && s.Info.Started.IsZero() {
				s.Start = *r.Start
				s.Info.Started = r.Time
			}
		case RecResume:
			s.Info.Resumed++
			state = ""
		case RecPlan:
			r := r
			host().Plan = &r
		case RecAnswer:
			host().Answers[r.Phase] = r.Text
		case RecStepStart:
			h := host()
			h.Started[r.Step] = r
			delete(h.Ended, r.Step)
		case RecStep:
			host().Ended[r.Step] = r
		case RecDone:
			host().Status = r.Status
		case RecHost:
			host().Status = r.Status
		case RecLLM:
			s.Info.LLMCalls++
			s.Info.PromptTokens += r.PromptTokens
			s.Info.CompletionTokens += r.CompletionTokens
			if r.Model != "" {
				s.Info.Model = r.Model
			}
		case RecEnd:
			state = r.Status
		}
	}
	st := s.Start
	s.Info.Kind, s.Info.Target, s.Info.Inventory, s.Info.Limit = st.Kind, st.Target, st.Inventory, st.Limit
	s.Info.Task, s.Info.Plan, s.Info.Client = st.Task, st.Plan, st.Client
	if s.Info.Model == "" {
		s.Info.Model = st.Model
	}
	if state == "" {
		state = StateInterrupted
	}
	s.Info.State = state
	total := max(st.Hosts, len(s.Hosts), 1)
	for _, h := range s.Hosts {
		switch {
		case h.Finished():
			s.Info.Hosts.Done++
		case h.Status == "failed":
			s.Info.Hosts.Failed++
		}
	}
	s.Info.Hosts.Pending = max(total-s.Info.Hosts.Done-s.Info.Hosts.Failed, 0)
	return s
}
