package safety

import "testing"

func TestUndoOpaque(t *testing.T) {
	p := DefaultPolicy()
	for cmd, want := range map[string]bool{
		"tar -cf x.tar --remove-files dir":        true,
		"cd /x && gzip big.log":                   true,
		"echo a | xargs -0 rm":                    false,
		"timeout 5s env A=1 /usr/bin/unzip a.zip": true,
		"nice -n 10 patch -p1 < d.diff":           true,
		"echo tar > notes.txt":                    false,
		"grep -r gzip . > hits.txt":               false,
		"cp a b && (setfacl -m u:x:r b)":          true,
		"cp a b && (chown u b)":                   false,
		"echo $(rmdir -p d)":                      true,
		"rmdir d/e":                               false,
		"chrt 1 taskset 1 tar -xf a.tar":          true,
		"strace -f gzip f":                        true,
		"rmdir --parents d/e":                     true,
		"rmdir -vp d/e":                           true,
		"rmdir --par d/e":                         true,
		"rmdir $opt d/e":                          true,
		"mkdir -p d && echo x > d/f":              false,
		"sed -i s/a/b/ f":                         false,
		"echo 'unterminated":                      true,
	} {
		if got, why := p.UndoOpaque(cmd); got != want {
			t.Errorf("UndoOpaque(%q) = %v (%s), want %v", cmd, got, why, want)
		}
	}
}

func FuzzUndoOpaque(f *testing.F) {
	for _, s := range []string{"tar x", "env -i A=1 gzip f", "a | b && c; (d)", "$(x) y"} {
		f.Add(s)
	}
	p := DefaultPolicy()
	f.Fuzz(func(t *testing.T, cmd string) {
		opaque, why := p.UndoOpaque(cmd)
		if opaque != (why != "") {
			t.Fatalf("UndoOpaque(%q) = %v, %q", cmd, opaque, why)
		}
	})
}
