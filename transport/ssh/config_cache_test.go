package ssh

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// cacheDir writes a config (and an included file) under a fresh home.
func cacheDir(t *testing.T, config, included string) ResolveOptions {
	t.Helper()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(home, ".ssh", name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("config", config)
	write("included", included)
	return ResolveOptions{
		ConfigFile: filepath.Join(home, ".ssh", "config"), Home: home, LocalUser: "me",
		SystemConfigFile: filepath.Join(home, "none"),
	}
}

// A batch's cache reads each file once: what the files say when the first
// host is resolved holds for the others, in the including file and in the
// included one.
func TestConfigCacheReadsFilesOnce(t *testing.T) {
	opts := cacheDir(t, "Host a b\n  Port 1001\nInclude included\n", "Host *\n  User first\n")
	opts.Cache = NewConfigCache()
	a, err := Resolve("a", opts)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(opts.ConfigFile)
	for name, text := range map[string]string{"config": "Host *\n  Port 2002\nInclude included\n", "included": "Host *\n  User second\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b, err := Resolve("b", opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*HostConfig{a, b} {
		if c.Port != 1001 || c.User != "first" {
			t.Errorf("%s: port %d user %q with the cache, want the files as first read (1001, first)", c.Alias, c.Port, c.User)
		}
	}
	opts.Cache = nil
	c, err := Resolve("b", opts)
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 2002 || c.User != "second" {
		t.Errorf("without the cache: port %d user %q, want the files as they are now (2002, second)", c.Port, c.User)
	}
}

// What depends on the destination is still evaluated per host with a
// shared cache: Host patterns, Match criteria, Match exec (run once per
// host whose block is active) and %-tokens.
func TestConfigCachePerHostEvaluation(t *testing.T) {
	log := filepath.Join(t.TempDir(), "exec.log")
	config := fmt.Sprintf(`Host db1
  HostName 10.0.0.1
Host web*
  User webuser
Match originalhost db* exec "echo %%n >> %s; test %%n = db2"
  Port 2222
Match host 10.*
  ConnectTimeout 7
Host *
  IdentityFile ~/.ssh/id_%%n
  User fallback
`, log)
	opts := cacheDir(t, config, "")
	hosts := []string{"web1", "db1", "db2", "other", "web2", "db1"}
	fresh := map[string]*HostConfig{}
	for _, h := range hosts {
		c, err := Resolve(h, opts)
		if err != nil {
			t.Fatal(err)
		}
		fresh[h] = c
	}
	opts.Cache = NewConfigCache()
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts {
		c, err := Resolve(h, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(c, fresh[h]) {
			t.Errorf("%s: cached %+v\nfresh %+v", h, c, fresh[h])
		}
	}
	want := map[string][3]any{ // user, port, identity
		"web1": {"webuser", 22, "id_web1"}, "db1": {"fallback", 22, "id_db1"}, "db2": {"fallback", 2222, "id_db2"},
		"other": {"fallback", 22, "id_other"},
	}
	for h, w := range want {
		c := fresh[h]
		if c.User != w[0] || c.Port != w[1] || len(c.IdentityFiles) != 1 || filepath.Base(c.IdentityFiles[0]) != w[2] {
			t.Errorf("%s: user %q port %d identities %q, want %v", h, c.User, c.Port, c.IdentityFiles, w)
		}
	}
	if fresh["db1"].ConnectTimeout.Seconds() != 7 || fresh["db2"].ConnectTimeout != 0 {
		t.Errorf("Match host on HostName: db1 %v, db2 %v", fresh["db1"].ConnectTimeout, fresh["db2"].ConnectTimeout)
	}
	ran, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(ran)); !reflect.DeepEqual(got, []string{"db1", "db2", "db1"}) {
		t.Errorf("Match exec ran for %q with the cache, want once per db host resolved (db1 db2 db1)", got)
	}
}

// A syntax error is reported with its file and line for every host, the
// same with the cache as without.
func TestConfigCacheErrors(t *testing.T) {
	opts := cacheDir(t, "Host a\n  User x\nInclude included\n", "Host *\n  Port\n")
	want := filepath.Join(filepath.Dir(opts.ConfigFile), "included") + ":2: no argument after keyword \"port\""
	for _, cache := range []*ConfigCache{nil, NewConfigCache()} {
		opts.Cache = cache
		for _, h := range []string{"a", "b", "a"} {
			_, err := Resolve(h, opts)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s (cache %v): error %v, want %q", h, cache != nil, err, want)
			}
		}
	}
	opts.ConfigFile = filepath.Join(opts.Home, "missing")
	opts.Cache = NewConfigCache()
	for range 2 {
		if _, err := Resolve("a", opts); err == nil || !strings.Contains(err.Error(), "missing") {
			t.Errorf("a missing -F file: error %v", err)
		}
	}
}

// Many hosts resolved at once through one cache (run with -race) get what
// they get one at a time without it.
func TestConfigCacheConcurrent(t *testing.T) {
	var b strings.Builder
	for i := range 64 {
		fmt.Fprintf(&b, "Host h%d\n  HostName 127.0.0.%d\n  Port %d\n", i, i%4+1, 3000+i)
	}
	b.WriteString("Match host 127.0.0.2\n  User two\nHost jump*\n  ProxyJump none\n  Port 9\nHost *\n  User rest\n  ProxyJump jump%n\n")
	opts := cacheDir(t, b.String(), "")
	cached := opts
	cached.Cache = NewConfigCache()
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := fmt.Sprintf("h%d", i)
			got, err := Resolve(h, cached)
			if err != nil {
				t.Error(err)
				return
			}
			want, err := Resolve(h, opts)
			if err != nil {
				t.Error(err)
				return
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: cached %+v, fresh %+v", h, got, want)
			}
			if got.Port != 3000+i || len(got.ProxyJump) != 1 || got.ProxyJump[0].Alias != "jump"+h || got.ProxyJump[0].Port != 9 {
				t.Errorf("%s: port %d jump %+v", h, got.Port, got.ProxyJump)
			}
		}()
	}
	wg.Wait()
}
