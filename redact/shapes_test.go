package redact

import (
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The secret a file holds is hidden in each shape real tools give it:
// the tools run for real on a real file, their output goes through a Set
// that knows the value, and the oracle (written apart from the matcher)
// finds no 8-byte window of it in any shape. Without the set (the
// patterns alone) every one of them leaks.
func TestShapesOfRealTools(t *testing.T) {
	const secret = "Xk9#mQ2$vL7=pR4/wz+T8~q"
	dir := t.TempDir()
	for _, pre := range []string{"", "x", "xy"} { // the three base64 alignments
		content := pre + "host=db.example.com\nvalue " + secret + "\nport=5432\n"
		if err := os.WriteFile(filepath.Join(dir, "f"+pre), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "only"), []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	cmds := []string{
		"cat f", "base64 f", "base64 fx", "base64 fxy", "base64 -w0 fxy", "basenc --base64url fx",
		"base64 -w 7 f", "xxd f", "xxd fx", "xxd -p fxy", "xxd -u fx", "xxd -c 5 f", "hexdump -C f", "hexdump -C fx",
		"od -t x4 f", "od -t x4 fx", "od -t x4 fxy", "xxd -e f", "xxd -e fxy", "xxd -p -c 4 only | paste -sd ' '",
		"hexdump f", "hexdump fx", "od -c f", "od -c fxy", "od -x f", "od -x fx", "od -A x -t x1z f", "od -t x1 fx",
		"rev f", "fold -w 3 f", "fold -w 1 only", "sed 's/./& /g' f", "tr -d '\\n' < f | fold -w 5",
		"python3 -c \"import urllib.parse,sys; print(urllib.parse.quote(open('f').read(), safe=''))\"",
		"python3 -c \"import quopri,sys; sys.stdout.buffer.write(quopri.encodestring(open('f','rb').read()))\"",
		"python3 -c \"import sys; print(open('only').read().encode().hex(':'))\"",
		"python3 -c \"import sys; print(', '.join('0x%02X' % b for b in open('only','rb').read()))\"",
		"printf 'prefix-%s-suffix' \"$(cat only)\" | base64",
		"rev only | xxd -p",
		"base32 f", "base32 fx", "base32 fxy", "base32 -w0 only", "printf 'ab%s' \"$(cat only)\" | base32",
		"bash -c 'printf \"%q\\n\" \"$(cat only)\"'", "bash -c 'x=$(cat only); echo \"${x@Q}\" | rev'",
		// case changes
		"tr a-z A-Z < f", "tr A-Z a-z < fx", "tr a-zA-Z A-Za-z < f", "bash -c 'x=$(cat only); echo \"${x^^}\"'",
		"bash -c 'x=$(cat only); echo \"${x,,}\" | rev'", "python3 -c \"print(open('only').read().swapcase())\"",
		// octal and decimal dumps: bytes, 16- and 32-bit words
		"od f", "od fx", "od -b f", "od -t o1 fxy", "od -t d1 f", "od -An -tu1 fx", "od -d f", "od -d fx", "od -s fxy",
		"od -i f", "od -i fx", "od -t d4 fxy", "od -An -i only", "hexdump -d fx", "hexdump -o f", "hexdump -b fxy",
		"od -l fx", "od -t o4 fxy", "od -An -tu1 -w1 only", "od -An -w2 -d fx",
		"python3 -c \"print(list(open('only','rb').read()))\"",
		// without -v: a line the same as the one before it is a '*'
		"bash -c 's=$(cat only); p=\"0123456789ab${s:0:4}\"; printf %s%s%s \"$p\" \"$p\" \"${s:4}\" | od -c'",
		"bash -c 's=$(cat only); p=\"0123456789ab${s:0:4}\"; printf %s%s%s \"$p\" \"$p\" \"${s:4}\" | od -An -tx1'",
		"bash -c 's=$(cat only); p=\"0123456789ab${s:0:4}\"; printf %s%s%s \"$p\" \"$p\" \"${s:4}\" | hexdump -C'",
		"bash -c 's=$(cat only); p=\"0123456789ab${s:0:4}\"; printf %s%s%s \"$p\" \"$p\" \"${s:4}\" | od -b'",
		// UTF-16; hex with '.' between its bytes
		"iconv -t UTF-16LE f", "iconv -t UTF-16BE fx", "iconv -t UTF-16 fxy",
		"xxd -p fx | sed 's/../&./g'", "od -An -tx1 -w1 only | tr -d ' ' | paste -sd .",
		// a separator between the value's own characters; hex with '_';
		// numbers one a line with no space anywhere
		"sed 's/./&-/g' only", "sed 's/./&./g' f", "sed 's/./&_/g' fx", "fold -w1 only | paste -sd ,",
		"grep -o . only | tr '\\n' '|'", "rev only | sed 's/./&, /g'", "sed 's/./&::/g' fxy",
		"python3 -c \"print(list(open('only').read()))\"", "rev only | sed 's/./&+/g'",
		"xxd -p only | sed 's/../&_/g'", "xxd -p f | sed 's/../&_/g'", "od -An -tx1 -v -w1 only | tr -d ' ' | paste -sd _",
		"od -An -tu1 -v -w1 only | tr -d ' '", "od -An -tu1 -v -w1 f | tr -d ' '", "od -An -to1 -v -w1 fx | tr -d ' '",
	}
	set := NewSet()
	set.Add("DB_VALUE", secret, Known)
	for _, c := range cmds {
		cmd := exec.Command("sh", "-c", c)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if how := leak(String(string(out)), secret); how == "" && c != "rev only | xxd -p" {
			t.Errorf("%s: the patterns alone hide it (the test would not see the set's work):\n%s", c, out)
		}
		got := set.String(string(out))
		if how := leak(got, secret); how != "" {
			t.Errorf("%s: leaks (%s):\n%s", c, how, got)
		}
		if strings.Contains(string(out), "host=db.example.com") && !strings.Contains(got, "host=db.example.com") {
			t.Errorf("%s: non-secret text lost:\n%s", c, got)
		}
	}
}

// A value added to the set is hidden in the shapes the issue lists, built
// here by hand: split on white space, URL-encoded in part, reversed, hex
// with separators in either case, base64 in the middle of a stream.
func TestShapesByHand(t *testing.T) {
	const secret = "s3cr3t-V4lue_9x"
	set := NewSet()
	set.Add("TOKEN", secret, Known)
	for _, in := range []string{
		"a " + secret + " b",
		"s3c r3t-V\n4lue _9x",
		"s3cr3t%2DV4lue%5F9x",
		"q=s3cr3t-V4lue=5F9x",
		"s3cr3t-V4l=\nue_9x",
		reverse(secret),
		"73:33:63:72:33:74:2D:56:34:6C:75:65:5F:39:78",
		"\\x73\\x33\\x63\\x72\\x33\\x74\\x2d\\x56\\x34\\x6c\\x75\\x65\\x5f\\x39\\x78",
		`\s\3\c\r\3\t\-\V\4\l\u\e\_\9\x`, // sed 's/./\\&/g'
	} {
		got, names := set.Named(in, false)
		if leak(got, secret) != "" || strings.Contains(strings.ReplaceAll(got, `\`, ""), "4lue") {
			t.Errorf("%q -> %q", in, got)
		}
		if len(names) != 1 || names[0] != "TOKEN" {
			t.Errorf("%q: names %v", in, names)
		}
	}
}

// Values too short or found under a secret name but plainly no secret are
// not added; Known values are hidden under --send-secrets, Found ones are
// not.
func TestSetAdd(t *testing.T) {
	set := NewSet()
	for _, v := range []string{"1", "true", "hunter2", "/etc/ssl/private/key.pem", "{{ vault_pw }}", "$DB_PASS", "********", "xxxxxxxxxx"} {
		if set.Add("PASSWORD", v, Found) {
			t.Errorf("added %q", v)
		}
	}
	if !set.Add("K", "known-value-1", Known) || !set.Add("F", "found-value-2", Found) || set.Add("F", "found-value-2", Found) {
		t.Fatal("Add")
	}
	got, _ := set.Named("known-value-1 found-value-2", true)
	if got != "[REDACTED:K] found-value-2" {
		t.Errorf("--send-secrets: %q", got)
	}
	got, names := set.Named("known-value-1 found-value-2", false)
	if got != "[REDACTED:K] [REDACTED:F]" || len(names) != 2 {
		t.Errorf("%q %v", got, names)
	}
	var nilSet *Set
	if got := nilSet.String("PASSWORD=abc known-value-1"); got != "PASSWORD=[REDACTED] known-value-1" {
		t.Errorf("nil set: %q", got)
	}
}

// Once seen, always hidden: a value the patterns redact in one output is
// hidden in a later one where nothing names it, in any shape.
func TestLearnedByPatterns(t *testing.T) {
	set := NewSet()
	if got := set.String("export DB_PASSWORD='Tr0ub4dor&3xyz'"); strings.Contains(got, "Tr0ub4dor") {
		t.Fatal(got)
	}
	later := "value: Tr0ub4dor&3xyz\n" + reverse("Tr0ub4dor&3xyz")
	got, names := set.Named(later, false)
	if strings.Contains(got, "Tr0ub4dor") || strings.Contains(got, "zyx3&rod4bu") || len(names) != 1 || names[0] != "DB_PASSWORD" {
		t.Errorf("%q %v", got, names)
	}
	// a private key's lines, each alone
	body := []string{"MIIEowIBAAKCAQEAuX1q2oJbWm7P4r0bYk3nqB1a9Q8lZ0xg7bVqGfT5b2mK1wKd", "c3VwZXJzZWNyZXRrZXlib2R5bGluZXR3b2lzaGVyZWZvcnRoZXRlc3Rpbmc0NQ"}
	pem := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Join(body, "\n") + "\n-----END RSA PRIVATE KEY-----\n"
	set.String(pem)
	for _, line := range body {
		if got := set.String("line: " + line + "\n"); strings.Contains(got, line[10:30]) {
			t.Errorf("PEM line kept: %q", got)
		}
	}
}

// A value's hex split over lines is hidden when a line starts with six
// or more hex digits and a space, which a dump's offset column would
// (hexdump -e '16/1 "%02x" "\n"' pads its last line with spaces; hex in
// groups of eight): such a line is no dump unless its offset starts with
// 0, or is od's seven octal digits, and has a body after it.
func TestHexLinesAreNoOffsets(t *testing.T) {
	const secret = "DotEnvQ-6620kk124"
	set := NewSet()
	set.Add("DB_PASS", secret, Found)
	h := hex.EncodeToString([]byte(secret))
	for _, in := range []string{
		"6578706f72742044425f504153533d27\n" + h[:32] + "\n" + h[32:] + "270a     \n",
		h[:8] + " " + h[8:16] + " " + h[16:24] + " " + h[24:] + " 0a",
		"x\n" + h[:10] + "\n" + h[10:20] + " \n" + h[20:],
	} {
		got := set.String(in)
		if strings.Contains(strings.Join(strings.Fields(got), ""), h[8:24]) {
			t.Errorf("%q: not hidden: %q", in, got)
		}
	}
	// a dump's offsets are still left out: the value's hex across two
	// od -x lines
	out := "0000000 6f44 4574 766e 2d51 3636 3032 6b6b 3231\n0000020 0a34\n0000022\n"
	if got := set.String(out); !strings.Contains(got, "REDACTED") {
		t.Errorf("od -x: %q", got)
	}
}
