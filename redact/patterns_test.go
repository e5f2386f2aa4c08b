package redact

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	pem := "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"
	tests := []struct{ in, want string }{
		{"ls -la /tmp", "ls -la /tmp"},
		{"", ""},
		{`curl -H 'Authorization: Bearer xyz123' https://api`, `curl -H 'Authorization: Bearer [REDACTED]' https://api`},
		{`curl -H "Authorization: token ghp_abc" x`, `curl -H "Authorization: token [REDACTED]" x`},
		{`curl -H 'X-Api-Key: abc' x`, `curl -H 'X-Api-Key: [REDACTED]' x`},
		{"PASSWORD=xyz cmd", "PASSWORD=[REDACTED] cmd"},
		{"MYSQL_PWD=a DB_PASSWORD='s p' ./run", "MYSQL_PWD=[REDACTED] DB_PASSWORD=[REDACTED] ./run"},
		{"cd /srv && PWD=/srv OLDPWD=/ make", "cd /srv && PWD=/srv OLDPWD=/ make"},
		{`export GITHUB_TOKEN="abc def"`, `export GITHUB_TOKEN=[REDACTED]`},
		{"aws_secret_access_key = wJalrXUtnFEMI", "aws_secret_access_key = [REDACTED]"},
		{`{"password": "hunter2", "user": "bob"}`, `{"password": [REDACTED], "user": "bob"}`},
		{"mytool --token abc --verbose", "mytool --token [REDACTED] --verbose"},
		{"mytool --api-key=abc", "mytool --api-key=[REDACTED]"},
		{"key AKIAIOSFODNN7EXAMPLE here", "key [REDACTED] here"},
		{"OPENAI=sk-proj-abcdefghijklmnopqrstuv", "OPENAI=[REDACTED]"},
		{"gh auth ghp_0123456789abcdefghijABCDEFGHIJ", "gh auth [REDACTED]"},
		{"got bearer eyJhbGciOiJIUzI1NiJ9.x.y ok", "got bearer [REDACTED] ok"},
		{"before\n" + pem + "\nafter", "before\n[REDACTED]\nafter"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIEow cut off", "[REDACTED]"},
		{"-----BEGIN PUBLIC KEY-----\nMIIB", "-----BEGIN PUBLIC KEY-----\nMIIB"},
		{"git clone https://bob:s3cret@example.com/r.git", "git clone https://bob:[REDACTED]@example.com/r.git"},
		{"echo task-abcdefghijklmnopqrstuvwxyz", "echo task-abcdefghijklmnopqrstuvwxyz"},
		{"Enter password for user", "Enter password for user"},
		{"PASSWORD=[REDACTED] cmd", "PASSWORD=[REDACTED] cmd"},
		// Passwords in command-specific options and operands.
		{"mysql -uroot -pS3cret app", "mysql -uroot -p[REDACTED] app"},
		{"sudo /usr/bin/mysqldump -p'a b' db > x", "sudo /usr/bin/mysqldump -p[REDACTED] db > x"},
		{"mysql --password=x app", "mysql --password=[REDACTED] app"},
		{"curl -u admin:hunter2 https://x", "curl -u admin:[REDACTED] https://x"},
		{"curl --user 'admin:hunter2' x", "curl --user 'admin:[REDACTED]' x"},
		{"curl -s --user=admin:hunter2 x", "curl -s --user=admin:[REDACTED] x"},
		{"export DB_PASS=x; echo ok", "export DB_PASS=[REDACTED]; echo ok"},
		{`{"smtp_pass": "x"}`, `{"smtp_pass": [REDACTED]}`},
		{"PGPASSWORD=x psql -h db", "PGPASSWORD=[REDACTED] psql -h db"},
		{"sshpass -p x ssh -p 22 h", "sshpass -p [REDACTED] ssh -p 22 h"},
		{"sshpass -pS3cret scp a h:b", "sshpass -p[REDACTED] scp a h:b"},
		{"htpasswd -b /etc/nginx/.htpasswd bob s3cret", "htpasswd -b /etc/nginx/.htpasswd bob [REDACTED]"},
		{"htpasswd -nbB bob s3cret", "htpasswd -nbB bob [REDACTED]"},
		{"mysql -uroot -p[REDACTED] app", "mysql -uroot -p[REDACTED] app"},
		// A secret's unquoted value ends at a shell metacharacter.
		{"echo token=ghp_abc; echo done", "echo token=[REDACTED]; echo done"},
		{"API_KEY=abc&& run; TOKEN=x|tee y", "API_KEY=[REDACTED]&& run; TOKEN=[REDACTED]|tee y"},
		{"(SECRET=s1) && DB_PASS=p2)", "(SECRET=[REDACTED]) && DB_PASS=[REDACTED])"},
		{"export A_TOKEN=abc\necho next", "export A_TOKEN=[REDACTED]\necho next"},
		// Credentials in URL query parameters.
		{"curl 'https://api.example.com/v1?api-key=SECRET1&x=1'", "curl 'https://api.example.com/v1?api-key=[REDACTED]&x=1'"},
		{"GET https://maps.example.com/q?key=SECRET2#frag", "GET https://maps.example.com/q?key=[REDACTED]#frag"},
		{"https://h/p?a=1&token=SECRET3&b=2", "https://h/p?a=1&token=[REDACTED]&b=2"},
		{"https://h/cb?access_token=SECRET4", "https://h/cb?access_token=[REDACTED]"},
		{"https://h/p?page=2&sort=name", "https://h/p?page=2&sort=name"},
		// .netrc passwords, on one line or several, also in JSON text.
		{"machine example.com login bob password Zz9SecretNetrc", "machine example.com login bob password [REDACTED]"},
		{"machine a.example\n  login bob\n  password Zz9x\n", "machine a.example\n  login bob\n  password [REDACTED]\n"},
		{"machine a.example\nlogin bob\npasswd Zz9y\n", "machine a.example\nlogin bob\npasswd [REDACTED]\n"},
		{`{"content":"machine h login u password Zz9z\nmachine g login v password Qq1"}`,
			`{"content":"machine h login u password [REDACTED]\nmachine g login v password [REDACTED]"}`},
		{"default login anonymous password me@example.com", "default login anonymous password [REDACTED]"},
		{"Password for user bob: ok", "Password for user bob: ok"},
		// Not secrets.
		{"ssh -p 22 host; scp -P 22 a host:b", "ssh -p 22 host; scp -P 22 a host:b"},
		{"sort -u names.txt | uniq -c", "sort -u names.txt | uniq -c"},
		{"curl -s http://host:8080/a; mysql -p app", "curl -s http://host:8080/a; mysql -p app"},
		{"docker run -u 1000:1000 img; ps -u root", "docker run -u 1000:1000 img; ps -u root"},
		{"--- PASS: TestX (0.00s)\nPASS", "--- PASS: TestX (0.00s)\nPASS"},
		{"bypass=1 compass=north passes=3", "bypass=1 compass=north passes=3"},
		{"htpasswd -c .htpasswd bob", "htpasswd -c .htpasswd bob"},
	}
	for _, tc := range tests {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestRedact(t *testing.T) {
	in := map[string]any{
		"command":       "PASSWORD=xyz ./deploy.sh",
		"password":      "hunter2",
		"API_KEY":       "abc",
		"Authorization": "Bearer x",
		"private_key":   []any{"a"},
		"db_passwd":     42,
		"timeout":       30,
		"regex":         true,
		"ratio":         0.5,
		"empty":         nil,
		"token":         nil,
		"headers":       map[string]any{"X-Auth-Token": "t", "Accept": "json"},
		"env":           map[string]string{"SECRET": "s", "HOME": "/root"},
		"args":          []any{"--token", "abc", 3, map[string]any{"apikey": "k"}},
		"argv":          []string{"x", "AKIAIOSFODNN7EXAMPLE"},
		"raw":           []byte("Authorization: Bearer q"),
		"db_pass":       "x",
		"bypass":        "y",
	}
	before := fmt.Sprint(in)
	got := Params(in)
	want := map[string]any{
		"command":       "PASSWORD=[REDACTED] ./deploy.sh",
		"password":      Redacted,
		"API_KEY":       Redacted,
		"Authorization": Redacted,
		"private_key":   Redacted,
		"db_passwd":     Redacted,
		"timeout":       30,
		"regex":         true,
		"ratio":         0.5,
		"empty":         nil,
		"token":         nil,
		"headers":       map[string]any{"X-Auth-Token": Redacted, "Accept": "json"},
		"env":           map[string]string{"SECRET": Redacted, "HOME": "/root"},
		"args":          []any{"--token", "abc", 3, map[string]any{"apikey": Redacted}},
		"argv":          []string{"x", Redacted},
		"raw":           "Authorization: Bearer [REDACTED]",
		"db_pass":       Redacted,
		"bypass":        "y",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Redact:\n got %#v\nwant %#v", got, want)
	}
	if after := fmt.Sprint(in); after != before {
		t.Errorf("input modified:\n%s\n%s", before, after)
	}
	if Params(nil) != nil {
		t.Error("Params(nil) != nil")
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("curl -H 'Authorization: Bearer ", "' x", "x")
	f.Add("PASSWORD='", "", "AbC")
	f.Add("-----BEGIN RSA PRIVATE KEY-----\n", "\n-----END", "zz")
	f.Add(`{"token": "`, `"}`, "")
	f.Add("mysql -uroot -p", " db", "curl -u a:")
	f.Add("sshpass -p ", " ssh h", "htpasswd -nb u ")
	f.Fuzz(func(t *testing.T, prefix, suffix, tail string) {
		const secret = "Zq7Kx9Wm2Rt5Yp8Lb3"
		aws := "AKIA" + "ZQ7KX9WM2RT5YP8L"
		in := map[string]any{
			"password": prefix + secret + suffix,
			"command":  prefix + " PASSWORD=" + secret + " " + suffix,
			"output":   prefix + " " + aws + " " + suffix,
			"nested":   []any{map[string]any{"x": prefix + suffix + tail}},
		}
		out := Params(in)
		if out["password"] != Redacted {
			t.Fatalf("password: %q", out["password"])
		}
		for _, k := range []string{"command", "output"} {
			s := out[k].(string)
			if strings.Contains(s, secret) || strings.Contains(s, aws) {
				t.Fatalf("%s leaks: %q", k, s)
			}
		}
		_ = String(prefix + suffix + tail)
	})
}

// FuzzRedactGate: the gates of String never skip a pattern that
// would have changed the text: gated and ungated redaction agree.
func FuzzRedactGate(f *testing.F) {
	for _, s := range []string{
		"PASSWORD=x", "Authorization: Bearer abcdefghijk", "curl -u u:p https://h", "mysql -psecret",
		"https://u:p@h/x?key=v&sig=w", "machine h login u password p", "AKIAABCDEFGHIJKLMNOP",
		"ghp_abcdefghijklmnopqrstuvwxyz", "-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----",
		"DB_PWD=x", "paſſword=x", "K_TOKEN=x", "ok", "execute_command", "sshpass -p s ssh h",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := String(s), redactGated(s, redactGate{all: true, whole: true}, plainMark); got != want {
			t.Fatalf("String(%q) = %q, ungated %q", s, got, want)
		}
		// inside a text long enough to be gated line by line
		pad := strings.Repeat("an ordinary line of output\n", 200)
		long := pad + s + "\n" + pad
		if got, want := String(long), redactGated(long, redactGate{all: true, whole: true}, plainMark); got != want {
			t.Fatalf("String(pad+%q+pad) differs from ungated", s)
		}
	})
}

// byLines changes nothing on real text: the benign corpus (this
// repository's docs and code, dumps) and the shapes test's outputs are
// redacted the same line-gated or whole.
func TestByLinesSameAsWhole(t *testing.T) {
	for _, size := range []int{8 << 10, 256 << 10} {
		c := benignCorpus(t, size)
		c += "\nexport DB_PASSWORD='multi\nline\nvalue'\ncurl -u user:pw https://h\nmysql -pSecr3tPW x\n"
		got := redactGated(c, newRedactGate(c), plainMark)
		want := redactGated(c, redactGate{all: true, whole: true}, plainMark)
		if got != want {
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Fatalf("size %d: differs at %d:\n%q\n%q", size, i, got[max(0, i-80):min(len(got), i+80)], want[max(0, i-80):min(len(want), i+80)])
				}
			}
			t.Fatalf("size %d: lengths %d, %d", size, len(got), len(want))
		}
	}
}

// A large text's netrc entries are found where their words are (the
// gate's regular expression is not run over the whole text), with the
// same result as over the whole text, whatever the case and the white
// space between the entry's tokens.
func TestNetrcInLargeText(t *testing.T) {
	pad := strings.Repeat("an ordinary line of output\n", 300)
	for _, entry := range []string{
		"machine h login u password Netrc-Pw1",
		"  machine h\n\tlogin u\n\tpassword Netrc-Pw1",
		"MACHINE h\n\n\n\n\n\n\n\nLOGIN u password Netrc-Pw1",
		"x 'default login u password Netrc-Pw1",
		"machine h.example.com\n" + strings.Repeat("\n", 9) + "password Netrc-Pw1",
	} {
		long := pad + entry + "\n" + pad
		got := String(long)
		want := redactGated(long, redactGate{all: true, whole: true}, plainMark)
		if got != want {
			t.Errorf("%q: gated differs from whole", entry)
		}
		if strings.Contains(got, "Netrc-Pw1") {
			t.Errorf("%q: password kept", entry)
		}
	}
	// not an entry: the words alone
	long := pad + "the default machine password policy\n" + pad
	if got := String(long); got != long {
		t.Errorf("prose changed: %q", removedPart(long, got))
	}
}

func removedPart(in, out string) string {
	for i := range min(len(in), len(out)) {
		if in[i] != out[i] {
			return out[i:min(len(out), i+60)]
		}
	}
	return ""
}
