package scenarios

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/autoshell/agent/stepgen"
	"github.com/autoshell/agent/testenv"
)

// Issue 31's scenarios, beside the spec's three: a diagnosis in five
// phases, and a condition the model gets wrong once.

const (
	svcStart = `#!/bin/sh
d=$(dirname "$0")
port=$(sed -n 's/^port: //p' "$d/app.conf")
if [ "$port" -lt 1024 ]; then
  echo "ERROR cannot bind port $port: permission denied" >> "$d/app.log"
  echo "start failed, see app.log" >&2
  exit 1
fi
echo "port $port" > "$d/running"
echo "started on port $port"
`
	svcConf = "name: svc\nport: 80\nworkers: 4\n"
)

// Diagnose: the service does not start; find out why and fix it. Five
// phases for adaptive (reproduce, read the log, read the config, fix,
// restart and check); ReAct reads the log and the config at once after
// seeing the failure, as a model would. The first start fails in both
// modes: the failure is the observation the diagnosis starts from (the
// adaptive model marks it ignore_errors, so phase 1 closes in the
// planning reply). The fix and the start go in one reply (phases 4 and 5).
func Diagnose() Scenario {
	return Scenario{
		Name: "diagnose",
		Task: "the service in DIR/svc does not start (sh DIR/svc/start.sh): find out why, fix it and start it",
		Setup: func(dir string) error {
			d := filepath.Join(dir, "svc")
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
			os.Remove(filepath.Join(d, "running"))
			for name, text := range map[string]string{"start.sh": svcStart, "app.conf": svcConf, "app.log": "INFO svc installed\n"} {
				if err := os.WriteFile(filepath.Join(d, name), []byte(text), 0o644); err != nil {
					return err
				}
			}
			return nil
		},
		Script: func(mode stepgen.Mode, dir string) []testenv.Reply {
			start := `{"command":"sh DIR/svc/start.sh"}`
			log := `{"file_path":"DIR/svc/app.log"}`
			conf := `{"file_path":"DIR/svc/app.conf"}`
			edit := `{"file_path":"DIR/svc/app.conf","search_pattern":"port: 80\n","replacement":"port: 8080\n"}`
			if mode == stepgen.ModeReAct {
				return []testenv.Reply{
					calls(dir, [2]string{"execute_command", start}),
					calls(dir, [2]string{"read_file", log}, [2]string{"read_file", conf}),
					calls(dir, [2]string{"edit_file", edit}),
					calls(dir, [2]string{"execute_command", start}),
					testenv.Text("It could not bind port 80 without root (app.log); the port is 8080 now and the service started."),
				}
			}
			return []testenv.Reply{
				planAnd(dir, `{"task_type":"diagnosis","complexity":"moderate","phases":[`+
					`{"phase":1,"goal":"Reproduce the failure","success_criteria":"the start's output is known"},`+
					`{"phase":2,"goal":"Read the service log","success_criteria":"the error is known"},`+
					`{"phase":3,"goal":"Read the configuration the error points to","success_criteria":"the bad setting is known"},`+
					`{"phase":4,"goal":"Fix the setting","success_criteria":"the configuration is fixed"},`+
					`{"phase":5,"goal":"Start the service and check it runs","success_criteria":"the start succeeds"}]}`,
					// the failure is what phase 1 expects to see: ignore_errors
					// lets its phase_done hold
					[2]string{"execute_command", `{"command":"sh DIR/svc/start.sh","save_output_as":"first_start","ignore_errors":true}`},
					done("The start was run; its output is in first_start.")),
				calls(dir, [2]string{"read_file", `{"file_path":"DIR/svc/app.log","save_output_as":"svc_log"}`},
					done("The log says the port cannot be bound without root.")),
				calls(dir, [2]string{"read_file", `{"file_path":"DIR/svc/app.conf","save_output_as":"svc_conf"}`},
					done("The configuration sets port: 80.")),
				// the start needs no result the model has not seen: phase 5
				// follows phase 4's phase_done in the same reply
				calls(dir, [2]string{"edit_file", strings.Replace(edit, `}`, `,"condition":"'port: 80' in svc_conf.splitlines()"}`, 1)},
					done("The port is 8080 now."),
					[2]string{"execute_command", `{"command":"sh DIR/svc/start.sh","save_output_as":"second_start"}`},
					done("The service started on port 8080.")),
			}
		},
		Check: func(dir string) error {
			b, err := os.ReadFile(filepath.Join(dir, "svc", "running"))
			if err != nil {
				return fmt.Errorf("the service is not running: %w", err)
			}
			if string(b) != "port 8080\n" {
				return fmt.Errorf("running = %q", b)
			}
			return nil
		},
		Errors:         1,
		AdaptiveErrors: 1,
	}
}

const flagText = "name: app\nfeature:off\n"

// Replan: turn a feature on if it is off; the file writes "feature:off"
// without a space. Adaptive's condition looks for "feature: off", so its
// edit is skipped; the next phase sees that, closes with REPLAN: and the
// new plan in the same reply, and the new plan's phase makes the edit. ReAct's first edit fails (its pattern
// is not in the file) and it edits again.
func Replan() Scenario {
	return Scenario{
		Name: "replan",
		Task: "if DIR/feature.conf has the feature off, turn it on",
		Setup: func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "feature.conf"), []byte(flagText), 0o644)
		},
		Script: func(mode stepgen.Mode, dir string) []testenv.Reply {
			read := `{"file_path":"DIR/feature.conf"}`
			wrong := `{"file_path":"DIR/feature.conf","search_pattern":"feature: off","replacement":"feature: on"}`
			right := `{"file_path":"DIR/feature.conf","search_pattern":"feature:off","replacement":"feature:on"}`
			if mode == stepgen.ModeReAct {
				return []testenv.Reply{
					calls(dir, [2]string{"read_file", read}),
					calls(dir, [2]string{"edit_file", wrong}),
					calls(dir, [2]string{"edit_file", right}, [2]string{"read_file", read}),
					testenv.Text("The feature was off (written feature:off); it is on now."),
				}
			}
			reason, _ := json.Marshal(map[string]string{"summary": "REPLAN: the edit was skipped: the file writes feature:off, without a space"})
			return []testenv.Reply{
				planAnd(dir, `{"task_type":"config_change","complexity":"simple","phases":[`+
					`{"phase":1,"goal":"Turn the feature on if it is off","success_criteria":"the file says the feature is on"},`+
					`{"phase":2,"goal":"Check the file","success_criteria":"the feature is on"}]}`,
					[2]string{"read_file", `{"file_path":"DIR/feature.conf","save_output_as":"conf"}`},
					[2]string{"edit_file", strings.Replace(wrong, `}`, `,"condition":"'feature: off' in conf"}`, 1)},
					done("The feature is on if it was off.")),
				// the phase closes with REPLAN: and the new plan in one reply
				calls(dir, [2]string{stepgen.PhaseDoneName, string(reason)},
					[2]string{"submit_plan", `{"task_type":"config_change","complexity":"simple","phases":[` +
						`{"phase":1,"goal":"Turn the feature on: it is written feature:off","success_criteria":"the file says feature:on"}]}`}),
				calls(dir,
					[2]string{"edit_file", strings.Replace(right, `}`, `,"condition":"'feature:off' in conf"}`, 1)},
					[2]string{"read_file", read},
					done("The feature is on now.")),
			}
		},
		Check: func(dir string) error {
			b, err := os.ReadFile(filepath.Join(dir, "feature.conf"))
			if err != nil {
				return err
			}
			if string(b) != "name: app\nfeature:on\n" {
				return fmt.Errorf("feature.conf = %q", b)
			}
			return nil
		},
		Errors: 1,
	}
}
