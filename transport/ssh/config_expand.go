package ssh

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	osuser "os/user"
	"strings"
)

// percentExpand replaces %-tokens (and %% with %) from tok; an unknown
// token is an error, as in ssh.
func percentExpand(s string, tok map[byte]string) (string, error) {
	return dollarPercentExpand(s, tok, false)
}

// dollarPercentExpand is ssh's vdollar_percent_expand: %-tokens and, when
// dollar is set, ${VAR} from the environment (an unset one is an error).
func dollarPercentExpand(s string, tok map[byte]string, dollar bool) (string, error) {
	if !strings.ContainsAny(s, "%$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if dollar && c == '$' && i+1 < len(s) && s[i+1] == '{' {
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", fmt.Errorf("environment variable %q missing closing '}'", s[i:])
			}
			name := s[i+2 : i+2+end]
			if name == "" {
				return "", errors.New("zero-length environment variable")
			}
			v, ok := os.LookupEnv(name)
			if !ok {
				return "", fmt.Errorf("environment variable ${%s} has no value", name)
			}
			b.WriteString(v)
			i += 2 + end
			continue
		}
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i++; i == len(s) {
			return "", errors.New("invalid format: '%' at the end")
		}
		if s[i] == '%' {
			b.WriteByte('%')
			continue
		}
		v, ok := tok[s[i]]
		if !ok {
			return "", fmt.Errorf("unknown token %%%c", s[i])
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

// expandPath expands a file name setting: "~" first, then %-tokens and
// ${VAR}.
func expandPath(spec, home string, tok map[byte]string) (string, error) {
	p, err := tildeExpand(spec, home)
	if err != nil {
		return "", err
	}
	return dollarPercentExpand(p, tok, true)
}

// tildeExpand expands "~/…" to home and "~user/…" to user's home (ssh's
// tilde_expand_filename; like it, "~name" without a slash is home/name).
func tildeExpand(f, home string) (string, error) {
	rest, ok := strings.CutPrefix(f, "~")
	if !ok {
		return f, nil
	}
	dir := home
	slash := strings.IndexByte(rest, '/')
	if slash > 0 {
		name := rest[:slash]
		u, err := osuser.Lookup(name)
		if err != nil {
			return "", fmt.Errorf("~%s: no such user", name)
		}
		dir = u.HomeDir
	}
	if slash >= 0 {
		rest = rest[slash+1:]
	}
	if strings.HasSuffix(dir, "/") {
		return dir + rest, nil
	}
	return dir + "/" + rest, nil
}

// convtime parses an OpenSSH time value ("90", "1m30s", "1h"; units s m h d
// w, any case) to seconds; -1 means invalid.
func convtime(s string) int {
	units := map[byte]int{'s': 1, 'm': 60, 'h': 3600, 'd': 86400, 'w': 604800}
	if s == "" {
		return -1
	}
	total := 0
	for s != "" {
		n, rest, ok := strtol(s)
		if !ok || n < 0 {
			return -1
		}
		mult := 1
		if rest != "" {
			if mult, ok = units[asciiLower(rest[:1])[0]]; !ok {
				return -1
			}
			rest = rest[1:]
		}
		if n > math.MaxInt32/int64(mult) || int64(total) > math.MaxInt32-n*int64(mult) {
			return -1
		}
		total += int(n) * mult
		s = rest
	}
	return total
}

// strtol reads a base-10 integer like C's strtol: leading blanks, an
// optional sign, digits (saturating). ok is false when no digit was read.
func strtol(s string) (n int64, rest string, ok bool) {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\n\v\f\r", s[i]) >= 0 {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
		if n < math.MaxInt64/10 {
			n = n*10 + int64(s[i]-'0')
		}
	}
	if i == start {
		return 0, s, false
	}
	if neg {
		n = -n
	}
	return n, s[i:], true
}

// strtonum is OpenBSD's strtonum for the range [lo, hi].
func strtonum(s string, lo, hi int64) (int64, error) {
	n, rest, ok := strtol(s)
	switch {
	case !ok || rest != "":
		return 0, errors.New("invalid")
	case n < lo:
		return 0, errors.New("too small")
	case n > hi:
		return 0, errors.New("too large")
	}
	return n, nil
}

// a2port converts a port number or a service name (from /etc/services);
// -1 when it is neither. 0 is returned for "0", which callers refuse.
func a2port(s string) int {
	if n, err := strtonum(s, 0, 65535); err == nil {
		return int(n)
	}
	if s == "" || strings.ToLower(s) != s || strings.ContainsAny(s, " \t/") {
		return -1 // getservbyname is case-sensitive; Go's lookup is not
	}
	p, err := net.LookupPort("tcp", s)
	if err != nil || p <= 0 {
		return -1
	}
	return p
}

// atoiErr parses a non-negative int like ssh's atoi_err.
func atoiErr(s string) (int, error) {
	n, err := strtonum(s, 0, math.MaxInt32)
	return int(n), err
}

// connectionHash is %C: the SHA-1 of local host, host, port and user.
func connectionHash(local, host, port, user string) string {
	sum := sha1.Sum([]byte(local + host + port + user))
	return hex.EncodeToString(sum[:])
}
