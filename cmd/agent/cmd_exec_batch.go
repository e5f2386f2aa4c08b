package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/autoshell/agent/statedir"
)

// runExecBatch is `agent exec -i INVENTORY [--limit PAT] [--forks N]
// [run's flags] -- COMMAND…`: the command on every selected host, as a
// one-step plan of execute_command (Ansible's `ansible PATTERN -m shell
// -a CMD`). Unlike exec on one host, the command goes through the same
// safety check, approvals, audit, journal, --json, --out, progress and
// summary as any plan: it runs unattended on many hosts. The plan is
// written to agent's state directory (exec/SHA.yaml), so that agent
// resume finds it again.
func runExecBatch(ctx context.Context, a *app, flags, command []string) error {
	plan := map[string]any{
		"name": "exec",
		"phases": []map[string]any{{
			"phase": 1,
			"goal":  "run the command on every host",
			"steps": []map[string]any{{
				"tool":        "execute_command",
				"description": "agent exec",
				"parameters":  map[string]any{"command": strings.Join(command, " ")},
			}},
		}},
	}
	b, err := yaml.Marshal(plan)
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	dir, err := statedir.Dir()
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	p := filepath.Join(dir, "exec", hex.EncodeToString(sum[:8])+".yaml")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	if old, err := os.ReadFile(p); err != nil || string(old) != string(b) {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			return fmt.Errorf("exec: %w", err)
		}
	}
	return runRun(ctx, a, append(append([]string(nil), flags...), p))
}

// isInventoryFlag reports whether arg gives an inventory (-i, --inventory).
func isInventoryFlag(arg string) bool {
	return arg == "-i" || arg == "--inventory" || strings.HasPrefix(arg, "--inventory=") || strings.HasPrefix(arg, "-i=") ||
		len(arg) > 2 && strings.HasPrefix(arg, "-i") && !strings.HasPrefix(arg, "--")
}
