package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestEnforcementFlagsReachThePolicy: --require-enforcement and
// --ephemeral, and the config's require_enforcement and
// ephemeral_launcher, each turn their setting on; neither is on by default
// (the launcher is kept on hosts). --keep-launcher, the default, overrides
// the config's ephemeral_launcher, and contradicts --ephemeral.
func TestEnforcementFlagsReachThePolicy(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir) // no config file there
	cfg := filepath.Join(dir, "on.yaml")
	if err := os.WriteFile(cfg, []byte("safety:\n  require_enforcement: true\n  ephemeral_launcher: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name            string
		args            []string
		config          string
		ephemeral, reqd bool
		err             string
	}{
		{"defaults", nil, "", false, false, ""},
		{"flags", []string{"--ephemeral", "--require-enforcement"}, "", true, true, ""},
		{"ephemeral flag alone", []string{"--ephemeral"}, "", true, false, ""},
		{"keep flag alone", []string{"--keep-launcher"}, "", false, false, ""},
		{"config", nil, cfg, true, true, ""},
		{"keep flag over config", []string{"--keep-launcher"}, cfg, false, true, ""},
		{"both flags", []string{"--keep-launcher", "--ephemeral"}, "", false, false, "contradict"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &app{config: c.config}
			fs := pflag.NewFlagSet("agent", pflag.ContinueOnError)
			addEnforcementFlags(fs, a)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			p, err := a.loadPolicy()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.EphemeralLauncher != c.ephemeral || p.RequireEnforcement != c.reqd {
				t.Errorf("ephemeral_launcher %v, require_enforcement %v; want %v, %v", p.EphemeralLauncher, p.RequireEnforcement, c.ephemeral, c.reqd)
			}
		})
	}
}
