package safety

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckPath(t *testing.T) {
	const home = "/home/ops"
	p := DefaultPolicy()
	for _, tc := range []struct {
		op       FileOp
		path     string
		want     Level
		resolved string // "" when refused
		reason   string
	}{
		{FileRead, "notes.txt", Safe, "/home/ops/notes.txt", ""},
		{FileRead, "~/app/config.ini", Safe, "/home/ops/app/config.ini", ""},
		{FileRead, "/etc/hosts", Safe, "/etc/hosts", ""},
		{FileRead, "/var/log/syslog", Safe, "/var/log/syslog", ""},
		{FileRead, "/etc/shadow", High, "/etc/shadow", "sensitive"},
		{FileRead, "/etc/sudoers.d/ops", High, "/etc/sudoers.d/ops", "sensitive"},
		{FileRead, "~/.ssh/id_rsa", High, "/home/ops/.ssh/id_rsa", "sensitive"},
		{FileRead, ".ssh/id_ed25519", High, "/home/ops/.ssh/id_ed25519", "sensitive"},
		{FileRead, "/home/alice/.ssh/id_ecdsa", High, "/home/alice/.ssh/id_ecdsa", "sensitive"},
		{FileRead, "/srv/tls/server.key", High, "/srv/tls/server.key", "sensitive"},
		{FileRead, "/etc/ssh/ssh_host_ed25519_key", High, "/etc/ssh/ssh_host_ed25519_key", "sensitive"},
		{FileRead, "~/.aws/credentials", High, "/home/ops/.aws/credentials", "sensitive"},
		{FileRead, "/proc/1/environ", High, "/proc/1/environ", "sensitive"},
		{FileRead, "~/.ssh/known_hosts", Safe, "/home/ops/.ssh/known_hosts", ""},
		{FileWrite, "out.txt", Medium, "/home/ops/out.txt", "writes a file"},
		{FileWrite, "/tmp/x.log", Medium, "/tmp/x.log", "writes a file"},
		{FileEdit, "~/app/config.ini", Medium, "/home/ops/app/config.ini", "writes a file"},
		{FileWrite, "/etc/hosts", High, "/etc/hosts", "system path"},
		{FileEdit, "/etc/nginx/nginx.conf", High, "/etc/nginx/nginx.conf", "system path"},
		{FileWrite, "/boot/grub/grub.cfg", High, "/boot/grub/grub.cfg", "system path"},
		{FileWrite, "/usr/local/bin/tool", High, "/usr/local/bin/tool", "system path"},
		{FileWrite, "/root/.bashrc", High, "/root/.bashrc", "system path"},
		{FileWrite, "/sys/kernel/x", High, "/sys/kernel/x", "system path"},
		{FileWrite, "/proc/sys/vm/drop_caches", High, "/proc/sys/vm/drop_caches", "system path"},
		{FileWrite, "/dev/sda", High, "/dev/sda", "system path"},
		{FileWrite, "/var/lib/dpkg/status", High, "/var/lib/dpkg/status", "system path"},
		{FileWrite, "~/.ssh/authorized_keys", High, "/home/ops/.ssh/authorized_keys", "protected"},
		{FileEdit, "~/.bashrc", High, "/home/ops/.bashrc", "protected"},
		{FileWrite, "/", High, "/", "system path"},
		{FileWrite, "/var", High, "/var", "system path"},
		{FileWrite, "/etcetera/x", Medium, "/etcetera/x", ""},
		{FileWrite, "a/../b.txt", Medium, "/home/ops/b.txt", ""},
		{FileRead, "~", Safe, "/home/ops", ""},
		// Refused outright.
		{FileRead, "../etc/passwd", Safe, "", ".."},
		{FileWrite, "~/../../etc/passwd", Safe, "", ".."},
		{FileWrite, "a/../../x", Safe, "", ".."},
		{FileRead, "/var/www/../../etc/shadow", Safe, "", ".."},
		{FileRead, "", Safe, "", "empty"},
		{FileRead, "x\x00y", Safe, "", "NUL"},
		{FileRead, "~bob/x", Safe, "", "~user"},
	} {
		resolved, got, err := p.CheckPath(tc.op, tc.path, home)
		if tc.resolved == "" {
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("CheckPath(%s, %q) = %q, %v, want refused with %q", tc.op, tc.path, resolved, err, tc.reason)
			}
			continue
		}
		if err != nil {
			t.Errorf("CheckPath(%s, %q): %v", tc.op, tc.path, err)
			continue
		}
		if resolved != tc.resolved || got.Level != tc.want ||
			!strings.Contains(strings.Join(got.Reasons, "\n"), tc.reason) {
			t.Errorf("CheckPath(%s, %q) = %q, %s, want %q, %s (%q)", tc.op, tc.path, resolved, got, tc.resolved,
				tc.want, tc.reason)
		}
	}
}

func TestCheckPathRootHome(t *testing.T) {
	// root's home is a system root: every write there is High.
	_, a, err := DefaultPolicy().CheckPath(FileWrite, "notes.txt", "/root")
	if err != nil || a.Level != High {
		t.Errorf("write ~/notes.txt with home /root = %s, %v, want high", a, err)
	}
	if _, _, err := DefaultPolicy().CheckPath(FileRead, "x", "relative/home"); !errors.Is(err, ErrRefused) {
		t.Errorf("relative home: err = %v, want ErrRefused", err)
	}
}

func TestClassifyFile(t *testing.T) {
	p := DefaultPolicy()
	for _, tc := range []struct {
		op   FileOp
		path string
		want Level
	}{
		{FileRead, "~/.ssh/id_rsa", High},
		{FileWrite, "~/.ssh/config", High},
		{FileWrite, "~/project/main.go", Medium},
		{FileRead, "relative.txt", High},
		{FileOp(9), "/tmp/x", High},
	} {
		if got := p.ClassifyFile(tc.op, tc.path); got.Level != tc.want {
			t.Errorf("ClassifyFile(%s, %q) = %s, want %s", tc.op, tc.path, got, tc.want)
		}
	}
}

func TestCheckSizeAndContent(t *testing.T) {
	p := DefaultPolicy()
	if err := p.CheckSize(FileRead, 10<<20); err != nil {
		t.Errorf("10 MB read: %v", err)
	}
	if err := p.CheckSize(FileRead, 10<<20+1); !errors.Is(err, ErrTooLarge) {
		t.Errorf("10 MB + 1 read: %v, want ErrTooLarge", err)
	}
	if err := p.CheckSize(FileWrite, 11<<20); !errors.Is(err, ErrTooLarge) {
		t.Errorf("11 MB write: %v, want ErrTooLarge", err)
	}
	elf := []byte("\x7fELF\x02\x01\x01\x00\x00")
	if err := p.CheckContent(FileEdit, elf); !errors.Is(err, ErrBinary) {
		t.Errorf("edit ELF: %v, want ErrBinary", err)
	}
	if err := p.CheckContent(FileRead, elf); err != nil {
		t.Errorf("read ELF: %v", err)
	}
	if err := p.CheckContent(FileEdit, []byte("héllo wörld\n")); err != nil {
		t.Errorf("edit text: %v", err)
	}
	if !IsBinary([]byte{0xff, 0xfe, 'a', 'b', 'c'}) || IsBinary([]byte("ok \xe2\x82")) {
		t.Error("IsBinary: invalid UTF-8 must be binary, a rune cut at the end not")
	}
	p.RefuseBinary = false
	if err := p.CheckContent(FileEdit, elf); err != nil {
		t.Errorf("edit ELF with RefuseBinary off: %v", err)
	}
}

// TestOwnDirsProtected: a step cannot rewrite agent's own config (its
// safety policy) or state (audit log, undo journal), in the default or the
// XDG-overridden places, with a file tool or a shell redirection.
func TestOwnDirsProtected(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/srv/cfg")
	t.Setenv("XDG_STATE_HOME", "/srv/state")
	p := DefaultPolicy()
	home := "/home/ops"
	for _, file := range []string{"~/.config/agent/config.yaml", "/home/ops/.config/agent/config.yaml",
		"~/.local/state/agent/audit.log", "~/.local/state/agent/sessions/x/journal.json",
		"/srv/cfg/agent/config.yaml", "/srv/state/agent/audit.log", "~/.config/agent"} {
		for _, op := range []FileOp{FileWrite, FileEdit} {
			_, a, err := p.CheckPath(op, file, home)
			if err != nil || a.Level != High || !strings.Contains(a.String(), "agent's own configuration") {
				t.Errorf("CheckPath(%s, %q) = %s, %v, want high (agent's own configuration or state)", op, file, a, err)
			}
		}
	}
	for _, cmd := range []string{`printf 'safety: {commands: {rm: safe}}' > ~/.config/agent/config.yaml`,
		`echo x >> ~/.local/state/agent/audit.log`, `tee /srv/cfg/agent/config.yaml`,
		`sed -i 's/high/safe/' /srv/state/agent/audit.log`, `rm ~/.local/state/agent/audit.log`} {
		if a := p.ClassifyCommand(cmd); a.Level != High {
			t.Errorf("ClassifyCommand(%q) = %s, want high", cmd, a)
		}
	}
	// Neighbours stay medium; reading agent's state is high (issue 13: the
	// kernel denies it to safe steps too).
	for _, file := range []string{"~/.config/agentx/a", "/srv/cfg/other/x", "~/.local/state/other"} {
		if _, a, _ := p.CheckPath(FileWrite, file, home); a.Level != Medium {
			t.Errorf("CheckPath(write, %q) = %s, want medium", file, a)
		}
	}
	if _, a, _ := p.CheckPath(FileRead, "~/.local/state/agent/audit.log", home); a.Level != High {
		t.Errorf("reading the audit log = %s, want high", a)
	}
}
