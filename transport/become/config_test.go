package become

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseFlags(t *testing.T) {
	good := []struct {
		in   string
		want []string
	}{
		{"", []string{}},
		{"-H -S -n", []string{"-H"}}, // Ansible's default: -S/-n are agent's to decide
		{"-HSn", []string{"-HSn"}},
		{"-E", []string{"-E"}},
		{"--preserve-env=PATH,LANG -P", []string{"--preserve-env=PATH,LANG", "-P"}},
		{`'-H'  "-k"`, []string{"-H", "-k"}},
	}
	for _, tc := range good {
		got, err := ParseFlags(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseFlags(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	bad := []string{
		"-i", "-s", "-u root", "-g wheel", "--login", "-D /tmp", "--chdir=/", "-A", "-b", "-p x",
		"-Hi", "-- id", "id", "$(id)", "-H; id", "-H | x", "`id`", "-H\nid", "--preserve-env=A;B",
		"'unterminated", "-H >x", "X=1 -H", "-C 3", "-T 1", "--preserve-env=$X", `-\H`,
	}
	for _, in := range bad {
		got, err := ParseFlags(in)
		if err == nil || !errors.Is(err, ErrConfig) {
			t.Errorf("ParseFlags(%q) = %q, %v; want an ErrConfig error", in, got, err)
		}
	}
}

func TestCheckUserMethodExe(t *testing.T) {
	for _, u := range []string{"root", "postgres", "www-data", "_apt", "svc.deploy", "#0", "#1000", "machine$"} {
		if err := CheckUser(u); err != nil {
			t.Errorf("CheckUser(%q) = %v", u, err)
		}
	}
	for _, u := range []string{"", "-u", "-root", "1abc", "a b", "root;id", "#", "#x", "a\nb", "$(id)", "é", strings.Repeat("a", 65)} {
		if err := CheckUser(u); err == nil {
			t.Errorf("CheckUser(%q) accepted", u)
		}
	}
	for _, m := range []string{"", "sudo", " sudo ", "ansible.builtin.sudo"} {
		if err := CheckMethod(m); err != nil {
			t.Errorf("CheckMethod(%q) = %v", m, err)
		}
	}
	for _, m := range []string{"su", "doas", "pbrun", "runas", "machinectl", "ansible.builtin.su", "SUDO!"} {
		if err := CheckMethod(m); err == nil || !strings.Contains(err.Error(), "sudo") {
			t.Errorf("CheckMethod(%q) = %v, want a refusal naming what is supported", m, err)
		}
	}
	for _, e := range []string{"/usr/local/bin/sudo", "sudo"} {
		if err := CheckExe(e); err != nil {
			t.Errorf("CheckExe(%q) = %v", e, err)
		}
	}
	for _, e := range []string{"sudo -i", "-n", "a\nb", "x\x00"} {
		if err := CheckExe(e); err == nil {
			t.Errorf("CheckExe(%q) accepted", e)
		}
	}
	if err := (Config{Password: "a\nb"}).Validate(); err == nil {
		t.Error("a password with a line break was accepted")
	} else if strings.Contains(err.Error(), "a\nb") {
		t.Errorf("the error shows the password: %v", err)
	}
}

// TestSudoLineQuotes checks that user, exe and flags cannot break out of
// their words and that the password is never on the line.
func TestSudoLineQuotes(t *testing.T) {
	tr := &Transport{cfg: Config{User: "root", Exe: "/opt/my sudo", Flags: []string{"-H"}, Password: "s3cret'pw"}}
	line := tr.sudoLine("echo 'hi'", "~", "abcd")
	if strings.Contains(line, "s3cret") {
		t.Fatalf("password on the command line: %s", line)
	}
	if !strings.HasPrefix(line, `'/opt/my sudo' -S -p '[agent: sudo password] ' -u root -H -- /bin/sh -c `) {
		t.Errorf("line = %s", line)
	}
	tr.cfg.Password = ""
	if line := tr.sudoLine("true", "", "n"); !strings.Contains(line, " -n -u root ") || strings.Contains(line, "read -r agent_l") {
		t.Errorf("without a password: %s", line)
	}
}

func TestParseStat(t *testing.T) {
	fi, err := parseStat("x", "12 81a4 1700000000\n")
	if err != nil || fi.Size() != 12 || fi.Mode() != 0o644 || fi.IsDir() {
		t.Errorf("regular: %v %v", fi, err)
	}
	fi, err = parseStat("d", "4096 43ed 1\n") // 041755: sticky directory
	if err != nil || !fi.IsDir() || fi.Mode()&0o1000 == 0 && fi.Mode()&(1<<20) == 0 {
		t.Errorf("dir: %v %v", fi, err)
	}
	for _, bad := range []string{"", "1 2", "x 81a4 1", "1 zz 1", "-1 81a4 1", "1 81a4 1 extra"} {
		if _, err := parseStat("x", bad); err == nil {
			t.Errorf("parseStat(%q) accepted", bad)
		}
	}
}

// FuzzParseFlags: any input is an error or options that each pass the
// allow-list alone; never a panic.
func FuzzParseFlags(f *testing.F) {
	for _, s := range []string{"-H -S -n", "-E --preserve-env=A,B", "-i", "$(x)", "'-H", "-HSk", "a|b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		flags, err := ParseFlags(s)
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("error %v does not wrap ErrConfig", err)
			}
			return
		}
		for _, fl := range flags {
			if err := checkFlag(fl); err != nil || fl == "" || fl[0] != '-' || !utf8.ValidString(fl) && false {
				t.Fatalf("ParseFlags(%q) passed %q", s, fl)
			}
			if strings.ContainsAny(fl, " \t\n;|&$`'\"<>()") {
				t.Fatalf("ParseFlags(%q) passed %q", s, fl)
			}
		}
		if err := (Config{Flags: flags}).Validate(); err != nil {
			t.Fatalf("flags from ParseFlags fail Validate: %v", err)
		}
	})
}

// FuzzMarkerFilter: whatever sudo prints, the filter passes on exactly
// what follows the marker line and keeps the rest aside.
func FuzzMarkerFilter(f *testing.F) {
	f.Add([]byte("[agent: sudo password] "), []byte("out\n"), 3)
	f.Add([]byte(""), []byte("x"), 1)
	f.Fuzz(func(t *testing.T, pre, post []byte, chunk int) {
		if chunk <= 0 || chunk > 64 {
			chunk = 7
		}
		if strings.Contains(string(pre), "N0NCE ") {
			return
		}
		var out strings.Builder
		fl := &markerFilter{prefix: []byte("N0NCE "), out: &out}
		stream := append(append(append([]byte{}, pre...), "\nN0NCE 42 ok\n"...), post...)
		for i := 0; i < len(stream); i += chunk {
			fl.Write(stream[i:min(i+chunk, len(stream))])
		}
		fl.flush()
		pid, status, seen := fl.result()
		if len(pre) < maxPreamble/2 {
			if !seen || pid != 42 || status != "ok" || out.String() != string(post) {
				t.Fatalf("seen %v pid %d status %q out %q, want post %q", seen, pid, status, out.String(), post)
			}
		}
	})
}
