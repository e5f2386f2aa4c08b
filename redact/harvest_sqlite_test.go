package redact

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sqliteDBFile makes a database with the real sqlite3 from sql.
func sqliteDBFile(t testing.TB, sql string) []byte {
	t.Helper()
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("sqlite3 not installed")
	}
	p := filepath.Join(t.TempDir(), "app.db")
	cmd := exec.Command("sqlite3", p)
	cmd.Stdin = strings.NewReader(sql)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v\n%s", err, out)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A SQLite database's secrets are learnt from the file: secret-named
// columns (at most maxLearnPerText values a table), a settings table's secret-named rows, a secret-named table's
// values; in a table of many pages (interior pages) and in a value
// larger than a page (overflow pages). Non-secret values are kept.
func TestHarvestSQLite(t *testing.T) {
	var sql strings.Builder
	sql.WriteString("PRAGMA page_size=1024;\n" +
		"CREATE TABLE users (id INTEGER PRIMARY KEY, login TEXT, password_hash TEXT);\n" +
		"CREATE TABLE api_tokens (id INTEGER PRIMARY KEY, owner TEXT, token TEXT, created TEXT);\n" +
		"CREATE TABLE settings (name TEXT, value TEXT);\n" +
		"CREATE TABLE secrets (id INTEGER, value BLOB);\n" +
		"CREATE TABLE keys (id INTEGER, private_key TEXT);\n")
	for i := range 500 {
		fmt.Fprintf(&sql, "INSERT INTO users VALUES (%d, 'user-%d', 'SqliteHash-%04dbf');\n", i, i, i)
	}
	sql.WriteString("INSERT INTO api_tokens VALUES (1, 'ci-runner', 'SqliteTok-2207bg', '2026-01-02');\n" +
		"INSERT INTO settings VALUES ('site_title', 'Public-Title-01'), ('smtp_password', 'SqliteKv-2208bh');\n" +
		"INSERT INTO secrets VALUES (7, CAST('SqliteBlob-2209bi' AS BLOB));\n")
	big := "MIIEpAIBAAKCAQEA" + strings.Repeat("SqliteOverflow0123456789", 200)
	fmt.Fprintf(&sql, "INSERT INTO keys VALUES (1, '%s');\n", big)
	s := NewSet()
	db := sqliteDBFile(t, sql.String())
	s.HarvestData("app.db", db)
	for _, v := range []string{"SqliteHash-0000bf", "SqliteHash-0050bf", "SqliteTok-2207bg", "SqliteKv-2208bh", "SqliteBlob-2209bi", big} {
		if got := s.String("<" + v + ">"); strings.Contains(got, v) {
			t.Errorf("%.40q… not hidden", v)
		}
	}
	for _, v := range []string{"SqliteHash-0499bf", "user-17", "ci-runner", "Public-Title-01", "2026-01-02", "site_title"} {
		if got := s.String("<" + v + ">"); !strings.Contains(got, v) {
			t.Errorf("%q hidden", v)
		}
	}
}

// The same rules for a dump's INSERTs: a settings table's secret-named
// row, a secret-named table's value.
func TestHarvestSQLNamedValues(t *testing.T) {
	s := NewSet()
	s.HarvestText("dump.sql", "INSERT INTO `wp_options` (`option_id`, `option_name`, `option_value`) VALUES (1,'siteurl','https://shop.example'),(2,'mailserver_pass','WpOpt-5512ab');\n"+
		"INSERT INTO secrets (id, value) VALUES (1, 'DumpSecret-7781cd');\n")
	for v, hidden := range map[string]bool{"WpOpt-5512ab": true, "DumpSecret-7781cd": true, "https://shop.example": false} {
		if got := s.String("<" + v + ">"); strings.Contains(got, v) == hidden {
			t.Errorf("%q: hidden %v, want %v", v, !hidden, hidden)
		}
	}
}

// Bad input: a damaged database (cut, bytes flipped, a page that points
// to itself) is read as far as it holds, never past its end, in bounded
// time.
func TestHarvestSQLiteBadInput(t *testing.T) {
	db := sqliteDBFile(t, "CREATE TABLE t (id INTEGER, token TEXT);\nINSERT INTO t VALUES (1, 'Tok-1234abcd');\n")
	for i := 0; i < len(db); i += 97 {
		for _, cut := range [][]byte{db[:i], flip(db, i)} {
			sqliteTables(cut, func(string, []string, []string) {})
		}
	}
	// an interior page whose child is itself
	loop := append([]byte(nil), db...)
	ps := 4096
	if len(loop) >= 2*ps {
		p := loop[ps : 2*ps]
		p[0] = 5
		p[3], p[4] = 0, 1
		p[8], p[9], p[10], p[11] = 0, 0, 0, 2
		p[12], p[13] = 0, 100
		p[100], p[101], p[102], p[103] = 0, 0, 0, 2
		sqliteTables(loop, func(string, []string, []string) {})
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	if i < len(c) {
		c[i] ^= 0xff
	}
	return c
}

// FuzzSQLite: any bytes after the header never panic, and what is read
// is at most the file.
func FuzzSQLite(f *testing.F) {
	f.Add([]byte(sqliteMagic + strings.Repeat("\x00", 200)))
	if _, err := exec.LookPath("sqlite3"); err == nil {
		f.Add(sqliteDBFile(f, "PRAGMA page_size=512;\nCREATE TABLE t (k TEXT, value TEXT);\nINSERT INTO t VALUES ('api_key', 'Tok-1234abcd'), ('x', '"+strings.Repeat("y", 900)+"');\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		total := 0
		sqliteTables(data, func(table string, cols, vals []string) {
			for _, v := range vals {
				total += len(v)
			}
		})
		if total > len(data)*maxSQLRows {
			t.Fatalf("%d bytes read from %d", total, len(data))
		}
	})
}
