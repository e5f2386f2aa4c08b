package local

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// A command sh would run as one simple command of plain words is
// executed directly, without the shell (as GNU make runs a recipe line
// with no shell metacharacters): `ls -l /etc` costs one exec, not two
// (sh's, then the program's). Only what sh would do the same way is
// taken:
//
//   - every byte is a letter, a digit, a blank or one of -_./,:@%+=, or
//     lies in single quotes, or in double quotes holding no $ ` \ or !
//     (quoted text is valid UTF-8 and has no newline)
//     — no escape, expansion ($ ` ~ * ? [), redirection, operator,
//     comment or newline — so that sh's words are the command split at
//     unquoted blanks, its quotes removed;
//   - the first word is no assignment (no =), no reserved word and no
//     builtin of sh or bash (cd, exit, echo, test, …: a builtin and the
//     program of its name may differ) — but for true and false with no
//     argument, which the programs do alike;
//   - the program is found as sh finds it: a name with a slash as it is
//     (relative to the command's directory), else the first PATH entry
//     (the command's environment's, not agent's) holding the name; it
//     must be a regular file agent may execute, no PATH entry before it
//     may hold that name in any other form, and none may be relative.
//     It is executed by the path sh would give execve (a script's $0).
//
// Anything else — not found, not executable, a PATH without the name,
// an exec that fails (ENOEXEC: a script without #!, which sh would run
// itself) — runs through sh -c as before, which then reports it as sh
// does (127, 126). The environment gets PWD as sh sets it (the
// environment's own PWD when it names the command's directory, else its
// physical path); sh passes the same variables in another order, and a
// bash /bin/sh would also export SHLVL and _, which a direct exec does
// not. The exec happens where sh's would have: in the
// caller's thread, so a confined thread's Landlock domain and seccomp
// filter hold it alike.

// shellWords are the reserved words and builtins of sh (dash, POSIX) and
// bash: a first word among them runs through sh.
var shellWords = []string{
	"!", "{", "}", "[[", "]]", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function",
	"if", "in", "select", "then", "time", "until", "while",
	".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "chdir", "command", "compgen",
	"complete", "compopt", "continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit",
	"export", "false", "fc", "fg", "getopts", "hash", "help", "history", "jobs", "kill", "let", "local",
	"logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray", "readonly", "return", "set",
	"shift", "shopt", "source", "suspend", "test", "times", "trap", "true", "type", "typeset", "ulimit",
	"umask", "unalias", "unset", "wait",
}

// directWords returns the words of command when it is one simple command
// of plain words sh would run as a program (see above), else nil.
func directWords(command string) []string {
	words, first, ok := splitWords(command)
	if !ok || len(words) == 0 || words[0] == "" || strings.ContainsRune(first, '=') {
		return nil
	}
	if slices.Contains(shellWords, words[0]) && !(len(words) == 1 && (words[0] == "true" || words[0] == "false")) {
		return nil
	}
	return words
}

// splitWords splits command into its words as sh would, when each is
// made of plain bytes, single-quoted text (no newline) and double-quoted
// text (no newline, $, `, \ or !): nothing sh expands or joins. first is
// the first word as typed (quotes kept). ok false: anything else.
func splitWords(command string) (words []string, first string, ok bool) {
	var w strings.Builder
	in, start := false, 0
	end := func(i int) {
		if len(words) == 0 {
			first = command[start:i]
		}
		words, in = append(words, w.String()), false
		w.Reset()
	}
	for i := 0; i < len(command); {
		b := command[i]
		if b == ' ' || b == '\t' {
			if in {
				end(i)
			}
			i++
			continue
		}
		if !in {
			in, start = true, i
		}
		switch {
		case b == '\'' || b == '"':
			n := strings.IndexByte(command[i+1:], b)
			if n < 0 {
				return nil, "", false
			}
			q := command[i+1 : i+1+n]
			if strings.ContainsAny(q, "\n\x00") || !utf8.ValidString(q) || b == '"' && strings.ContainsAny(q, "$`\\!") {
				return nil, "", false
			}
			w.WriteString(q)
			i += n + 2
		case plainByte(b):
			w.WriteByte(b)
			i++
		default:
			return nil, "", false
		}
	}
	if in {
		end(len(command))
	}
	return words, first, true
}

func plainByte(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte(" \t-_./,:@%+=", b) >= 0
}

// errNotDirect: the command runs through sh.
var errNotDirect = errors.New("not a direct command")

// lookProgram finds name as sh would in env's PATH: the path to execute,
// as sh would pass it to execve, or errNotDirect when sh should decide.
// A name with a slash is taken as it is (relative to dir, the command's
// directory, "" for agent's own); a relative PATH entry is left to sh.
func lookProgram(name string, env []string, dir string) (string, error) {
	if strings.ContainsRune(name, '/') {
		if _, err := executable(inDir(name, dir)); err != nil {
			return "", err
		}
		return name, nil // the exec takes it relative to the command's directory
	}
	path, ok := lastEnv(env, "PATH")
	if !ok || strings.ContainsRune(path, '%') { // dash's PATH%builtin entries
		return "", errNotDirect
	}
	for _, d := range strings.Split(path, ":") {
		if !strings.HasPrefix(d, "/") {
			return "", errNotDirect
		}
		p := d + "/" + name // as sh makes it, not cleaned: a script's $0
		var st unix.Stat_t
		if err := unix.Stat(p, &st); errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			continue
		}
		return executable(p)
	}
	return "", errNotDirect
}

// executable is p when it is a regular file this thread may execute.
func executable(p string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return "", errNotDirect
	}
	if unix.Access(p, unix.X_OK) != nil {
		return "", errNotDirect
	}
	return p, nil
}

// inDir is p made absolute against dir ("": agent's working directory).
func inDir(p, dir string) string {
	if filepath.IsAbs(p) {
		return p
	}
	if dir == "" {
		wd, err := unix.Getwd()
		if err != nil {
			return "" // no such file: sh decides
		}
		dir = wd
	}
	return filepath.Join(dir, p)
}

// lastEnv is the value of the last name= entry of env (os/exec keeps
// the last of duplicates).
func lastEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// shellPWD is env with PWD as sh sets it for a command run in dir ("":
// agent's working directory): the environment's PWD when it is absolute
// and names that directory, else the directory's physical path.
func shellPWD(env []string, dir string) ([]string, error) {
	here := dir
	if here == "" {
		here = "."
	}
	var cur unix.Stat_t
	if err := unix.Stat(here, &cur); err != nil {
		return nil, errNotDirect
	}
	if pwd, ok := lastEnv(env, "PWD"); ok && filepath.IsAbs(pwd) {
		var st unix.Stat_t
		if unix.Stat(pwd, &st) == nil && st.Dev == cur.Dev && st.Ino == cur.Ino {
			return env, nil
		}
	}
	var phys string
	if dir == "" {
		wd, err := unix.Getwd()
		if err != nil {
			return nil, errNotDirect
		}
		phys = wd
	} else {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, errNotDirect
		}
		if phys, err = filepath.EvalSymlinks(abs); err != nil {
			return nil, errNotDirect
		}
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PWD=") {
			out = append(out, kv)
		}
	}
	return append(out, "PWD="+phys), nil
}
