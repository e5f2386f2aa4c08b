package safety

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// Known writers and executors: each must stay at least Medium however it
// is wrapped, prefixed or dressed in dialect constructs.
var composeCores = []string{
	"rm -rf ~/important", "xxd -r - ~/.bashrc", "xxd /etc/hosts out.bin", "tee ~/.bashrc", "echo x > ~/.profile",
	"openssl rand -writerand ~/.bashrc 1", "git ls-remote --upload-pack=touch .", "sed -i s/a/b/ f",
	"sed 'e touch x' f", "awk 'BEGIN{system(\"touch x\")}'", "tmux ls \\; new-session touch", "kill -Kill 1",
	"kill -sKILL 1", "cp a ~/.bashrc", "mv a b", "ln -s ~/.bashrc x", "chmod 777 f", "touch f", "mkdir d",
	"sh -c 'touch x'", "bash x.sh", "python3 -c 'open(\"x\",\"w\")'", "perl -e 'unlink \"x\"'", "./x.sh",
	"find . -delete", "find . -exec touch {} +", "date -s 2020-01-01", "date -f ~/.ssh/id_rsa",
	"wc --files0-from=list", "grep -d recurse x ~", "ps eww", "curl -o x http://h/", "dd of=x", "truncate -s0 f",
	"sort -o ~/.bashrc x", "tar -xf x.tar", "git commit -m x", "systemctl restart nginx", "GIT_TRACE=x git version",
	"PATH=/tmp ls", "less -o x /etc/hosts", "vim -es '+!touch x'", "cat /proc/self/cwd/.ssh/id_rsa",
	"cd .ssh && echo k >> authorized_keys", "env -C ~/.ssh cat id_rsa",
}

// Ways to run a command inside another; %s is the core.
var composeWrappers = []string{
	"%s", "env %s", "nice %s", "nice -n 5 %s", "timeout 5 %s", "nohup %s", "command %s", "stdbuf -o0 %s",
	"env -i %s", "env -C /tmp %s", "sh -c '%s'", "bash -c '%s'", "dash -c '%s'", "eval '%s'", "time %s",
	"xargs %s < /dev/null", "exec %s", "builtin %s", "busybox %s", "setsid %s", "flock /tmp/l %s",
	"watch -n1 '%s'", "ionice -c3 %s", "taskset 1 %s", "/usr/bin/env %s", "LANG=C %s",
}

// Dialect constructs and compositions around the (wrapped) command.
var composeDialects = []string{
	"%s", "ls; %s", "%s; ls", "ls && %s", "false || %s", "%s | cat", "cat /etc/hosts | %s", "( %s )", "{ %s; }",
	"$(%s)", "echo $(%s)", "echo `%s`", "if true; then %s; fi", "while false; do :; done; %s",
	"for i in 1; do %s; done", "case x in x) %s;; esac", "f() { %s; }; f", "[[ -n x ]] && %s", "(( 1 )) && %s",
	"let x=1; %s", "alias l=ls; %s", "cd /tmp && %s", "cd /tmp; %s", "x=1; %s", "%s &", "! %s", "%s 2>/dev/null",
	"diff <(%s) /dev/null", "%s <<< x", "echo $'x' && %s", "%s &> /dev/null", "trap '' INT; %s",
	"set -e; %s", "%s\nls", "ls\n%s",
}

// compose builds one command from the lists: core, wrapper, dialect.
func compose(core, wrapper, dialect string) string {
	cmd := strings.Replace(wrapper, "%s", core, 1)
	return strings.Replace(dialect, "%s", cmd, 1)
}

// quoteSafe: a core with single quotes cannot go inside a '…' wrapper
// unchanged; such pairs are skipped.
func quoteSafe(core, wrapper string) bool {
	return !strings.Contains(wrapper, "'") || !strings.Contains(core, "'")
}

// TestComposedWritersStayNotSafe: every known writer or executor, under
// every wrapper and every dialect construct, is at least Medium.
func TestComposedWritersStayNotSafe(t *testing.T) {
	p := DefaultPolicy()
	n := 0
	for _, core := range composeCores {
		if a := p.ClassifyCommand(core); a.Level < Medium {
			t.Errorf("core %q = %s, want at least medium", core, a)
		}
		for _, w := range composeWrappers {
			if !quoteSafe(core, w) {
				continue
			}
			for _, d := range []string{"%s", composeDialects[n%len(composeDialects)]} {
				cmd := compose(core, w, d)
				n++
				if a := p.ClassifyCommand(cmd); a.Level < Medium {
					t.Errorf("%q = %s, want at least medium", cmd, a)
				}
			}
		}
		for _, d := range composeDialects {
			cmd := compose(core, "%s", d)
			n++
			if a := p.ClassifyCommand(cmd); a.Level < Medium {
				t.Errorf("%q = %s, want at least medium", cmd, a)
			}
		}
	}
	t.Logf("%d compositions", n)
}

// FuzzComposedWriters composes a known writer or executor with wrappers
// and dialect constructs chosen by the fuzzer, nested up to three deep,
// and fails if the result is rated below Medium. It also checks that a
// command without bash-only syntax reads the same to both parsers (the
// POSIX pass is skipped for it).
func FuzzComposedWriters(f *testing.F) {
	f.Add([]byte{0, 0, 0})
	f.Add([]byte{3, 10, 17, 2, 5})
	f.Add([]byte{40, 11, 30, 7, 19, 22, 1})
	p := DefaultPolicy()
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		core := composeCores[int(b[0])%len(composeCores)]
		cmd := core
		for i := 1; i+1 < len(b) && i < 7; i += 2 {
			w := composeWrappers[int(b[i])%len(composeWrappers)]
			if strings.Contains(w, "'") && strings.Contains(cmd, "'") {
				w = "%s"
			}
			d := composeDialects[int(b[i+1])%len(composeDialects)]
			if strings.Contains(d, "`") && strings.Contains(cmd, "`") {
				d = "$(%s)" // unescaped backquotes do not nest
			}
			cmd = compose(cmd, w, d)
		}
		a := p.ClassifyCommand(cmd)
		if a.Level < Medium {
			t.Fatalf("%q = %s, want at least medium (core %q)", cmd, a, core)
		}
		f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
		if err != nil || hasBashOnly(f) {
			return
		}
		px := p.classifyAs(ParseCommand(cmd), "", syntax.LangPOSIX, nil).a
		if px.Level > a.Level {
			t.Fatalf("%q: POSIX reading %s is worse than %s, but the POSIX pass was skipped", cmd, px, a)
		}
	})
}
