package safety

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestLoadPolicyMerges(t *testing.T) {
	p, err := LoadPolicy(strings.NewReader(`
commands:
  mytool: safe
  docker: {level: high, reason: production containers}
flags:
  mytool:
    --wipe: {level: high, reason: wipes the database}
subcommands:
  systemctl:
    stop: medium
system_roots: [/etc, /srv/prod]
max_read_bytes: 1MB
max_write_bytes: 2048
refuse_binary: false
require_enforcement: true
keep_launcher: false
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cmd  string
		want Level
	}{
		{"mytool --list", Safe},
		{"mytool --wipe", High},
		{"docker ps", High}, // the command's rule is a floor for its subcommands
		{"systemctl stop nginx", Medium},
		{"systemctl disable nginx", High}, // other defaults kept
		{"echo x > /srv/prod/app.conf", High},
		{"echo x > /usr/x", Medium}, // system_roots replaced
		{"sudo ls", High},
	} {
		if got := p.ClassifyCommand(tc.cmd); got.Level != tc.want {
			t.Errorf("%q = %s, want %s", tc.cmd, got, tc.want)
		}
	}
	if p.MaxReadBytes != 1<<20 || p.MaxWriteBytes != 2048 || p.RefuseBinary || !p.RequireEnforcement || !p.EphemeralLauncher {
		t.Errorf("scalars = %d %d %v %v %v", p.MaxReadBytes, p.MaxWriteBytes, p.RefuseBinary, p.RequireEnforcement, p.EphemeralLauncher)
	}
	if d := DefaultPolicy(); d.EphemeralLauncher || d.RequireEnforcement {
		t.Error("by default the launcher is kept and enforcement is not required")
	}
	if d := DefaultPolicy(); d.Commands["mytool"] != (Rule{}) || len(d.SystemRoots) < 10 {
		t.Error("LoadPolicy changed the defaults")
	}
}

func TestLoadPolicyEmpty(t *testing.T) {
	p, err := LoadPolicy(strings.NewReader(""))
	if err != nil || p.MaxReadBytes != 10<<20 {
		t.Fatalf("empty policy = %v, %v", p.MaxReadBytes, err)
	}
}

func TestLoadPolicyErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"commands:\n  ls: safe\nbogus: 1\n", "line 3"},
		{"commands:\n  ls: dangerous\n", "line 2"},
		{"flags:\n  rm:\n    -r: {level: high, why: x}\n", "line 3"},
		{"max_read_bytes: lots\n", "line 1"},
		{"wrappers:\n  sudo: {skip: 1, bogus: 2}\n", "line 2"},
		{"system_roots: /etc\n", "line 1"},
		{"commands: [\n", "line"},
	} {
		_, err := LoadPolicy(strings.NewReader(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadPolicy(%q) error = %v, want one naming %q", tc.yaml, err, tc.want)
		}
	}
}

func TestLevelText(t *testing.T) {
	for _, l := range []Level{Safe, Medium, High} {
		var back Level
		b, _ := l.MarshalText()
		if err := back.UnmarshalText(b); err != nil || back != l {
			t.Errorf("%v round trip = %v, %v", l, back, err)
		}
	}
	if !(Safe < Medium && Medium < High) {
		t.Error("levels out of order")
	}
	if _, err := ParseLevel("severe"); err == nil {
		t.Error("ParseLevel accepted severe")
	}
}

func TestLoadConfigPolicy(t *testing.T) {
	cfg := "llm:\n  model: x\nsafety:\n  max_read_bytes: 1MB\n  system_roots: [/etc, /srv]\n"
	p, other, err := LoadConfigPolicy(strings.NewReader(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if p.MaxReadBytes != 1<<20 || len(p.SystemRoots) != 2 || p.SystemRoots[1] != "/srv" {
		t.Errorf("policy not merged: %d %v", p.MaxReadBytes, p.SystemRoots)
	}
	if n, ok := other["llm"]; !ok || n.Kind != yaml.MappingNode || n.Line != 2 {
		t.Errorf("other sections = %v", other)
	}
	if p.Commands["ls"] != DefaultPolicy().Commands["ls"] {
		t.Errorf("defaults lost")
	}
	_, _, err = LoadConfigPolicy(strings.NewReader("safety:\n  max_read_bytes: 1MB\n  sytem_roots: [/x]\n"))
	if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "sytem_roots") {
		t.Errorf("typo in the safety section: %v, want an error at line 3", err)
	}
	if p, other, err := LoadConfigPolicy(strings.NewReader("")); err != nil || other != nil || p.MaxReadBytes != DefaultPolicy().MaxReadBytes {
		t.Errorf("empty config: %v %v", other, err)
	}
}

// TestLauncherKeys: ephemeral_launcher, and keep_launcher its older
// spelling (false is ephemeral), act; both, disagreeing, is an error.
func TestLauncherKeys(t *testing.T) {
	for _, tc := range []struct {
		doc       string
		ephemeral bool
		err       string
	}{
		{"", false, ""},
		{"ephemeral_launcher: true", true, ""},
		{"keep_launcher: false", true, ""},
		{"keep_launcher: true", false, ""},
		{"keep_launcher: false\nephemeral_launcher: true", true, ""},
		{"keep_launcher: true\nephemeral_launcher: true", false, "disagree"},
	} {
		p, err := LoadPolicy(strings.NewReader(tc.doc))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.doc, err, tc.err)
			}
			continue
		}
		if err != nil || p.EphemeralLauncher != tc.ephemeral {
			t.Errorf("%q: ephemeral %v, err %v; want %v", tc.doc, p.EphemeralLauncher, err, tc.ephemeral)
		}
		_, _, err = LoadConfigPolicy(strings.NewReader("safety:\n  " + strings.ReplaceAll(tc.doc, "\n", "\n  ") + "\n"))
		if err != nil && tc.doc != "" {
			t.Errorf("config %q: %v", tc.doc, err)
		}
	}
}
