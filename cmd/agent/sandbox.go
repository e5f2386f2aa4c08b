package main

import (
	"github.com/spf13/pflag"

	"github.com/autoshell/agent/confine"
	"github.com/autoshell/agent/safety"
)

// sandboxFlags are --sandbox[=MODE] and --allow-net: the operator's own
// confinement of every command (issue 14 §2), over the config's
// safety.sandbox section. Its extra writable paths are --allow-write's
// (limitOptions): one list.
type sandboxFlags struct {
	mode     string
	allowNet bool
}

func (f *sandboxFlags) add(fs *pflag.FlagSet) {
	if fs.Lookup("sandbox") != nil {
		return
	}
	fs.StringVar(&f.mode, "sandbox", f.mode, "run every command, approved ones too, under Linux Landlock: writes only under the working directory, the temp directory and --allow-write's paths; no network unless --allow-net. `MODE`: on, strict (reads limited too), best-effort (a host without Landlock runs unconfined, with a warning)")
	fs.Lookup("sandbox").NoOptDefVal = safety.SandboxOn
	fs.BoolVar(&f.allowNet, "allow-net", f.allowNet, "with --sandbox, allow TCP connections")
}

// apply sets the flags over the policy's sandbox; flags that need
// --sandbox without it are a usage error, as is a mode agent does not
// know, or --sandbox on this machine when its kernel has no Landlock
// (for SSH hosts that is known when each host is opened).
func (f *sandboxFlags) apply(p *safety.Policy, local bool) error {
	if f.mode != "" {
		if err := safety.CheckSandboxMode(f.mode); err != nil {
			return usagef("--sandbox: %w", err)
		}
		p.Sandbox.Mode = f.mode
	}
	if f.allowNet {
		if !p.Sandbox.On() {
			return usagef("--allow-net needs --sandbox (or safety.sandbox.mode in the config)")
		}
		p.Sandbox.AllowNet = true
	}
	if local && p.Sandbox.On() && p.Sandbox.Mode != safety.SandboxBestEffort && confine.ABI() < 1 {
		return usagef("--sandbox: kernel %s has no Landlock, so commands cannot be confined; --sandbox=best-effort runs them unconfined", confine.KernelRelease())
	}
	return nil
}
