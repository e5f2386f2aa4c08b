package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/autoshell/agent/event"
)

// maxReportLine bounds one line of a --json stream read by agent report
// (an output event holds at most 32 KiB of data, escaped).
const maxReportLine = 4 << 20

// part is what one --json stream of a batch run (one shard) says: each
// host's result, the batch event's totals, and whether the stream ended
// with its batch event (a shard killed midway did not).
type part struct {
	name     string
	hosts    map[string]event.HostEnd
	order    []string
	batches  int // batch events seen: the runs that finished
	llmCalls int
	duration int64
	sessions []string
	// torn: the last line was cut short (the writer died mid-line).
	torn bool
}

// reportLine is the fields of a --json event that agent report reads.
type reportLine struct {
	Event   string `json:"event"`
	Host    string `json:"host"`
	Session string `json:"session"`
	// host events (a done event's status is success or failed); a batch
	// event's duration. LLMCalls shadows HostEnd's: a host's or the batch's.
	event.HostEnd
	LLMCalls int `json:"llm_calls"`
}

// readPart reads one --json stream of `agent -i … --json` or `agent run
// … -i … --json`. A line that is not a JSON object is an error naming
// name:line, except a last line without its newline (a writer killed
// mid-line), which marks the part torn.
func readPart(r io.Reader, name string) (*part, error) {
	p := &part{name: name, hosts: map[string]event.HostEnd{}}
	br := bufio.NewReaderSize(r, 64<<10)
	done := map[string]string{} // host → done status, for a host without its host event
	for n := 1; ; n++ {
		line, err := readReportLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		last := errors.Is(err, io.EOF)
		if len(bytes.TrimSpace(line)) > 0 {
			var ev reportLine
			if jerr := json.Unmarshal(line, &ev); jerr != nil || ev.Event == "" {
				if last && line[len(line)-1] != '\n' {
					p.torn = true
					break
				}
				if jerr == nil {
					jerr = errors.New(`no "event" key`)
				}
				return nil, fmt.Errorf("%s:%d: not an event of agent --json: %v", name, n, jerr)
			}
			p.take(ev, done)
		}
		if last {
			break
		}
	}
	for h, st := range done { // an agent without host events: done says ok or failed
		if _, ok := p.hosts[h]; !ok {
			end := event.HostEnd{Status: event.HostFailed}
			if st == "success" {
				end.Status = event.HostOK
			}
			p.add(h, end)
		}
	}
	return p, nil
}

// readReportLine reads one line with its newline (without one at the end of
// the input, with io.EOF), at most maxReportLine bytes.
func readReportLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxReportLine {
			return nil, fmt.Errorf("a line longer than %d bytes", maxReportLine)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

func (p *part) take(ev reportLine, done map[string]string) {
	if ev.Host == "" && ev.Event != "batch" {
		return // not a host's
	}
	switch ev.Event {
	case "host":
		end := ev.HostEnd
		end.LLMCalls = ev.LLMCalls
		p.add(ev.Host, end)
	case "done":
		done[ev.Host] = ev.HostEnd.Status
	case "batch":
		p.batches++
		p.llmCalls += ev.LLMCalls
		p.duration = max(p.duration, ev.DurationMS)
		if ev.Session != "" {
			p.sessions = append(p.sessions, ev.Session)
		}
	}
}

func (p *part) add(host string, end event.HostEnd) {
	if _, ok := p.hosts[host]; !ok {
		p.order = append(p.order, host)
	}
	p.hosts[host] = end
}

// report is the parts merged: every host once (reported again by a later
// part — a retry — the later result counts), with the notes that say what
// the merge could not vouch for.
type report struct {
	hosts      []string
	result     map[string]event.HostEnd
	from       map[string]string // host → the part that reported it
	totals     event.Batch
	sessions   []string
	incomplete []string // parts that did not end with their batch event
	notes      []string
}

func mergeParts(parts []*part) *report {
	r := &report{result: map[string]event.HostEnd{}, from: map[string]string{}}
	for _, p := range parts {
		switch {
		case p.torn:
			r.incomplete = append(r.incomplete, p.name)
			r.notes = append(r.notes, p.name+": its last line is cut short: the run did not finish")
		case p.batches == 0:
			r.incomplete = append(r.incomplete, p.name)
			r.notes = append(r.notes, p.name+": no batch event: the run did not finish")
		}
		r.totals.LLMCalls += p.llmCalls
		r.totals.DurationMS = max(r.totals.DurationMS, p.duration)
		r.sessions = append(r.sessions, p.sessions...)
		for _, h := range p.order {
			if prev, ok := r.from[h]; ok {
				r.notes = append(r.notes, fmt.Sprintf("%s: reported by %s and %s; the later counts", h, prev, p.name))
			} else {
				r.hosts = append(r.hosts, h)
			}
			r.result[h], r.from[h] = p.hosts[h], p.name
		}
	}
	sort.Strings(r.hosts)
	for _, h := range r.hosts {
		r.totals.Hosts++
		switch r.result[h].Status {
		case event.HostOK:
			r.totals.OK++
		case event.HostNotRun:
			r.totals.NotRun++
		default:
			r.totals.Failed++
		}
	}
	return r
}

// session is the merged batch event's session: the parts' sessions.
func (r *report) session() string { return strings.Join(r.sessions, ",") }
