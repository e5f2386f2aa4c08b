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
	f.Add("a.toml", "db = { password = \"inl1ne-pw\" }\nsecret = \"\"\"\nmulti-l1ne\"\"\"")
	f.Add("a.xml", "<password>xml-pw-123</password><p name=\"token\" value=\"v4lue-123\"/>")
	f.Add("w.php", "define('DB_PASSWORD', 'php-pw-123');")
	f.Add("k.yml", "a:\n  pass: |\n    bl0ck-value\n")
	f.Add("c.bin", "\x00token=b1n-value\x00\xff")
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

// The formats the second model-path corpus (cmd/agent testdata/leak)
// found unharvested: a YAML block scalar and flow map, TOML's
// multi-line strings and inline tables, a properties file's `key value`,
// PHP's define(), XML's elements and name/value attributes, a base64 PEM
// key (kubeconfig's client-key-data), a binary file's NUL-separated
// strings. Each value is hidden bare; the names and other values are not.
func TestHarvestMoreFormats(t *testing.T) {
	pem := "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END RSA PRIVATE KEY-----\n"
	for _, c := range []struct {
		name, text string
		secrets    []string
		kept       []string
	}{
		{"config.yml", "smtp:\n  relay: mail.example.net\n  pass: |\n    SmtpBlock-4471kq\nflow: {user: app, token: FlowTok-5521x}\n",
			[]string{"SmtpBlock-4471kq", "FlowTok-5521x"}, []string{"mail.example.net"}},
		{"settings.toml", "db = { user = \"svc\", password = \"TomlInl-5582vv\", port = 5432 }\nclient_secret = \"\"\"\nTomlMulti-8813pp\"\"\"\nother = '''\nnot-a-secret-99\n'''\n",
			[]string{"TomlInl-5582vv", "TomlMulti-8813pp"}, []string{"not-a-secret-99"}},
		{"app.properties", "mail.host mail.example.org\nmail.password PropSpace-9920qq\n",
			[]string{"PropSpace-9920qq"}, []string{"mail.example.org"}},
		{"wp-config.php", "<?php\ndefine( 'DB_HOST', 'db7.example.org' );\ndefine( 'DB_PASSWORD', 'WpDbPw-8847gg' );\ndefine('AUTH_KEY', 'wpAuthKey-k3y!9x');\n",
			[]string{"WpDbPw-8847gg", "wpAuthKey-k3y!9x"}, []string{"db7.example.org"}},
		{"server.xml", "<server>\n  <host>xml.example.org</host>\n  <password>XmlPw-3321hh</password>\n  <property name=\"db.password\" value=\"XmlAttr-5567jj\"/>\n  <add key=\"ApiToken\" value=\"XmlAdd-7781qq\" />\n</server>\n",
			[]string{"XmlPw-3321hh", "XmlAttr-5567jj", "XmlAdd-7781qq"}, []string{"xml.example.org"}},
		{"config", "users:\n- name: admin\n  user:\n    client-key-data: " + base64.StdEncoding.EncodeToString([]byte(pem)) + "\n",
			[]string{"MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"}, []string{"admin"}},
		{"cache.bin", "\x7fELF\x02\x01\x00\x00hdr\x00\x01session_token=BinStr-4412mm\x00\x03\xff\xfe tail\x00",
			[]string{"BinStr-4412mm"}, []string{"tail"}},
	} {
		checkHarvest(t, c.name, c.text, c.secrets, c.kept)
	}
}

// Bad input to the new readers: unclosed TOML strings, XML with no end
// tag or mismatched tags, define() cut short, YAML that is no mapping,
// a binary file that is all control bytes. Nothing panics; nothing
// un-named is learned.
func TestHarvestMoreFormatsBadInput(t *testing.T) {
	for _, text := range []string{
		"password = \"\"\"\nUnclosed-7781x\n", "password = '''", "<password>NoEnd-5521x", "<password>Mismatch-5521x</secret>",
		"define('DB_PASSWORD'", "define('DB_PASSWORD', 'x", "- just\n- a list\n", "\x00\x01\x02\x03\x04", "{ password", "a: [b: c",
	} {
		s := NewSet()
		s.HarvestText("/srv/x", text)
		if got := s.String("Mismatch-5521x"); got != "Mismatch-5521x" {
			t.Errorf("%q: learned a value under mismatched tags", text)
		}
	}
}

// checkHarvest harvests text as the file /srv/name and checks that each
// of secrets is then hidden and each of kept is not.
func checkHarvest(t *testing.T, name, text string, secrets, kept []string) {
	t.Helper()
	s := NewSet()
	s.HarvestText("/srv/"+name, text)
	for _, sec := range secrets {
		if got := s.String("x " + sec + " y"); strings.Contains(got, sec) {
			t.Errorf("%s: %q not harvested", name, sec)
		}
	}
	for _, k := range kept {
		if got := s.String("x " + k + " y"); !strings.Contains(got, k) {
			t.Errorf("%s: %q taken for a secret", name, k)
		}
	}
}
