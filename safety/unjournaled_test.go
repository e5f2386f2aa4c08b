package safety

import (
	"strings"
	"testing"
)

// TestUnjournaled: the programs whose writes an undo journal cannot know
// are found wherever the command runs them: behind wrappers, in code
// strings, aliases and find -exec, by path.
func TestUnjournaled(t *testing.T) {
	p := DefaultPolicy()
	for cmd, want := range map[string]bool{
		"tar -cf x.tar --remove-files dir":             true,
		"sh -c 'tar -cf x.tar --remove-files dir'":     true,
		"bash -c 'cd /x && patch -p1 < d.diff'":        true,
		"alias z=gzip; z f":                            true,
		"find . -name '*.log' -exec gzip {} +":         true,
		"/usr/bin/unzip a.zip":                         true,
		"cd /x && gzip big.log":                        true,
		"echo a | xargs -0 rm":                         false,
		"timeout 5s env A=1 /usr/bin/unzip a.zip":      true,
		"nice -n 10 patch -p1 < d.diff":                true,
		"chrt 1 taskset 1 tar -xf a.tar":               true,
		"strace -f gzip f":                             true,
		"echo tar > notes.txt":                         false,
		"grep -r gzip . > hits.txt":                    false,
		"cp a b && (setfacl -m u:x:r b)":               true,
		"cp a b && (chown u b)":                        false,
		"echo $(rmdir -p d)":                           true,
		"rmdir d/e":                                    false,
		"rmdir --parents d/e":                          true,
		"rmdir -vp d/e":                                true,
		"rmdir --par d/e":                              true,
		"rmdir $opt d/e":                               true,
		"rmdir -- -p":                                  false,
		"mkdir -p d && echo x > d/f":                   false,
		"sed -i s/a/b/ f":                              false,
		"watch -n 5 'make -C ~/src'":                   true,
		"while true; do sleep 1; done; rsync -a a/ b/": true,
	} {
		an := p.Analyze(cmd, "/home/u")
		if got := len(an.Unjournaled) > 0; got != want {
			t.Errorf("%q: unjournaled %q, want %v", cmd, an.Unjournaled, want)
		}
	}
}

func FuzzUnjournaled(f *testing.F) {
	for _, s := range []string{"tar x", "env -i A=1 gzip f", "a | b && c; (d)", "$(x) y", "sh -c 'rmdir -p a'"} {
		f.Add(s)
	}
	p := DefaultPolicy()
	f.Fuzz(func(t *testing.T, cmd string) {
		if len(cmd) > 512 {
			return
		}
		for _, why := range p.Analyze(cmd, "/home/u").Unjournaled {
			if name, what, ok := strings.Cut(why, ": "); !ok || name == "" || what == "" {
				t.Fatalf("%q: unjournaled %q", cmd, why)
			}
		}
	})
}
