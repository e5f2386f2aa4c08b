package safety

import (
	"slices"
	"strings"
)

// Containers' secrets (issue 26). What the kernel cannot hold: docker and
// podman ask their daemon over a unix socket, and `docker inspect` prints
// every container's environment (POSTGRES_PASSWORD=…, API keys) and
// command line, which no file the step reads holds; `docker compose
// config` prints the project resolved with its .env file's values. Only
// the redactor would stand between them and the model, so they read
// secrets: high, at every level. What stays safe: inspect with a
// --format template that names no field holding them (`{{.State.Status}}`,
// `{{json .NetworkSettings}}`, `{{range .Mounts}}{{.Source}}{{end}}`),
// and compose config's listings (--services, --volumes …).
// `systemctl show` and `systemctl cat` stay safe: they print unit files
// and properties any user can read from /etc/systemd and /run/systemd.

// inspectSecretFields are the container and image fields that hold an
// environment, a command line, labels (traefik's basic-auth hashes) or a
// health check's command (`mysqladmin ping -pPASS`), wherever they
// appear in a template; inspectHolders hold them, so a chain may pass
// through them (.Config.Image) but not end there ({{json .Config}}).
var (
	inspectSecretFields = []string{"Env", "Args", "Path", "Cmd", "Entrypoint", "CreateCommand", "Labels", "Secrets",
		"Healthcheck", "OnBuild", "Annotations", "Spec"}
	inspectHolders = []string{"Config", "ContainerConfig", "ContainerSpec", "TaskTemplate"}
)

// templateFuncs are the Go template words an inspect format may use.
var templateFuncs = []string{"json", "range", "end", "if", "else", "with", "print", "printf", "println", "upper",
	"lower", "title", "join", "len", "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not", "truncate", "split",
	"pad", "table", "true", "false", "nil"}

// composeListings are `compose config`'s options that print names, not
// the resolved project.
var composeListings = []string{"--services", "--volumes", "--images", "--profiles", "--networks", "--hash", "-q", "--quiet"}

// containerSecrets rates the container commands that print environments.
func (c *classifier) containerSecrets(name string, s scanned, args []arg) {
	if !slices.Contains([]string{"docker", "podman", "nerdctl", "docker-compose", "podman-compose"}, name) {
		return
	}
	switch s.shown {
	case name + " inspect", name + " container inspect", name + " image inspect", name + " pod inspect":
		// Every format given must be safe (the last one counts).
		formats, safe := 0, true
		for _, i := range s.opts {
			for _, opt := range []string{"-f", "--format"} {
				if v, _, ok := s.value(args, i, opt); ok {
					formats++
					safe = safe && v.static && safeInspectFormat(v.val)
				}
			}
		}
		if formats > 0 && safe {
			return
		}
		c.add(High, "%s: prints containers' environments and command lines (their secrets); a --format naming only other fields ({{.State.Status}}) is safe", s.shown)
	case name + " compose config", name + " config":
		for _, i := range s.opts {
			for _, f := range s.forms(args, i) {
				if k, _, _ := strings.Cut(f, "="); slices.Contains(composeListings, k) {
					return
				}
			}
		}
		c.add(High, "%s: prints the project with its .env values (secrets); --services, --volumes, --images list names", s.shown)
	}
}

// safeInspectFormat reports whether a Go template prints no field that
// holds a secret: every action's words are template functions, quoted
// strings, numbers or field chains (.A.B) none of whose names are
// inspectSecretFields; never the whole object (a bare ".", "$", index,
// a template call). A format that is not a template ("json") prints
// everything.
func safeInspectFormat(f string) bool {
	if !strings.Contains(f, "{{") {
		return false
	}
	rest := f
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			return true // text, "}}" included, is printed as it is
		}
		j := strings.Index(rest[i:], "}}")
		if j < 0 {
			return false
		}
		if !safeAction(rest[i+2 : i+j]) {
			return false
		}
		rest = rest[i+j+2:]
	}
}

func safeAction(a string) bool {
	a = strings.TrimPrefix(strings.TrimSuffix(a, "-"), "-")
	for k := 0; k < len(a); {
		ch := a[k]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '|' || ch == '(' || ch == ')' || ch == ',':
			k++
		case ch == '"' || ch == '`':
			end := strings.IndexByte(a[k+1:], ch)
			if end < 0 || ch == '"' && strings.Contains(a[k+1:k+1+end], `\`) {
				return false
			}
			k += end + 2
		case ch >= '0' && ch <= '9':
			for k < len(a) && (a[k] >= '0' && a[k] <= '9') {
				k++
			}
		case ch == '.':
			n, last := 0, ""
			for k < len(a) && a[k] == '.' {
				k++
				start := k
				for k < len(a) && isWordByte(a[k]) {
					k++
				}
				field := a[start:k]
				if field == "" || slices.Contains(inspectSecretFields, field) {
					return false // "." alone: the whole object
				}
				last = field
				n++
			}
			if n == 0 || slices.Contains(inspectHolders, last) {
				return false
			}
		case isWordByte(ch):
			start := k
			for k < len(a) && isWordByte(a[k]) {
				k++
			}
			if !slices.Contains(templateFuncs, a[start:k]) {
				return false
			}
		default:
			return false // $, :=, index, comments, anything else
		}
	}
	return true
}

func isWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
