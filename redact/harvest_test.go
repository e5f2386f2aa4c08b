package redact

import (
	"context"
	"encoding/base64"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// osReader reads this machine's files, as the local transport does.
type osReader struct{}

func (osReader) Stat(_ context.Context, p string) (fs.FileInfo, error) { return os.Stat(p) }
func (osReader) ReadFile(_ context.Context, p string, w io.Writer) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.Copy(w, f)
}

// Each structured format gives up the values of its secret-named keys,
// whatever the case and separators of the names, and nothing else.
func TestHarvestFormats(t *testing.T) {
	dir := t.TempDir()
	files := map[string]struct {
		content string
		secrets []string
		kept    []string
	}{
		"config.json": {`{"db": {"host": "db.internal.example", "db_password": "Js0nDbPw-771"}, "apiKey": "ak_9f8e7d6c5b4a", "list": [{"authToken": "tok-abcdef-123"}], "port": 5432}`,
			[]string{"Js0nDbPw-771", "ak_9f8e7d6c5b4a", "tok-abcdef-123"}, []string{"db.internal.example"}},
		"app.yaml": {"database:\n  host: db.internal.example\n  Password: \"YamlPw-88221\"\n  password_file: /etc/app/pw.txt\nsecret-key: yamlsecret123\n",
			[]string{"YamlPw-88221", "yamlsecret123"}, []string{"db.internal.example", "/etc/app/pw.txt"}},
		"app.toml": {"[server]\nname = \"frontend-01\"\nclient_secret = 'TomlSecret-42x'\n",
			[]string{"TomlSecret-42x"}, []string{"frontend-01"}},
		".my.cnf": {"[client]\nuser=reporting\npassword = MyCnfPw-1234\n", []string{"MyCnfPw-1234"}, []string{"reporting"}},
		".env": {"# env\nexport GITHUB_TOKEN=ghx_EnvTok_777\nDB_PASS='EnvPass-555'\nLOG_LEVEL=debug-verbose\n",
			[]string{"ghx_EnvTok_777", "EnvPass-555"}, []string{"debug-verbose"}},
		"app.properties": {"spring.datasource.url=jdbc:mysql://db/app\nspring.datasource.password=PropPw-9090\n",
			[]string{"PropPw-9090"}, []string{"jdbc:mysql://db/app"}},
		".npmrc": {"registry=https://registry.example.com/\n//registry.example.com/:_authToken=npm_NpmTok-31337\n",
			[]string{"npm_NpmTok-31337"}, []string{"https://registry.example.com/"}},
		".netrc":  {"machine git.example.com login deployer password NetrcPw-4242\n", []string{"NetrcPw-4242"}, []string{"deployer"}},
		".pgpass": {"db.example.com:5432:app:appuser:PgPassPw-777\n", []string{"PgPassPw-777"}, []string{"appuser"}},
		"key.pem": {"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n-----END PRIVATE KEY-----\n",
			[]string{"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj", "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu"}, nil},
		"db.ini": {"[db]\nurl = postgres://app:UrlInfoPw-66@db/app\n", []string{"UrlInfoPw-66"}, []string{"postgres://app:"}},
	}
	var paths []string
	for name, f := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(f.content), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	set := NewSet()
	if n := set.Harvest(context.Background(), osReader{}, append(paths, filepath.Join(dir, "missing"))); n == 0 {
		t.Fatal("nothing harvested")
	}
	for name, f := range files {
		for _, sec := range f.secrets {
			// the value without its key, as jq -r or awk prints it
			if got := set.String("x " + sec + " y"); strings.Contains(got, sec) {
				t.Errorf("%s: %q not harvested", name, sec)
			}
		}
		for _, k := range f.kept {
			if got := set.String("x " + k + " y"); !strings.Contains(got, k) {
				t.Errorf("%s: %q taken for a secret", name, k)
			}
		}
	}
}

// Without harvesting, the bare values of the files above reach the output:
// the patterns alone cannot see them.
func TestHarvestNeeded(t *testing.T) {
	for _, v := range []string{"Js0nDbPw-771", "YamlPw-88221", "MyCnfPw-1234", "PgPassPw-777"} {
		if got := String("x " + v + " y"); !strings.Contains(got, v) {
			t.Errorf("patterns hide %q on their own", v)
		}
	}
}

// A FIFO, a directory and a file larger than MaxHarvest are not read: a
// FIFO would block agent (and consume what a writer sends), the others
// are no settings.
func TestHarvestSkips(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	big := filepath.Join(dir, "big.env")
	if err := os.WriteFile(big, []byte("PASSWORD=BigFilePw-1234\n"+strings.Repeat("#\n", MaxHarvest)), 0o600); err != nil {
		t.Fatal(err)
	}
	set := NewSet()
	done := make(chan int)
	go func() { done <- set.Harvest(context.Background(), osReader{}, []string{fifo, dir, big}) }()
	select {
	case n := <-done:
		if n != 0 {
			t.Errorf("harvested %d values", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Harvest blocked on a FIFO")
	}
}

func TestSecretName(t *testing.T) {
	for _, k := range []string{"password", "DB_PASSWORD", "dbPassword", "db-passwd", "smtp.pass", "MYSQL_PWD", "client_secret",
		"authToken", "_authToken", "api_key", "apiKey", "APIKEY", "private_key", "aws_secret_access_key", "credentials", "passphrase", "Auth"} {
		if !SecretName(k) {
			t.Errorf("SecretName(%q) = false", k)
		}
	}
	for _, k := range []string{"host", "monkey", "keyboard", "bypass", "key_file", "token_url", "password_min_length", "secret_name",
		"passenger", "compass", "username", ""} {
		if SecretName(k) {
			t.Errorf("SecretName(%q) = true", k)
		}
	}
}

// HarvestText takes any text without panicking, and adds only values at
// least MinLen long.
func FuzzHarvestText(f *testing.F) {
	f.Add("x.json", `{"password": "abcdefgh12"}`)
	f.Add(".netrc", "machine h login u password p4ssw0rd-long")
	f.Add(".pgpass", "h:1:d:u:pw:with:colons")
	f.Add("a.env", "export TOKEN='t0k3n-value'\n//r/:_authToken=x")
	f.Fuzz(func(t *testing.T, name, text string) {
		set := NewSet()
		set.HarvestText(name, text)
		set.mu.Lock()
		defer set.mu.Unlock()
		for _, e := range set.entries {
			if len(squeeze(e.value)) < MinLen {
				t.Fatalf("added %q", e.value)
			}
		}
	})
}

// A harvested value in base64 (docker's auths, a basic auth header) is
// learned padded as it is, decoded, and by its password part: `jq -r
// .auths[].auth` and the same piped to base64 -d or rev are hidden.
func TestHarvestBase64Value(t *testing.T) {
	auth := base64.StdEncoding.EncodeToString([]byte("docker:DockerAuth-5519"))
	s := NewSet()
	if n := s.HarvestText("/home/u/.docker/config.json", `{"auths": {"registry.example.com": {"auth": "`+auth+`"}}}`); n < 3 {
		t.Fatalf("learned %d values, want the value, its decoding and the password", n)
	}
	for _, out := range []string{auth + "\n", reverse(auth), "docker:DockerAuth-5519\n", "DockerAuth-5519"} {
		if got := s.String(out); strings.Contains(got, "Auth-55") || strings.Contains(got, "OkRvY2tl") || strings.Contains(got, "Y2tl") {
			t.Errorf("%q: kept: %q", out, got)
		}
	}
	// a value that is no base64 teaches no decoding
	s = NewSet()
	if n := s.HarvestText("app.env", "API_TOKEN=Zq7-Kx9Wm2Rt5Yq\n"); n != 1 {
		t.Errorf("learned %d values, want 1", n)
	}
}
