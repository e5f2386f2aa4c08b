package redact

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The sources the leak corpus's third part (cmd/agent testdata/leak:
// svc/, big/) found unharvested: SQL dumps' rows, a gzip'd file, a file
// over 64 KiB, a Kubernetes Secret's base64 data the patterns saw
// first, and names the secret words lacked (bearer, cookie, signature,
// jwt, salt, session). Each value is hidden bare; the rest is kept.
func TestHarvestSources(t *testing.T) {
	dump := "CREATE TABLE `users` (\n  `id` int NOT NULL,\n  `login` varchar(64),\n  `password` varchar(128) DEFAULT 'x,y',\n  PRIMARY KEY (`id`)\n);\n" +
		"INSERT INTO `users` VALUES (1,'admin','SqlIns-1106af'),(2,'bob','SqlIns2-it''s-77');\n" +
		"INSERT INTO tokens (id, note, api_token) VALUES (3, 'public-note-1', \"SqlCol-5531zz\");\n" +
		"COPY public.accounts (id, email, pwd) FROM stdin;\n3\tcarol@example.org\tSqlCopy-1108ah\n4\tdan@example.org\t\\N\n\\.\n"
	var big strings.Builder
	for i := 0; big.Len() < 100<<10; i++ {
		fmt.Fprintf(&big, "FEATURE_FLAG_%04d=on-%d\n", i, i)
	}
	big.WriteString("API_TOKEN=BigFile-1117aq\n")
	for _, c := range []struct {
		name, text string
		secrets    []string
		kept       []string
	}{
		{"dump.sql", dump, []string{"SqlIns-1106af", "SqlIns2-it's-77", "SqlCol-5531zz", "SqlCopy-1108ah"},
			[]string{"admin", "public-note-1", "carol@example.org"}},
		{"big.env", big.String(), []string{"BigFile-1117aq"}, []string{"on-2011"}},
		{"secret.yaml", "apiVersion: v1\nkind: Secret\ndata:\n  password: " + base64.StdEncoding.EncodeToString([]byte("KubeSec-1119as")) + "\n",
			[]string{"KubeSec-1119as"}, []string{"Secret"}},
		{"names.conf", "bearer = Bearer-1112al\ncookie = Cookie-1113am\nsignature = Sig-1114an01\njwt = JwtSign-1121au\nsalt = SaltVal-1122av\nSESSION=Sess-8812abc\n" +
			"session_timeout = 3600-seconds\ncookie_domain = www.example.org\nDBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus\n",
			[]string{"Bearer-1112al", "Cookie-1113am", "Sig-1114an01", "JwtSign-1121au", "SaltVal-1122av", "Sess-8812abc"},
			[]string{"3600-seconds", "www.example.org", "unix:path=/run/user/1000/bus"}},
		{".htpasswd", "admin:$apr1$Xy7Qz$HtpwHash1130bwxQ\nguest:{SHA}Sha1HashVal-5521=\n", []string{"apr1$Xy7Qz$HtpwHash1130bwxQ", "SHA}Sha1HashVal-5521="},
			[]string{"admin", "guest"}},
	} {
		checkHarvest(t, c.name, c.text, c.secrets, c.kept)
	}
}

// A gzip'd file is harvested as what it decompresses to; a file over
// 64 KiB but within MaxHarvest is read.
func TestHarvestGzipAndLarge(t *testing.T) {
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("host=db.example.org\ndb_password=GzPw-1118ar\n"))
	zw.Close()
	big := strings.Repeat("# a comment line of a large file\n", 3000) + "PASSWORD=LargePw-4410xy\n"
	files := map[string][]byte{"backup.gz": gz.Bytes(), "big.env": []byte(big), "bad.gz": {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 'p', 'a', 's', 's', 'w', 'o', 'r', 'd', '=', 'x'}}
	var paths []string
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	s := NewSet()
	s.Harvest(context.Background(), osReader{}, paths)
	for _, sec := range []string{"GzPw-1118ar", "LargePw-4410xy"} {
		if got := s.String("x " + sec + " y"); strings.Contains(got, sec) {
			t.Errorf("%q not harvested", sec)
		}
	}
	if got := s.String("db.example.org"); got != "db.example.org" {
		t.Errorf("host hidden: %q", got)
	}
}

// Bad SQL: statements cut short, unbalanced quotes and parentheses, a
// COPY with no end, more values than columns. Nothing panics; no value
// of a column not named secret is learnt.
func TestHarvestSQLBadInput(t *testing.T) {
	for _, text := range []string{
		"INSERT INTO users VALUES (1,'admin','NoCols-55121x')",
		"CREATE TABLE u (id int, password text",
		"CREATE TABLE u (id int, password text); INSERT INTO u VALUES (1, 'Unclosed-5521x",
		"CREATE TABLE u (id int, name text); INSERT INTO u VALUES (1, 'NotSecret-5521x', 'Extra-5521xx');",
		"INSERT INTO u (id, name) VALUES (1, 'NotSecret-5521x'), (",
		"COPY u (id, name) FROM stdin;\n1\tNotSecret-5521x\n",
		"INSERT INTO u (password) VALUES (now()), ((",
		"insert into", "COPY ", "CREATE TABLE (",
	} {
		s := NewSet()
		s.HarvestText("/srv/x.sql", text)
		for _, v := range []string{"NoCols-55121x", "NotSecret-5521x", "Extra-5521xx"} {
			if got := s.String(v); got != v {
				t.Errorf("%q: learned %q", text, v)
			}
		}
	}
}

// harvestSQL takes any text without panicking and adds only values of
// secret-named columns.
func FuzzHarvestSQL(f *testing.F) {
	f.Add("CREATE TABLE `u` (`id` int, `password` text);\nINSERT INTO `u` VALUES (1,'pw-12345678');")
	f.Add("INSERT INTO u (id, api_token) VALUES (1, \"t'o\\\"k\"), (2, 'x''y');")
	f.Add("COPY a (id, pwd) FROM stdin;\n1\tpw\n\\.\n")
	f.Fuzz(func(t *testing.T, text string) {
		harvestSQL(text, func(key, value string) {
			if !SecretName(key) {
				t.Fatalf("value %q of column %q", value, key)
			}
		})
	})
}
