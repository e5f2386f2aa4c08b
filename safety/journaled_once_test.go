package safety

import (
	"strings"
	"testing"
)

// TestUndoableOnlyOnceDirectly: a rule marked undoable (rm -r, chmod -R)
// is lowered to medium only when the command it rates runs once,
// directly, where the classifier took its operands to be. Anything that
// may run it again (watch, xargs, loops, functions), later (nohup, a
// background job, trap), alongside another command (a pipeline, a
// process substitution) or somewhere the journal did not look (a cd it
// cannot follow, a container) keeps it high, and says why.
func TestUndoableOnlyOnceDirectly(t *testing.T) {
	p := DefaultPolicy()
	lowered := []string{
		"rm -r ~/d",
		"rm -rf ~/d && echo done",
		"rm -rf ~/d || echo failed",
		"rm -rf ~/d; rm -rf ~/e",
		"(rm -rf ~/d)",
		"{ rm -rf ~/d; }",
		"if test -d ~/d; then rm -r ~/d; fi",
		"case x in x) rm -r ~/d;; esac",
		"! rm -r ~/d",
		"rm -r ~/d 2>/dev/null",
		"echo $(rm -r ~/d)",
		"cd /tmp && rm -r d",
		"cd ~/src && rm -r build",
		"cd ./src && rm -r build",
		"(cd x) ; rm -r ~/d",
		"(cd \"$X\"); rm -r ~/d",
		"chmod -R u+w ~/d",
	}
	for _, cmd := range lowered {
		an := p.Analyze(cmd, "/home/u")
		if an.Level != High || an.IfJournaled.Level != Medium {
			t.Errorf("%q: %v, if journaled %v, want high lowered to medium", cmd, an.Assessment, an.IfJournaled)
		}
	}
	high := map[string]string{
		"watch -n1 'rm -rf ~/important'":                       "watch runs it",
		"watch -n1 rm -rf ~/important":                         "watch runs it",
		"while true; do rm -rf ~/important; done":              "in a loop",
		"until false; do rm -rf ~/important; done":             "in a loop",
		"while rm -rf ~/important; do :; done":                 "in a loop",
		"for i in 1 2; do rm -rf ~/important; done":            "in a loop",
		"for ((;;)); do rm -rf ~/important; done":              "in a loop",
		"select x in a; do rm -rf ~/important; done":           "in a loop",
		"for x in $(rm -rf ~/important); do :; done":           "in a loop",
		"echo ~/important | xargs rm -rf":                      "stage of a pipeline",
		"xargs rm -rf < list":                                  "xargs runs it",
		"find ~ -maxdepth 1 -name important -exec rm -rf {} +": "find -exec",
		"find ~/important -execdir rm -rf {} ;":                "find -execdir",
		"timeout 100 rm -rf ~/important":                       "timeout runs it",
		"nohup rm -rf ~/important":                             "nohup runs it",
		"nohup rm -rf ~/important &":                           "background job",
		"env rm -rf ~/important":                               "env runs it",
		"env A=1 rm -rf ~/important":                           "env runs it",
		"nice rm -rf ~/important":                              "nice runs it",
		"ionice -c3 rm -rf ~/important":                        "ionice runs it",
		"stdbuf -o0 rm -rf ~/important":                        "stdbuf runs it",
		"setsid rm -rf ~/important":                            "setsid runs it",
		"sudo rm -rf ~/important":                              "sudo runs it",
		"doas rm -rf ~/important":                              "doas runs it",
		"su -c 'rm -rf ~/important'":                           "su runs it",
		"flock /tmp/l rm -rf ~/important":                      "flock runs it",
		"flock /tmp/l -c 'rm -rf ~/important'":                 "flock runs it",
		"chroot / rm -rf ~/important":                          "chroot runs it",
		"unshare rm -rf ~/important":                           "unshare runs it",
		"parallel rm -rf ::: ~/important":                      "parallel runs it",
		"sh -c 'rm -rf ~/important'":                           "sh -c runs it",
		"bash -c 'rm -rf ~/important'":                         "bash -c runs it",
		"sh <<< 'rm -rf ~/important'":                          "sh runs it",
		"eval 'rm -rf ~/important'":                            "eval runs it",
		"time rm -rf ~/important":                              "time",
		"command rm -rf ~/important":                           "command runs it",
		"builtin rm -rf ~/important":                           "builtin runs it",
		"exec rm -rf ~/important":                              "exec runs it",
		"busybox rm -rf ~/important":                           "busybox runs it",
		"taskset 1 rm -rf ~/important":                         "taskset runs it",
		"chrt 1 rm -rf ~/important":                            "chrt runs it",
		"nsenter -t 1 rm -rf ~/important":                      "nsenter runs it",
		"strace -o /dev/null rm -rf ~/important":               "strace runs it",
		"rm -rf ~/important &":                                 "background job",
		"{ sleep 9; rm -rf ~/important; } &":                   "background job",
		"(rm -rf ~/important) & wait":                          "background job",
		"coproc rm -rf ~/important":                            "coprocess",
		"coproc x { rm -rf ~/important; }":                     "coprocess",
		"cat <(rm -rf ~/important)":                            "process substitution",
		"echo x > >(rm -rf ~/important)":                       "process substitution",
		"f() { rm -rf ~/important; }; f; f":                    "function body",
		"function f { rm -rf ~/important; }":                   "function body",
		"rm() { command rm -rf ~/x; }; rm -rf ~/important":     "function body",
		"trap 'rm -rf ~/important' EXIT":                       "trap runs it",
		"alias x='rm -rf ~/important'":                         "alias x runs it",
		"rm -rf ~/important | cat":                             "stage of a pipeline",
		"cat f | rm -rf ~/important":                           "stage of a pipeline",
		"rm -rf ~/important |& cat":                            "stage of a pipeline",
		"cp -r ~/src ~/d | rm -rf ~/d":                         "stage of a pipeline",
		"docker exec c rm -rf /data":                           "container",
		"cd \"$X\"; rm -rf important":                          "cd",
		"cd \"$X\"; rm -rf ~/important":                        "cd to a directory that cannot be known",
		"cd -; rm -rf important":                               "cd",
		"popd; rm -rf important":                               "cd",
		"cd src && rm -rf build":                               "CDPATH",
		"pushd src; rm -rf build":                              "CDPATH",
		"sleep 9 & rm -rf ~/important":                         "background job",
		"cp -r ~/x ~/important & rm -rf ~/important":           "background job",
		"rm -rf ~/important; sh -c 'sleep 1 &'":                "background job",
		"chmod -R 777 ~/important &":                           "background job",
		"watch chmod -R u+w ~/important":                       "watch runs it",
	}
	for cmd, why := range high {
		an := p.Analyze(cmd, "/home/u")
		if an.Level != High || an.IfJournaled.Level != High {
			t.Errorf("%q: %v, if journaled %v, want high whatever is journaled", cmd, an.Assessment, an.IfJournaled)
			continue
		}
		all := strings.Join(an.Reasons, "; ") + "; " + strings.Join(an.IfJournaled.Reasons, "; ")
		if !strings.Contains(all, why) {
			t.Errorf("%q: reasons %q do not say %q", cmd, all, why)
		}
	}
}

// TestUndoableNeedsCertainMeaning: a command whose meaning is not
// certain (an alias or function it defines, syntax bash and dash read
// differently, a program named through /proc) is not lowered either.
func TestUndoableNeedsCertainMeaning(t *testing.T) {
	p := DefaultPolicy()
	for cmd, why := range map[string]string{
		"alias rm=echo; rm -rf ~/important":          "alias",
		"f() { :; }; rm -rf ~/important":             "function",
		"[[ -n $(rm -rf ~/important) ]]":             "read it differently",
		"[[ -d ~/important ]] && rm -rf ~/important": "read it differently",
		"/proc/self/root/bin/rm -rf ~/important":     "/proc",
	} {
		an := p.Analyze(cmd, "/home/u")
		if an.IfJournaled.Level != High {
			t.Errorf("%q: if journaled %v, want high", cmd, an.IfJournaled)
			continue
		}
		if all := strings.Join(an.Reasons, "; ") + "; " + strings.Join(an.IfJournaled.Reasons, "; "); !strings.Contains(all, why) {
			t.Errorf("%q: reasons %q do not say %q", cmd, all, why)
		}
	}
}

// FuzzUndoableOnce: lowering never raises, and an undoable command inside
// a loop, under watch or in a background job is never lowered, whatever
// the command around it.
func FuzzUndoableOnce(f *testing.F) {
	for _, s := range []string{"rm -r ~/d", "cd x && rm -r d", "echo $(rm -r d)", "a | b", "f() { x; }"} {
		f.Add(s)
	}
	p := DefaultPolicy()
	f.Fuzz(func(t *testing.T, cmd string) {
		if len(cmd) > 512 {
			return
		}
		an := p.Analyze(cmd, "/home/u")
		if an.IfJournaled.Level > an.Level {
			t.Fatalf("%q: journaling raised %v to %v", cmd, an.Level, an.IfJournaled.Level)
		}
		wrapped := []string{"watch -- " + quote(cmd), "sh -c " + quote(cmd)}
		if !strings.ContainsAny(cmd, "}\n") && !strings.Contains(cmd, "done") && !strings.Contains(cmd, "#") {
			wrapped = append(wrapped, "while :; do "+cmd+"\n done", "{ "+cmd+"\n} &")
		}
		for _, w := range wrapped {
			if an := p.Analyze(w, "/home/u"); an.Level == High && an.IfJournaled.Level < High {
				t.Fatalf("%q: lowered to %v", w, an.IfJournaled)
			}
		}
	})
}
