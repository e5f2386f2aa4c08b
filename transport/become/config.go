package become

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Methods are the become methods agent supports (ansible_become_method).
var Methods = []string{"sudo"}

// DefaultUser is who steps become when no user is named (Ansible's
// become_user default).
const DefaultUser = "root"

// ErrConfig marks a become setting agent cannot act on.
var ErrConfig = errors.New("bad become setting")

// Config says how to become another user on one host.
type Config struct {
	// User is the user to become; "" means DefaultUser.
	User string
	// Password is the become password fed to `sudo -S` on its standard
	// input; "" runs `sudo -n`, which fails instead of asking when sudo
	// wants a password. It is a secret: never on a command line or in an
	// error.
	Password string
	// Exe is the sudo program (ansible_become_exe); "" means "sudo".
	Exe string
	// Flags are extra sudo options (ansible_become_flags, parsed by
	// ParseFlags); nil means Ansible's "-H" (the target user's $HOME).
	Flags []string
}

// user returns the user to become.
func (c Config) user() string {
	if c.User == "" {
		return DefaultUser
	}
	return c.User
}

// Validate checks the user, program and flags.
func (c Config) Validate() error {
	if err := CheckUser(c.user()); err != nil {
		return err
	}
	if err := CheckExe(c.Exe); err != nil {
		return err
	}
	for _, f := range c.Flags {
		if err := checkFlag(f); err != nil {
			return err
		}
	}
	if strings.ContainsAny(c.Password, "\n\r\x00") {
		return fmt.Errorf("%w: the become password contains a line break or NUL byte, which sudo -S cannot read", ErrConfig)
	}
	return nil
}

// CheckMethod accepts the become methods agent supports ("" is sudo).
func CheckMethod(m string) error {
	m = strings.TrimSpace(m)
	if m == "" || slices.Contains(Methods, strings.TrimPrefix(m, "ansible.builtin.")) {
		return nil
	}
	return fmt.Errorf("%w: become method %q is not supported (agent supports: %s)", ErrConfig, m, strings.Join(Methods, ", "))
}

// userRE is a user name as useradd and sudo accept them, or sudo's #UID.
var userRE = regexp.MustCompile(`^(?:[A-Za-z_][A-Za-z0-9_.-]{0,63}\$?|#[0-9]{1,10})$`)

// CheckUser accepts a user name for `sudo -u`: a plain name (letters,
// digits, "_", ".", "-", not starting with "-" or a digit) or #UID.
func CheckUser(u string) error {
	if !userRE.MatchString(u) {
		return fmt.Errorf("%w: become user %q is not a user name", ErrConfig, u)
	}
	return nil
}

// CheckExe accepts a sudo program: a path or name on one line; "" is sudo.
func CheckExe(exe string) error {
	if exe == "" {
		return nil
	}
	if strings.ContainsAny(exe, "\n\r\x00 \t") || strings.HasPrefix(exe, "-") {
		return fmt.Errorf("%w: become exe %q is not a program path", ErrConfig, exe)
	}
	return nil
}

// ParseFlags splits ansible_become_flags into sudo options as a shell
// would split them, and accepts only the options that keep agent's own
// sudo invocation meaning what it says: -H (--set-home), -E
// (--preserve-env[=LIST]), -P (--preserve-groups), -k (--reset-timestamp)
// and -n, -S (--non-interactive, --stdin; agent decides those itself from
// whether a password is given, so they are dropped). Anything else —
// -i, -s, -u, -g, -D, -C, -T, -A, -b, -p, a command — is an error naming
// it: agent never passes on what it does not understand.
func ParseFlags(s string) ([]string, error) {
	words, err := splitWords(s)
	if err != nil {
		return nil, fmt.Errorf("%w: become flags %q: %v", ErrConfig, s, err)
	}
	out := []string{}
	for _, w := range words {
		if err := checkFlag(w); err != nil {
			return nil, fmt.Errorf("%w (in %q)", err, s)
		}
		switch w {
		case "-n", "-S", "--non-interactive", "--stdin":
			continue
		}
		out = append(out, w)
	}
	return out, nil
}

func checkFlag(w string) error {
	switch w {
	case "-H", "--set-home", "-E", "--preserve-env", "-P", "--preserve-groups", "-k", "--reset-timestamp",
		"-n", "-S", "--non-interactive", "--stdin":
		return nil
	}
	if v, ok := strings.CutPrefix(w, "--preserve-env="); ok && envListRE.MatchString(v) {
		return nil
	}
	if len(w) > 2 && w[0] == '-' && w[1] != '-' {
		// Combined short options: each must be accepted alone.
		for _, r := range w[1:] {
			if err := checkFlag("-" + string(r)); err != nil {
				return fmt.Errorf("%w: sudo option -%c in become flags %q is not supported", ErrConfig, r, w)
			}
		}
		return nil
	}
	return fmt.Errorf("%w: sudo option %q in become flags is not supported (agent accepts -H, -E, --preserve-env[=LIST], -P, -k, -n, -S)", ErrConfig, w)
}

var envListRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(,[A-Za-z_][A-Za-z0-9_]*)*$`)

// splitWords splits s into words as a POSIX shell would, refusing
// anything that is not a plain word (expansions, operators).
func splitWords(s string) ([]string, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(s), "")
	if err != nil {
		return nil, err
	}
	if len(f.Stmts) == 0 {
		return nil, nil
	}
	if len(f.Stmts) > 1 {
		return nil, errors.New("more than one command")
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || len(st.Redirs) > 0 || len(call.Assigns) > 0 {
		return nil, errors.New("not a list of options")
	}
	var out []string
	for _, w := range call.Args {
		lit, ok := literal(w)
		if !ok {
			return nil, errors.New("expansions and substitutions are not allowed")
		}
		out = append(out, lit)
	}
	return out, nil
}

// literal returns w's value when it is made only of literals and quotes.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, `\`) {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok || strings.ContainsAny(lit.Value, `\`) {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}
