package engine

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoshell/agent/inventory"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// TestSSHArgsMatchSSH: ansible_ssh_common_args (and _extra_args,
// _args) apply as they do on ssh's command line: each host's settings
// equal `ssh -G -F CONFIG WORDS… DEST`, DEST being ansible_host.
func TestSSHArgsMatchSSH(t *testing.T) {
	bin, err := exec.LookPath("ssh")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("ssh is missing and CI=true")
		}
		t.Skip("ssh is missing")
	}
	dir := t.TempDir()
	sshConfig := filepath.Join(dir, "ssh_config")
	writeInvFile(t, sshConfig, "Host *.internal\n  User cfguser\n  Port 2200\n  ProxyJump cfgjump\n")
	args := map[string]string{
		"a": `-o ProxyJump=bastion.example.com -o StrictHostKeyChecking=no`,
		"b": `-J u@j1:2201,j2 -p 2022 -l deploy`,
		"c": `-o 'UserKnownHostsFile=/tmp/kh' -i /keys/c -o ConnectTimeout=9 -C -o ControlPersist=60s -o ControlMaster=auto`,
		"d": `-oPort=2023 -oUser=first -o User=second`,
		"e": `-o "ProxyCommand=none"`,
	}
	var ini strings.Builder
	ini.WriteString("[all]\n")
	for _, h := range []string{"a", "b", "c", "d", "e"} {
		ini.WriteString(h + " ansible_host=" + h + ".internal ansible_ssh_common_args=\"" + strings.ReplaceAll(args[h], `"`, `\"`) + "\"\n")
	}
	inv := filepath.Join(dir, "hosts")
	writeInvFile(t, inv, ini.String())
	hosts, err := SelectHosts(InventorySpec{Sources: []string{inv}}, "", SSHOverrides{ConfigFile: sshConfig})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts {
		words, err := inventory.SplitArgs(args[h.Name])
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, append(append([]string{"-G", "-F", sshConfig}, words...), h.Name+".internal")...)
		cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("ssh -G %v: %v", words, err)
		}
		want := map[string]string{}
		for _, l := range strings.Split(string(out), "\n") {
			k, v, _ := strings.Cut(l, " ")
			if _, seen := want[k]; !seen || k == "identityfile" {
				want[k] += v + ";"
			}
		}
		var b bytes.Buffer
		if err := sshtr.WriteConfig(&b, h.SSH); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
			k, v, _ := strings.Cut(l, " ")
			got[k] += v + ";"
		}
		for _, k := range []string{"user", "hostname", "port", "proxyjump", "stricthostkeychecking", "userknownhostsfile", "connecttimeout"} {
			if got[k] != want[k] {
				t.Errorf("%s (%s): %s: agent %q, ssh -G %q", h.Name, args[h.Name], k, got[k], want[k])
			}
		}
		if h.Name == "c" && !strings.HasPrefix(got["identityfile"], "/keys/c;") {
			t.Errorf("c: identityfile %q, want /keys/c first", got["identityfile"])
		}
	}
	warns := strings.Join(InventoryWarnings(hosts), "\n")
	for _, w := range []string{"ansible_ssh_common_args: agent does not act on -C, -o ControlPersist=60s (host c)"} {
		if !strings.Contains(warns, w) {
			t.Errorf("warnings %q lack %q", warns, w)
		}
	}
}

// TestInventoryWarnings: every ansible_* variable agent does not act on
// gets one warning naming it and its hosts (the become settings it acts
// on are not named); plain variables are no concern.
func TestInventoryWarnings(t *testing.T) {
	dir := t.TempDir()
	inv := filepath.Join(dir, "hosts")
	writeInvFile(t, inv, "[web]\nw[1:7] ansible_python_interpreter=/usr/bin/python3\nx1 ansible_ssh_timeout=5 ansible_become_user=app role=db ansible_password=pw\n")
	hosts, err := SelectHosts(InventorySpec{Sources: []string{inv}}, "", SSHOverrides{ConfigFile: "none"})
	if err != nil {
		t.Fatal(err)
	}
	got := InventoryWarnings(hosts)
	want := []string{
		"inventory variable ansible_password: agent does not act on it (host x1)",
		"inventory variable ansible_python_interpreter: agent does not act on it (hosts w1, w2, w3, w4, w5 and 2 more)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, h := range hosts {
		if h.Name == "x1" && h.SSH.ConnectTimeout.Seconds() != 5 {
			t.Errorf("x1: ansible_ssh_timeout=5 gave ConnectTimeout %s", h.SSH.ConnectTimeout)
		}
	}
}

// TestBadSSHArgs: args ssh would not take, or that do not split, refuse
// the selection naming the host, variable and file:line.
func TestBadSSHArgs(t *testing.T) {
	for _, bad := range []string{
		`"-o ProxyJump=x`, `-o`, `web01`, `-Z`, `-o Host=x`, `-o Port=none`, `-p`, `-- -o User=x`,
	} {
		dir := t.TempDir()
		inv := filepath.Join(dir, "hosts")
		writeInvFile(t, inv, "[g]\nh1\n[g:vars]\nansible_ssh_extra_args='"+bad+"'\n")
		_, err := SelectHosts(InventorySpec{Sources: []string{inv}}, "", SSHOverrides{ConfigFile: "none"})
		if !errors.As(err, new(ConfigError)) || !strings.Contains(err.Error(), "h1") {
			t.Errorf("%q: %v; want a ConfigError naming the host", bad, err)
		}
	}
}

func FuzzParseSSHArgs(f *testing.F) {
	for _, s := range []string{`-o ProxyJump=a -J b -i k -p 22 -l u`, `-oUser=x -C -A`, `'unclosed`, `-L 1:a:2 -v`, `-o "ProxyCommand=ssh -W %h:%p j"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		opts, _, err := parseSSHArgs(s)
		if err != nil {
			return
		}
		// What parses must either resolve or be refused by the config
		// reader with an error, never a panic.
		_, _ = sshtr.Resolve("h", sshtr.ResolveOptions{ConfigFile: "none", Options: opts, Home: t.TempDir(), LocalUser: "u"})
	})
}
