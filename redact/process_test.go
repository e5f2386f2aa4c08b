package redact

import (
	"strings"
	"testing"
)

// A process listing (ps -eo args) hides passwords given on command lines:
// -pVALUE attached to any client, --password and --token values,
// PASSWORD=-style assignments and URL userinfo; options that only look
// like -p stay.
func TestProcessListing(t *testing.T) {
	listing := strings.Join([]string{
		"/usr/bin/mysqldump -uroot -pS3cretPW1 appdb",
		"mongodump -pM0ng0-Secret --db x",
		"/opt/tool --password hunter2xyz --verbose",
		"/opt/tool --token=tok_abcdef123 run",
		"env PGPASSWORD=PgEnvPw99 psql -h db",
		"psql postgres://app:UrlPw-4455@db/app",
		"gcc -pthread -pedantic -o x x.c",
		"docker run -p8080:80 -p127.0.0.1:9000:9000 img",
		"find . -print0",
	}, "\n")
	got := String(listing)
	for _, secret := range []string{"S3cretPW1", "M0ng0-Secret", "hunter2xyz", "tok_abcdef123", "PgEnvPw99", "UrlPw-4455"} {
		if strings.Contains(got, secret) {
			t.Errorf("%q kept:\n%s", secret, got)
		}
	}
	for _, kept := range []string{"-pthread", "-pedantic", "-p8080:80", "-p127.0.0.1:9000:9000", "-print0", "appdb"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%q lost:\n%s", kept, got)
		}
	}
}
