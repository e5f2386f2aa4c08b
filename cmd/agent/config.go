package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/safety"
)

// configPath is --config, else $XDG_CONFIG_HOME/agent/config.yaml (an
// absolute XDG_CONFIG_HOME only, as the XDG spec says), else
// ~/.config/agent/config.yaml.
func (a *app) configPath() (path string, explicit bool, err error) {
	if a.config != "" {
		return a.config, true, nil
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "agent", "config.yaml"), false, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", false, fmt.Errorf("config: %w", err)
	}
	return filepath.Join(home, ".config", "agent", "config.yaml"), false, nil
}

// loadPolicy returns the safety policy: the defaults with the config file's
// "safety:" section merged over them. A missing default config file means
// the defaults; a file named by --config must exist. Any mistake in the file
// is a usage error (exit 2): nothing runs on a policy that was misread.
//
// The config's `limits:` section and --allow-write/--read-only are put in
// the policy (AllowWrite, OnlySafe), which every front end hands to the
// engine.
func (a *app) loadPolicy() (safety.Policy, error) {
	p, _, err := a.loadConfig()
	return p, err
}

// loadConfig reads the config file's sections: the safety policy (see
// loadPolicy) and the "llm:" section (nil when absent). An unknown section
// is a usage error.
func (a *app) loadConfig() (safety.Policy, *llm.FileConfig, error) {
	p, lc, _, err := a.loadSections()
	return p, lc, err
}

// loadSections reads the config file (readSections) and applies its limits
// and the limit flags to the policy.
func (a *app) loadSections() (safety.Policy, *llm.FileConfig, *engine.BecomeFile, error) {
	p, lc, bf, lf, err := a.readSections()
	if err != nil {
		return p, lc, bf, err
	}
	if err := applyLimits(&p, lf, a.task.limits); err != nil {
		return p, lc, bf, err
	}
	return p, lc, bf, nil
}

// readSections reads every section of the config file: safety, llm,
// become and limits (empty when absent).
func (a *app) readSections() (_ safety.Policy, _ *llm.FileConfig, _ *engine.BecomeFile, lf limitsFile, _ error) {
	bf := &engine.BecomeFile{}
	path, explicit, err := a.configPath()
	if err != nil {
		return safety.Policy{}, nil, nil, lf, usageError{err}
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		p := safety.DefaultPolicy()
		p.RequireEnforcement = a.requireEnforcement
		if err := a.launcherFlags(&p); err != nil {
			return safety.Policy{}, nil, nil, lf, err
		}
		if err := a.sandbox.apply(&p, a.host.sshHost == ""); err != nil {
			return safety.Policy{}, nil, nil, lf, err
		}
		return p, nil, bf, lf, nil
	}
	if err != nil {
		return safety.Policy{}, nil, nil, lf, usagef("config: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return safety.Policy{}, nil, nil, lf, usagef("config: %w", err)
	}
	if err := safety.CheckPolicyFile(path, fi); err != nil {
		return safety.Policy{}, nil, nil, lf, usagef("config: %w", err)
	}
	p, other, err := safety.LoadConfigPolicy(f)
	if err != nil {
		return safety.Policy{}, nil, nil, lf, usagef("config %s: %w", path, err)
	}
	names := make([]string, 0, len(other))
	for name := range other {
		names = append(names, name)
	}
	sort.Strings(names)
	var lc *llm.FileConfig
	for _, name := range names {
		n := other[name]
		switch name {
		case "llm":
			if lc, err = llm.DecodeFileConfig(&n); err != nil {
				return safety.Policy{}, nil, nil, lf, usagef("config %s: %w", path, err)
			}
		case "become":
			if bf, err = engine.DecodeBecomeFile(&n); err != nil {
				return safety.Policy{}, nil, nil, lf, usagef("config %s: %w", path, err)
			}
		case "limits":
			if lf, err = decodeLimitsFile(&n); err != nil {
				return safety.Policy{}, nil, nil, lf, usagef("config %s: %w", path, err)
			}
		default:
			return safety.Policy{}, nil, nil, lf, usagef("config %s:%d: unknown section %q (known: safety, llm, become, limits)", path, n.Line, name)
		}
	}
	if a.requireEnforcement {
		p.RequireEnforcement = true
	}
	if err := a.launcherFlags(&p); err != nil {
		return safety.Policy{}, nil, nil, lf, err
	}
	if err := a.sandbox.apply(&p, a.host.sshHost == ""); err != nil {
		return safety.Policy{}, nil, nil, lf, err
	}
	return p, lc, bf, lf, nil
}

// launcherFlags applies --ephemeral and --keep-launcher over the config's
// ephemeral_launcher: either flag wins; both is a usage error.
func (a *app) launcherFlags(p *safety.Policy) error {
	switch {
	case a.ephemeral && a.keepLauncher:
		return usagef("--ephemeral and --keep-launcher contradict each other")
	case a.ephemeral:
		p.EphemeralLauncher = true
	case a.keepLauncher:
		p.EphemeralLauncher = false
	}
	return nil
}
