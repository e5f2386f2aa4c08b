package safety

import (
	"slices"
	"strings"
)

// Tools that set process attributes (priority, I/O class, scheduling
// policy, CPU affinity, resource limits) either run a new command with
// them or change processes already running. Running a new command is a
// wrapper: the command is classified, and the attributes end with it;
// only raising it above every other process (a negative nice value,
// realtime scheduling or I/O class) is Medium. Changing a running
// process — another one, since the step's own shell is not named by a
// pid the model can know — is High: it may starve a service, and no undo
// journal takes it back. Asking for a process's current attributes is
// read-only.

// procAttrTools are the wrappers procAttr rates.
var procAttrTools = []string{"ionice", "chrt", "taskset", "prlimit", "nice"}

// procUse is one option word of a process-attribute tool: its name as
// given ("-c", "--class") and its value, if it took one.
type procUse struct {
	name, val string
	hasVal    bool
}

// procOpts reads the leading options of a process-attribute tool the
// way getopt does in POSIX mode (stopping at the first operand): short
// letters in shortVal take a value (attached or the next word), long
// options in longVal take one ("--x=v" or "--x v"); any other "--x=v"
// keeps its attached value. It returns the options, the index of the
// first operand, and false when an option word is not static.
func procOpts(args []arg, shortVal string, longVal []string) ([]procUse, int, bool) {
	var out []procUse
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.static {
			return out, i, false
		}
		v := a.val
		if v == "--" {
			return out, i + 1, true
		}
		if len(v) < 2 || v[0] != '-' {
			break
		}
		if strings.HasPrefix(v, "--") {
			name, val, has := strings.Cut(v, "=")
			if !has && slices.Contains(longVal, name) && i+1 < len(args) {
				i++
				val, has = args[i].val, true
				if !args[i].static {
					return out, i, false
				}
			}
			out = append(out, procUse{name: name, val: val, hasVal: has})
			continue
		}
		for j := 1; j < len(v); j++ {
			ch := v[j]
			if !strings.ContainsRune(shortVal, rune(ch)) {
				out = append(out, procUse{name: "-" + string(ch)})
				continue
			}
			u := procUse{name: "-" + string(ch), hasVal: true, val: v[j+1:]}
			if u.val == "" && i+1 < len(args) {
				i++
				if !args[i].static {
					return out, i, false
				}
				u.val = args[i].val
			}
			out = append(out, u)
			break
		}
	}
	return out, i, true
}

func procHas(uses []procUse, names ...string) (procUse, bool) {
	for _, u := range uses {
		if slices.Contains(names, u.name) {
			return u, true
		}
	}
	return procUse{}, false
}

// procAttr rates a process-attribute tool's own options, and reports
// whether it runs no new command (it changes or shows running
// processes): the wrapper then has no command to classify.
func (c *classifier) procAttr(name string, args []arg) (noCommand bool) {
	if onlyVersion(args) {
		return true
	}
	switch name {
	case "ionice":
		uses, _, ok := procOpts(args, "cnpPu", []string{"--class", "--classdata", "--pid", "--pgid", "--uid"})
		if !ok {
			c.opaque("ionice: options not statically resolvable")
			return true
		}
		_, others := procHas(uses, "-p", "-P", "-u", "--pid", "--pgid", "--uid")
		_, sets := procHas(uses, "-c", "-n", "--class", "--classdata")
		switch {
		case others && sets:
			c.add(High, "ionice: changes the I/O priority of running processes (no undo takes it back)")
		case others:
		default:
			if u, ok := procHas(uses, "-c", "--class"); ok && (u.val == "1" || strings.EqualFold(u.val, "realtime")) {
				c.add(Medium, "ionice -c %s: runs the command in the realtime I/O class, ahead of every other process", u.val)
			}
		}
		return others
	case "chrt":
		uses, rest, ok := procOpts(args, "TPD", []string{"--sched-runtime", "--sched-period", "--sched-deadline"})
		if !ok {
			c.opaque("chrt: options not statically resolvable")
			return true
		}
		if _, ok := procHas(uses, "-m", "--max", "-h", "--help", "-V", "--version"); ok {
			return true
		}
		if _, ok := procHas(uses, "-p", "--pid"); ok {
			if len(args)-rest >= 2 {
				c.add(High, "chrt -p: changes the scheduling of a running process (no undo takes it back)")
			}
			return true
		}
		if _, ok := procHas(uses, "-b", "--batch", "-i", "--idle", "-o", "--other"); !ok {
			c.add(Medium, "chrt: runs the command under realtime scheduling, ahead of every other process")
		}
	case "taskset":
		uses, rest, ok := procOpts(args, "", nil)
		if !ok {
			c.opaque("taskset: options not statically resolvable")
			return true
		}
		if _, ok := procHas(uses, "-p", "--pid"); ok {
			if len(args)-rest >= 2 {
				c.add(High, "taskset -p: changes the CPU affinity of a running process (no undo takes it back)")
			}
			return true
		}
	case "prlimit":
		uses, _, ok := procOpts(args, "po", []string{"--pid", "--output"})
		if !ok {
			c.opaque("prlimit: options not statically resolvable")
			return true
		}
		_, pid := procHas(uses, "-p", "--pid")
		// A resource option sets a limit when its value is attached
		// (--nofile=10, -n10); alone it shows the limit.
		sets := slices.ContainsFunc(args, func(a arg) bool {
			v := a.val
			if strings.HasPrefix(v, "--") {
				name, _, has := strings.Cut(v, "=")
				return has && name != "--pid" && name != "--output"
			}
			return len(v) > 2 && v[0] == '-' && strings.ContainsRune("cdefilmnqrstuvxy", rune(v[1]))
		})
		if pid && sets {
			c.add(High, "prlimit --pid: changes the resource limits of a running process (no undo takes it back)")
		}
		return pid
	case "nice":
		uses, _, ok := procOpts(args, "n", []string{"--adjustment"})
		if !ok {
			c.opaque("nice: options not statically resolvable")
			return true
		}
		for _, u := range uses {
			adj := ""
			switch {
			case u.name == "-n" || u.name == "--adjustment":
				adj = u.val
			case isDigits(strings.TrimPrefix(u.name, "-")) || strings.HasPrefix(u.name, "--") && isDigits(u.name[2:]):
				adj = strings.TrimPrefix(u.name, "-") // -5 is 5, --5 is -5
			}
			if strings.HasPrefix(adj, "-") {
				c.add(Medium, "nice %s: raises the command's priority above other processes", adj)
			}
		}
	}
	return false
}
