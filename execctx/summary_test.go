package execctx

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestSummaryExample(t *testing.T) {
	c := New()
	_ = c.Record(StepRecord{Tool: "execute_command", Description: "run the script", Params: map[string]any{"command": "bash ~/test/a.sh"},
		Status: StatusOK, Stdout: "1\n", Output: "1\n", SaveAs: "script_output", Duration: 12 * time.Millisecond})
	_ = c.Record(StepRecord{Tool: "read_file", Description: "read it", Params: map[string]any{"file_path": "~/test/a.sh"},
		Status: StatusSkipped, Output: "[skipped: condition condition_result == True was false]", Files: nil})
	c.AddFile(FileRead, "~/test/a.sh")
	want := `Steps run: 2
1. execute_command [ok, exit 0, 12ms]: run the script
   parameters: {"command":"bash ~/test/a.sh"}
   saved as: script_output
   output: 1
2. read_file [skipped, 0ms]: read it
   parameters: {"file_path":"~/test/a.sh"}
   output: [skipped: condition condition_result == True was false]
Variables:
  script_output = "1\n"
Files accessed:
  read ~/test/a.sh
`
	if got := c.Summary(0); got != want {
		t.Errorf("Summary:\n%s\nwant:\n%s", got, want)
	}
	if got := New().Summary(0); got != "Steps run: 0\nVariables:\n  (none)\n" {
		t.Errorf("empty Summary = %q", got)
	}
}

func TestSummaryBounded(t *testing.T) {
	c := New()
	for i := range 10_000 {
		out := fmt.Sprintf("line %d\n%s\n", i, strings.Repeat("é", i%3000))
		_ = c.Record(StepRecord{
			Tool: "execute_command", Description: fmt.Sprintf("step %d", i),
			Params: map[string]any{"command": strings.Repeat("c", i%500)},
			Status: StatusOK, Stdout: out, Output: out, SaveAs: fmt.Sprintf("v%d", i%300),
			Files: []FileAccess{{FileWritten, fmt.Sprintf("/tmp/f%d", i)}},
		})
	}
	for _, budget := range []int{0, 50, 500, 2000, 8000, 32000} {
		start := time.Now()
		s := c.Summary(budget)
		elapsed := time.Since(start)
		limit := budget
		if budget <= 0 {
			limit = DefaultSummaryBudget
		}
		if len(s) > limit {
			t.Errorf("Summary(%d) is %d bytes", budget, len(s))
		}
		if !utf8.ValidString(s) {
			t.Errorf("Summary(%d) is not valid UTF-8", budget)
		}
		if s != c.Summary(budget) {
			t.Errorf("Summary(%d) is not deterministic", budget)
		}
		if elapsed > 2*time.Second { // generous: the machine may be busy
			t.Errorf("Summary(%d) took %v", budget, elapsed)
		}
		if budget >= 2000 {
			for _, sub := range []string{"Steps run: 10000", "earlier steps not shown", "10000. execute_command [ok", "Variables:", "… "} {
				if !strings.Contains(s, sub) {
					t.Errorf("Summary(%d) lacks %q:\n%s", budget, sub, s)
				}
			}
		}
	}
	if got := c.Summary(8000); !strings.Contains(got, "9999. execute_command [ok, exit 0]: step 9998 → line 9998") &&
		!strings.Contains(got, "9999. execute_command [ok, exit 0, 0ms]") {
		t.Errorf("Summary lacks the recent steps:\n%s", got)
	}
}

// TestSummaryExposure: a variable marked ExposeName shows as [REDACTED], one
// marked ExposeNone not at all; both keep their values for templating, and
// their values are replaced wherever a step record holds them.
func TestSummaryExposure(t *testing.T) {
	c := New()
	for k, v := range map[string]any{"db_password": "S3cret\"PW", "ansible_become_password": "BecomeSecret99",
		"short_token": "abc", "role": "web"} {
		if err := c.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	c.SetExposure("db_password", ExposeName)
	c.SetExposure("short_token", ExposeName)
	c.SetExposure("ansible_become_password", ExposeNone)
	cmd, err := c.Render("mysql -p{{db_password}}; echo {{ansible_become_password}} | sudo -S true; echo abc")
	if err != nil {
		t.Fatal(err)
	}
	if cmd != `mysql -pS3cret"PW; echo BecomeSecret99 | sudo -S true; echo abc` {
		t.Fatalf("templating: %q", cmd)
	}
	_ = c.Record(StepRecord{Tool: "execute_command", Params: map[string]any{"command": cmd}, Status: StatusOK,
		Stdout: "BecomeSecret99\n", Output: "BecomeSecret99\n"})
	got := c.Summary(0)
	for _, s := range []string{"S3cret", "BecomeSecret99", "ansible_become_password"} {
		if strings.Contains(got, s) {
			t.Errorf("summary holds %q:\n%s", s, got)
		}
	}
	for _, s := range []string{"  db_password = [REDACTED]\n", "  short_token = [REDACTED]\n", `  role = "web"`,
		`"command":"mysql -p[REDACTED]; echo [REDACTED] | sudo -S true; echo abc"`, "output: [REDACTED]"} {
		if !strings.Contains(got, s) {
			t.Errorf("summary lacks %q:\n%s", s, got)
		}
	}
	if ok, err := c.Eval("db_password.startswith('S3')"); err != nil || !ok {
		t.Errorf("condition over a redacted variable: %v %v", ok, err)
	}
}

func TestScrub(t *testing.T) {
	c := New()
	for k, v := range map[string]any{"db_password": "S3cretPW", "short": "abc", "role": "webserver"} {
		if err := c.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	c.SetExposure("db_password", ExposeNone)
	c.SetExposure("short", ExposeName)
	got := c.Scrub("login S3cretPW as webserver, abc")
	if want := "login " + Redacted + " as webserver, abc"; got != want {
		t.Fatalf("Scrub = %q, want %q", got, want)
	}
}

// Parts is Summary for a cached prompt: the steps without the header, a
// variable that holds a step's output shown in full names the step, one
// whose output is clipped or differs keeps its value; the parts stay
// within the budget.
func TestSummaryParts(t *testing.T) {
	c := New()
	if p := c.Parts(0); p.Steps != "" || p.Vars != "" || p.Files != "" {
		t.Errorf("empty Parts = %+v", p)
	}
	_ = c.Record(StepRecord{Tool: "read_file", Params: map[string]any{"file_path": "a"}, Status: StatusOK, Stdout: "x\ny\n", Output: "x\ny\n", SaveAs: "a"})
	_ = c.Record(StepRecord{Tool: "execute_command", Params: map[string]any{"command": "f"}, Status: StatusError, ExitCode: 1,
		Stdout: "", Output: "[ERROR]: no\n[exit code 1]", SaveAs: "f"})
	big := strings.Repeat("z", 3000)
	_ = c.Record(StepRecord{Tool: "read_file", Params: map[string]any{"file_path": "b"}, Status: StatusOK, Stdout: big, Output: big, SaveAs: "b"})
	p := c.Parts(0)
	if strings.Contains(p.Steps, "Steps run") || !strings.HasPrefix(p.Steps, "1. read_file [ok]\n") || !strings.Contains(p.Steps, "\n2. execute_command [error, exit 1]\n") {
		t.Errorf("steps:\n%s", p.Steps)
	}
	// the status shows the exit code; the output does not say it again
	if !strings.Contains(p.Steps, "   output: [ERROR]: no\n3. ") || strings.Contains(p.Steps, "[exit code") {
		t.Errorf("the failed step's entry:\n%s", p.Steps)
	}
	for _, want := range []string{"  f = \"\"\n", "  b = \"zzz"} {
		if !strings.Contains(p.Vars, want) {
			t.Errorf("vars lack %q:\n%s", want, p.Vars)
		}
	}
	// a: its step's entry shows it in full ("saved as: a")
	if strings.Contains(p.Vars, "  a ") || !strings.Contains(p.Steps, "   saved as: a\n   output: x\n     y\n") {
		t.Errorf("a is not shown once, by its step:\n%s%s", p.Steps, p.Vars)
	}
	// the files: one a step's entry names is left out, another task's
	// stays, and so does one no entry names
	for _, f := range []SessionFile{{Path: "a", Ops: []FileEvent{FileRead}, Size: 4}, {Path: "/srv/other.log", Ops: []FileEvent{FileWritten}, Size: 1}} {
		c.Touch(f)
	}
	if p := c.Parts(0); strings.Contains(p.Files, "read a") || !strings.Contains(p.Files, "written /srv/other.log") {
		t.Errorf("files:\n%s", p.Files)
	}
	c.BeginTask()
	if p := c.Parts(0); !strings.Contains(p.Files, "read a") {
		t.Errorf("an earlier task's file is left out:\n%s", p.Files)
	}
	c.Touch(SessionFile{Path: "/srv/other.log", Ops: []FileEvent{FileRead}, Size: 1})
	if p := c.Parts(0); !strings.Contains(p.Files, "read a") || strings.Count(p.Files, "\n") != 3 {
		t.Errorf("files after a new task:\n%s", p.Files)
	}
	// a step of a second or more keeps its duration
	_ = c.Record(StepRecord{Tool: "execute_command", Params: map[string]any{"command": "sleep 2"}, Status: StatusOK, Duration: 2 * time.Second})
	if p := c.Parts(0); !strings.Contains(p.Steps, "\n4. execute_command [ok, 2000ms]\n") {
		t.Errorf("steps:\n%s", p.Steps)
	}
	// Summary keeps every value, every status and output in full
	if s := c.Summary(0); !strings.Contains(s, "  a = \"x\\ny\\n\"\n") || !strings.HasPrefix(s, "Steps run: 4\n1. read_file [ok, exit 0, 0ms]") ||
		!strings.Contains(s, "output: [ERROR]: no\n     [exit code 1]\n") {
		t.Errorf("Summary:\n%s", s)
	}
	for _, budget := range []int{300, 1000, 4000} {
		if p := c.Parts(budget); len(p.Steps)+len(p.Vars)+len(p.Files) > budget {
			t.Errorf("Parts(%d) is %d bytes", budget, len(p.Steps)+len(p.Vars)+len(p.Files))
		}
	}
}
