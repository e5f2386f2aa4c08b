package redact

import (
	"slices"
	"strings"
	"testing"
)

// Named replaces each kind of secret issue 14 lists by
// [REDACTED:NAME] and says which names it withheld; String replaces
// the same spans by [REDACTED].
func TestNamed(t *testing.T) {
	for _, tc := range []struct {
		in, secret, want string
	}{
		{"DB_PASSWORD=hunter2xyz\n", "hunter2xyz", "DB_PASSWORD=[REDACTED:DB_PASSWORD]\n"},
		{"export AWS_SECRET_ACCESS_KEY='wJalrXUtnFEMI/K7MDENG'", "wJalrXUtnFEMI", "export AWS_SECRET_ACCESS_KEY=[REDACTED:AWS_SECRET_ACCESS_KEY]"},
		{"AWS_REGION=eu-west-3", "eu-west-3", "AWS_REGION=[REDACTED:AWS_REGION]"},
		{"stripe_key: rk_live_abcdef", "rk_live_abcdef", "stripe_key: [REDACTED:STRIPE_KEY]"},
		{"GITHUB_TOKEN=abc123def456", "abc123def456", "GITHUB_TOKEN=[REDACTED:GITHUB_TOKEN]"},
		{"app.secret = s3cr3tv4lue", "s3cr3tv4lue", "app.secret = [REDACTED:APP_SECRET]"},
		{"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----\n", "b3BlbnNzaC1rZXk", "[REDACTED:PRIVATE_KEY]\n"},
		{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.x", "eyJhbGciOiJIUzI1NiJ9", "Authorization: Bearer [REDACTED:AUTHORIZATION]"},
		{"Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA", "Authorization: Basic [REDACTED:AUTHORIZATION]"},
		{"got bearer abcdefgh12345678 back", "abcdefgh12345678", "got bearer [REDACTED:BEARER_TOKEN] back"},
		{"url = https://deploy:Pa55w0rdX@git.example.com/r.git", "Pa55w0rdX", "url = https://deploy:[REDACTED:URL_PASSWORD]@git.example.com/r.git"},
		{"id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "id [REDACTED:AWS_ACCESS_KEY_ID]"},
		{"mysql -pS3cretPW -e 'select 1'", "S3cretPW", "mysql -p[REDACTED:PASSWORD] -e 'select 1'"},
		{"GET /x?api_key=abcd1234 HTTP/1.1", "abcd1234", "GET /x?api_key=[REDACTED:API_KEY] HTTP/1.1"},
	} {
		got, names := Named(tc.in)
		if got != tc.want || strings.Contains(got, tc.secret) {
			t.Errorf("Named(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if len(names) == 0 || !strings.Contains(got, NamedMark(names[0])) {
			t.Errorf("Named(%q): names %v", tc.in, names)
		}
		if plain := String(tc.in); strings.Contains(plain, tc.secret) || !strings.Contains(plain, Redacted) {
			t.Errorf("String(%q) = %q", tc.in, plain)
		}
	}
	// ordinary text is left alone, and names come once each
	for _, s := range []string{"monkey=1 keyboard: us", "primary key (id)", "PASS: TestX", "hello"} {
		if got, names := Named(s); got != s || names != nil {
			t.Errorf("Named(%q) = %q %v", s, got, names)
		}
	}
	_, names := Named("A_TOKEN=x1 A_TOKEN=x2 B_SECRET=y")
	if !slices.Equal(names, []string{"A_TOKEN", "B_SECRET"}) {
		t.Errorf("names %v", names)
	}
}

// Named takes any text: never a panic, no named mark without a
// name, and the same spans as String.
func FuzzNamed(f *testing.F) {
	for _, s := range []string{"DB_PASSWORD=x", "https://u:p@h", "-----BEGIN RSA PRIVATE KEY-----", "AWS_X=1 ?key=2", "\xff=\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, names := Named(s)
		for _, n := range names {
			if n == "" || MarkName(n) != n {
				t.Fatalf("name %q", n)
			}
		}
		if (got == s) != (String(s) == s) && !strings.Contains(s, "[REDACTED") {
			t.Fatalf("Named changed %q to %q but String to %q", s, got, String(s))
		}
	})
}
