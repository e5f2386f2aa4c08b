package tools

import (
	"fmt"
	"sort"
	"strings"
)

// argKind says whether an allowed option takes a value.
type argKind int

const (
	noArg  argKind = iota // a flag
	reqArg                // a value: the rest of the cluster, else the next word
	optArg                // an optional value: the rest of the cluster, else the next word unless it looks like an option
)

// optRules is the allowlist of a structured tool's "options": only
// read-only options the tool knows pass; anything else (an unknown letter,
// an abbreviated long option, a write or file-reading option) is refused.
type optRules struct {
	tool     string
	prefixes string             // characters that start an option: "-" or "-+"
	short    map[string]argKind // "-t", "+D": prefix and one letter
	long     map[string]argKind // "--tcp": exact names only, never abbreviations
	// dashValues lets a separate value word start with a prefix character
	// ("--sort -pcpu"); only for tools without any harmful option.
	dashValues bool
	// operands lets words that are neither options nor values through
	// (lsof's file names).
	operands bool
}

func shortSet(prefix byte, letters string, k argKind, m map[string]argKind) map[string]argKind {
	if m == nil {
		m = map[string]argKind{}
	}
	for i := 0; i < len(letters); i++ {
		m[string([]byte{prefix, letters[i]})] = k
	}
	return m
}

func longSet(k argKind, m map[string]argKind, names ...string) map[string]argKind {
	if m == nil {
		m = map[string]argKind{}
	}
	for _, n := range names {
		m[n] = k
	}
	return m
}

// ssRules: ss's read-only display flags. Refused among others: -K/--kill,
// -D/--diag (writes a file), -F/--filter (reads a file), abbreviations.
var ssRules = &optRules{
	tool:     SsName,
	prefixes: "-",
	short:    shortSet('-', "altuxwnpemisoH460r", noArg, nil),
	long: longSet(noArg, nil, "--all", "--listening", "--tcp", "--udp", "--unix", "--raw", "--numeric",
		"--processes", "--extended", "--memory", "--info", "--summary", "--options", "--no-header",
		"--ipv4", "--ipv6", "--resolve"),
}

// psRules: ps's selection and format options (procps and BSD); ps has no
// option that writes.
var psRules = &optRules{
	tool:     PsName,
	prefixes: "-",
	short:    shortSet('-', "oOpquUgGCts", reqArg, shortSet('-', "AacdeEfFHjlLmMNrSTvwxXyZ", noArg, nil)),
	long: longSet(reqArg, longSet(noArg, nil, "--forest", "--headers", "--no-headers", "--deselect", "--cumulative", "--context"),
		"--sort", "--format", "--pid", "--ppid", "--quick-pid", "--user", "--User", "--group", "--Group",
		"--sid", "--tty", "--cols", "--columns", "--width", "--lines", "--rows"),
	dashValues: true,
}

// lsofRules: lsof's selection and output options. Refused among others:
// -D (writes the device cache), -k, -m, +m, -A (read kernel or name-list
// files), -r/+r (repeat until killed).
var lsofRules = &optRules{
	tool:     LsofName,
	prefixes: "-+",
	short: shortSet('+', "Ddc", reqArg, shortSet('-', "cdpu", reqArg,
		shortSet('+', "L", optArg, shortSet('-', "iFTLgKSsoxzZ", optArg,
			shortSet('+', "wEMf", noArg, shortSet('-', "abChlnNOPRtUvVXwEMfQH", noArg, nil)))))),
	long:     map[string]argKind{},
	operands: true,
}

// words checks opts (elements split at blanks: "-i :8080" is two words)
// against the rules and returns the words quoted.
func (r *optRules) words(opts []string) ([]string, error) {
	var ws []string
	for _, o := range opts {
		ws = append(ws, strings.Fields(o)...)
	}
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		var kind argKind
		var attached bool
		switch {
		case strings.HasPrefix(w, "--"):
			name, _, hasVal := strings.Cut(w, "=")
			k, ok := r.long[name]
			if !ok || (hasVal && k == noArg) {
				return nil, r.refuse(w)
			}
			kind, attached = k, hasVal
		case r.isOption(w):
			for j := 1; j < len(w); j++ {
				k, ok := r.short[string([]byte{w[0], w[j]})]
				if !ok {
					return nil, r.refuse(w)
				}
				if k != noArg {
					kind, attached = k, j+1 < len(w)
					break
				}
			}
		case len(w) == 1 && strings.IndexByte(r.prefixes, w[0]) >= 0:
			return nil, r.refuse(w)
		case r.operands:
			continue
		default:
			return nil, fmt.Errorf("%q is not an option: options must start with %s, and %s takes no other words here",
				w, strings.Join(strings.Split(r.prefixes, ""), " or "), r.tool)
		}
		if kind == noArg || attached {
			continue
		}
		next := ""
		if i+1 < len(ws) {
			next = ws[i+1]
		}
		switch {
		case kind == optArg && (next == "" || r.isOption(next)):
		case next == "":
			return nil, fmt.Errorf("option %q needs a value", w)
		case r.isOption(next) && !r.dashValues:
			return nil, fmt.Errorf("option %q needs a value, not the option %q", w, next)
		default:
			i++ // the value: any text, quoted below
		}
	}
	for i, w := range ws {
		ws[i] = Quote(w)
	}
	return ws, nil
}

func (r *optRules) isOption(w string) bool {
	return len(w) >= 2 && strings.IndexByte(r.prefixes, w[0]) >= 0
}

func (r *optRules) refuse(w string) error {
	return fmt.Errorf("option %q is not allowed: %s takes only these read-only options: %s", w, r.tool, r.allowed())
}

func (r *optRules) allowed() string {
	var short, long []string
	for k := range r.short {
		short = append(short, k)
	}
	for k := range r.long {
		long = append(long, k)
	}
	sort.Strings(short)
	sort.Strings(long)
	return strings.Join(append(short, long...), " ")
}
