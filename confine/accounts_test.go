package confine

import (
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseHomes(t *testing.T) {
	passwd := "root:x:0:0:root:/root:/bin/bash\n" +
		"daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\nsys:x:3:3:sys:/dev:/usr/sbin/nologin\n" +
		"man:x:6:12:man:/var/cache/man:/usr/sbin/nologin\nwww-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\nsystemd-network:x:998:998::/:/usr/sbin/nologin\n" +
		"postgres:x:101:104:PostgreSQL administrator,,,:/var/lib/postgresql/:/bin/bash\n" +
		"# a comment:x:1:1::/var/lib/comment:/bin/sh\nshort:x:1\nrel:x:7:7::var/lib/rel:/bin/sh\n" +
		"tmp:x:8:8::/tmp:/bin/sh\nsrv:x:9:9::/srv/app:/bin/sh\nagain:x:10:10::/var/www:/bin/sh\n" +
		"nul:x:11:11::/var/lib/a\x00b:/bin/sh\ndots:x:12:12::/var/lib/../../etc:/bin/sh\n"
	got := ParseHomes([]byte(passwd))
	want := []string{"/root", "/var/www", "/var/lib/postgresql", "/srv/app"}
	if !slices.Equal(got, want) {
		t.Errorf("ParseHomes = %q, want %q", got, want)
	}
	for _, bad := range []string{"", "\n\n", ":::::::", "a:b:c:d:e:f", "a:b:c:d:e:/x:g:h"} {
		if got := ParseHomes([]byte(bad)); len(got) != 0 {
			t.Errorf("ParseHomes(%q) = %q, want none", bad, got)
		}
	}
	var many strings.Builder
	for i := range 2 * maxAccountHomes {
		many.WriteString("u:x:1:1::/srv/u" + strings.Repeat("x", i%50) + string(rune('a'+i%26)) + "/" + strings.Repeat("y", i/26) + ":/bin/sh\n")
	}
	if got := ParseHomes([]byte(many.String())); len(got) > maxAccountHomes {
		t.Errorf("ParseHomes gave %d homes, want at most %d", len(got), maxAccountHomes)
	}
}

func FuzzParseHomes(f *testing.F) {
	f.Add([]byte("postgres:x:101:104::/var/lib/postgresql:/bin/bash\nroot:x:0:0::/root:/bin/sh\n"))
	f.Add([]byte("a:b:c:d:e:/:g\n::::::\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := ParseHomes(b)
		if len(got) > maxAccountHomes {
			t.Fatalf("%d homes", len(got))
		}
		for i, h := range got {
			if !path.IsAbs(h) || path.Clean(h) != h || h == "/" || strings.ContainsRune(h, 0) || slices.Contains(got[:i], h) {
				t.Fatalf("bad home %q in %q", h, got)
			}
			if _, ok := homeDir(h); !ok {
				t.Fatalf("%q is not a home", h)
			}
		}
	})
}

// TestOthersBelowTop: in another account's home the secrets below its top
// are denied too — a project's .env, a key in a deploy directory, the
// policy's places of the operator's home found in theirs
// (~/.config/gcloud) — but not what the walk's bounds leave out, nor the
// account's ordinary files, nor what its denied dot-entries hold (denied
// whole already).
func TestOthersBelowTop(t *testing.T) {
	home, bob := t.TempDir(), t.TempDir()
	s := secretSpec(home)
	s.AccountHomes = true
	s.NoRead = append(s.NoRead, home+"/.config/gcloud", home+"/.local/share/keyrings", home+"/.config/nushell/history*")
	for _, f := range []string{"app/.env", "app/deploy/id_ed25519", "app/config/settings.ini", ".config/gcloud/credentials.db",
		".config/app/config.toml", ".config/nushell/history.txt", ".local/share/keyrings/login.keyring", ".cache/x/.env",
		"notes.txt"} {
		mkfile(t, filepath.Join(bob, f), "x\n")
	}
	var w watcher
	noRead, noWrite := s.othersIn(&w, []string{bob})
	for _, p := range []string{"app/.env", "app/deploy/id_ed25519", ".config/gcloud", ".config/nushell/history.txt",
		".local/share/keyrings", ".cache"} {
		if !slices.Contains(noRead, filepath.Join(bob, p)) {
			t.Errorf("%s is not denied to read: %q", p, noRead)
		}
	}
	for _, p := range []string{"app/.env", "app/deploy/id_ed25519", ".config/gcloud"} {
		if !slices.Contains(noWrite, filepath.Join(bob, p)) {
			t.Errorf("%s is not denied to write: %q", p, noWrite)
		}
	}
	for _, ok := range []string{"app/config/settings.ini", "notes.txt", ".config/app/config.toml"} {
		full := filepath.Join(bob, ok)
		for _, p := range noRead {
			if full == p || strings.HasPrefix(full, p+"/") {
				t.Errorf("%s is denied (%s)", ok, p)
			}
		}
	}
}
