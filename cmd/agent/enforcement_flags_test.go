package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
)

// TestEnforcementFlagsReachThePolicy: --require-enforcement and
// --keep-launcher, and the config's require_enforcement and keep_launcher,
// each turn their setting on; neither is on by default (nothing stays on
// a host unless the operator asks).
func TestEnforcementFlagsReachThePolicy(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir) // no config file there
	cfg := filepath.Join(dir, "on.yaml")
	if err := os.WriteFile(cfg, []byte("safety:\n  require_enforcement: true\n  keep_launcher: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		args       []string
		config     string
		keep, reqd bool
	}{
		{"defaults", nil, "", false, false},
		{"flags", []string{"--keep-launcher", "--require-enforcement"}, "", true, true},
		{"keep flag alone", []string{"--keep-launcher"}, "", true, false},
		{"config", nil, cfg, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &app{config: c.config}
			fs := pflag.NewFlagSet("agent", pflag.ContinueOnError)
			addEnforcementFlags(fs, a)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			p, err := a.loadPolicy()
			if err != nil {
				t.Fatal(err)
			}
			if p.KeepLauncher != c.keep || p.RequireEnforcement != c.reqd {
				t.Errorf("keep_launcher %v, require_enforcement %v; want %v, %v", p.KeepLauncher, p.RequireEnforcement, c.keep, c.reqd)
			}
		})
	}
}
