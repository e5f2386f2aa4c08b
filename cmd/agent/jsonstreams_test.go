package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/autoshell/agent/event"
)

// jsonOutputStreams is the data of the output events in out (--json
// lines) joined per host, step and stream: what a reader of --json sees
// of one command's output, where a shape over lines that went out in
// different events is whole.
func jsonOutputStreams(out string) map[string]string {
	streams := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev struct {
			Event string `json:"event"`
			Host  string `json:"host"`
			event.Output
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Event != "output" {
			continue
		}
		streams[fmt.Sprintf("--json output of %s step %d.%d %s", ev.Host, ev.Phase, ev.Step, ev.Stream)] += ev.Data
	}
	return streams
}
