package testenv

import (
	"strings"
	"testing"

	"github.com/pkg/sftp"
)

// The Dropbear host is what it says: Dropbear, BusyBox's sh, no bash, the
// login user in its home, SFTP only when asked for, an exec request over
// 9,000 bytes ending the connection.
func TestDropbearHost(t *testing.T) {
	for _, withSFTP := range []bool{false, true} {
		d := StartDropbear(t, DropbearOptions{SFTP: withSFTP})
		c, err := d.Dial()
		if err != nil {
			t.Fatalf("%v; log:\n%s", err, d.Log())
		}
		defer c.Close()
		if v := string(c.ServerVersion()); !strings.HasPrefix(v, "SSH-2.0-dropbear") {
			t.Errorf("server version %q", v)
		}
		sess, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		out, err := sess.CombinedOutput(`readlink /bin/sh; command -v bash || echo nobash; id -u; pwd; sh -c 'echo $0'; sha256sum </dev/null | cut -c1-8`)
		sess.Close()
		want := "/bin/busybox\nnobash\n4242\n/home/tester\nsh\ne3b0c442\n"
		if err != nil || string(out) != want {
			t.Errorf("the host's shell: %v\n%s\nwant\n%s", err, out, want)
		}
		sc, err := sftp.NewClient(c)
		if withSFTP != (err == nil) {
			t.Errorf("SFTP %v: sftp client: %v", withSFTP, err)
		}
		if err == nil {
			if wd, err := sc.Getwd(); err != nil || wd != "/home/tester" {
				t.Errorf("sftp home %q %v", wd, err)
			}
			sc.Close()
		}
		sess, err = c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		sess.Start("echo " + strings.Repeat("x", 9100))
		sess.Wait()
		if err := c.Wait(); err == nil || !strings.Contains(d.Log(), "String too long") {
			t.Errorf("an exec request of 9,105 bytes: connection %v; log:\n%s", err, d.Log())
		}
	}
}
