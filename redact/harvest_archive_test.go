package redact

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"strings"
	"testing"
)

// bz2Creds is `bzip2` of "[default]\naws_secret_access_key =
// Bz2Unit-5531ab\n" (Go's standard library has no bzip2 writer).
const bz2Creds = "QlpoOTFBWSZTWSz6Ka0AAAbfgAAQQAI6AhAAAgq/LR6wIAAxQAAAAAaoGnqPTU0A9Q2KURzqcIDMJMgw03WXI6XvJcG+xab1LOJE8XUFsfi7kinChIFn0U1o"

func tarOf(t testing.TB, files ...string) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for i := 0; i+1 < len(files); i += 2 {
		if err := tw.WriteHeader(&tar.Header{Name: files[i], Mode: 0o600, Size: int64(len(files[i+1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(files[i+1]))
	}
	tw.Close()
	return b.Bytes()
}

func gzipOf(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

func zipOf(t testing.TB, files ...string) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := 0; i+1 < len(files); i += 2 {
		w, err := zw.Create(files[i])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(files[i+1]))
	}
	zw.Close()
	return b.Bytes()
}

// An archive's or a compressed file's members are harvested each as the
// file it is (a YAML member as YAML, a .env as .env), two levels deep;
// what is no secret is kept.
func TestHarvestArchives(t *testing.T) {
	bz2, err := base64.StdEncoding.DecodeString(bz2Creds)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		data    []byte
		secrets []string
	}{
		"bundle.tar": {tarOf(t, "app/.env", "APP=shop\nAPI_TOKEN=TarTok-2201ba\n", "conf/db.yml", "db:\n  host: pg.internal.example\n  password: TarYml-2202bb\n"),
			[]string{"TarTok-2201ba", "TarYml-2202bb"}},
		"bundle.tgz": {gzipOf(tarOf(t, "deploy/settings.json", `{"db": {"secret_key": "TgzKey-2203bc"}}`)), []string{"TgzKey-2203bc"}},
		"site.zip": {zipOf(t, "site/config.json", `{"db": {"user": "shop", "db_password": "ZipPw-2204bd"}}`, "site/inner.env.gz", string(gzipOf([]byte("TOKEN=ZipGz-2209bi\n")))),
			[]string{"ZipPw-2204bd", "ZipGz-2209bi"}},
		"creds.bz2": {bz2, []string{"Bz2Unit-5531ab"}},
		"old.gz":    {gzipOf([]byte("db_password=GzPw-1118ar\n")), []string{"GzPw-1118ar"}},
	} {
		s := NewSet()
		if n := s.HarvestData(name, c.data); n < len(c.secrets) {
			t.Errorf("%s: %d values learnt, want %d", name, n, len(c.secrets))
		}
		text := "shop pg.internal.example " + strings.Join(c.secrets, " ")
		got := s.String(text)
		for _, v := range c.secrets {
			if strings.Contains(got, v) {
				t.Errorf("%s: %q not hidden: %s", name, v, got)
			}
		}
		if !strings.Contains(got, "shop pg.internal.example") {
			t.Errorf("%s: lost what is no secret: %s", name, got)
		}
	}
}

// Archives in archives are read two levels deep, no deeper: a bomb of
// nested archives costs at most that.
func TestHarvestArchiveDepth(t *testing.T) {
	inner := tarOf(t, "x.env", "TOKEN=Deep-33aa11bb\n")
	two := gzipOf(inner)                                                               // gz > tar > member: read
	three := zipOf(t, "a.gz", string(gzipOf(gzipOf([]byte("TOKEN=Deep-33aa11bb\n"))))) // zip > gz > gz > text: not
	s := NewSet()
	s.HarvestData("two.tgz", two)
	if got := s.String("Deep-33aa11bb"); strings.Contains(got, "Deep-33aa11bb") {
		t.Errorf("two levels: not hidden")
	}
	s = NewSet()
	s.HarvestData("three.zip", three)
	if got := s.String("Deep-33aa11bb"); !strings.Contains(got, "Deep-33aa11bb") {
		t.Errorf("four levels deep read")
	}
}

// A file whose path says it is a secret gives up its one word; a file
// that says so but holds prose or code, and a one-word file with an
// ordinary name, give nothing.
func TestHarvestSecretFiles(t *testing.T) {
	for name, c := range map[string]struct {
		text string
		want bool
	}{
		"/run/secrets/db_root": {"RawSecVal-2230ea\n", true},
		"/home/u/.vault-token": {"hvs.VaultTok2231eb", true},
		"/srv/app/api.key":     {"ak-9911aabbccdd", true},
		"/var/run/secrets/kubernetes.io/serviceaccount/token": {"eyJhbGciOi.eyJzdWIiOi-xx.Sig_9911aa", true},
		"/run/credentials/app.service/db_password":            {"SystemdCred-1199zz\n", true},
		"/srv/app/notes.txt":                                  {"NotSecret-1234ab", false},
		"/srv/app/password_policy.txt":                        {"MinLength-12chars", false},
		"/srv/app/token.txt":                                  {"the token is rotated weekly", false},
	} {
		s := NewSet()
		s.HarvestText(name, c.text)
		v := strings.TrimSpace(c.text)
		if hidden := !strings.Contains(s.String("x "+v+" y"), v); hidden != c.want {
			t.Errorf("%s: hidden %v, want %v", name, hidden, c.want)
		}
	}
}

// A .git-credentials (a secret-named file of one word: its URL) still
// teaches its password alone, as the patterns find it.
func TestHarvestSecretFileURL(t *testing.T) {
	s := NewSet()
	s.HarvestText("/home/u/.git-credentials", "https://deploy:GitCredPw-4410ff@git.example.com\n")
	if got := s.String("pw GitCredPw-4410ff"); strings.Contains(got, "GitCredPw-4410ff") {
		t.Errorf("the password alone is not hidden: %s", got)
	}
}

// psk, pw, privkey, accesskey and mnemonic are secret words.
func TestSecretNameMoreWords(t *testing.T) {
	for _, k := range []string{"psk", "wpa_psk", "db_pw", "PW", "privkey", "AccessKey", "accesskey", "wallet_mnemonic"} {
		if !SecretName(k) {
			t.Errorf("%s: not a secret name", k)
		}
	}
	for _, k := range []string{"ssid", "pwd_file", "psk_type"} {
		if SecretName(k) {
			t.Errorf("%s: a secret name", k)
		}
	}
}

// FuzzUnpacked: any bytes, read as an archive, give at most MaxHarvest
// bytes of members and never panic; a member's name is below the
// archive's.
func FuzzUnpacked(f *testing.F) {
	f.Add(tarOf(f, "a.env", "TOKEN=x"))
	f.Add(gzipOf(tarOf(f, "a.env", "TOKEN=x")))
	f.Add(zipOf(f, "a.json", `{"password":"y"}`))
	if b, err := base64.StdEncoding.DecodeString(bz2Creds); err == nil {
		f.Add(b)
	}
	f.Add([]byte("PK\x03\x04garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		total := 0
		for _, m := range unpacked("arc", data) {
			total += len(m.data)
			if !strings.HasPrefix(m.name, "arc") {
				t.Fatalf("member %q", m.name)
			}
		}
		if total > MaxHarvest {
			t.Fatalf("%d bytes", total)
		}
		NewSet().HarvestData("arc", data)
	})
}
