package tools

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

func checkName(what, v string) error {
	if strings.HasPrefix(v, "-") {
		return fmt.Errorf("%s %q must not start with '-'", what, v)
	}
	return nil
}

var pidList = regexp.MustCompile(`^[0-9]+(,[0-9]+)*$`)

// PsParams are ps's parameters (first product spec).
type PsParams struct {
	User    string   `json:"user,omitempty" description:"Only this user's."`
	Name    string   `json:"name,omitempty" description:"Command line contains this."`
	Pid     string   `json:"pid,omitempty" description:"PID(s), comma-separated."`
	Options []string `json:"options,omitempty" description:"Read-only ps options, e.g. -ef."`
}

func (p *PsParams) check() error {
	p.Pid = strings.TrimSpace(p.Pid)
	if p.Pid != "" && !pidList.MatchString(p.Pid) {
		return fmt.Errorf("pid %q must be a number or a comma-separated list of numbers", p.Pid)
	}
	return checkName("user", p.User)
}

// psMarker is in the filter's own command line, so the filter (and the
// shell running it) never list themselves as a match.
const psMarker = "agent_ps_filter"

func buildPs(p PsParams) (string, error) {
	opts, err := psRules.words(p.Options)
	if err != nil {
		return "", err
	}
	words := []string{"ps"}
	switch {
	case len(opts) > 0:
		words = append(words, opts...)
	case p.Pid == "" && p.User == "":
		words = append(words, "-e", "-ww", "-o", "pid,ppid,user,pcpu,pmem,etime,args")
	default:
		words = append(words, "-ww", "-o", "pid,ppid,user,pcpu,pmem,etime,args")
	}
	if p.Pid != "" {
		words = append(words, "-p", p.Pid)
	}
	if p.User != "" {
		words = append(words, "-u", Quote(p.User))
	}
	line := strings.Join(words, " ")
	if p.Name != "" {
		line += " | awk -v " + psMarker + "=1 -v n=" + Quote(p.Name) +
			` 'NR == 1 || (index(tolower($0), tolower(n)) && !index($0, "` + psMarker + `"))'`
	}
	return line, nil
}

// SsParams are ss's parameters (first product spec).
type SsParams struct {
	Options  []string `json:"options,omitempty" description:"Read-only ss flags, e.g. -tlnp; default -anp."`
	Port     int      `json:"port,omitempty" description:"Only this port."`
	Protocol string   `json:"protocol,omitempty" enum:"tcp,udp" description:"tcp or udp."`
}

func (p *SsParams) check() error {
	if p.Port < 0 || p.Port > 65535 {
		return fmt.Errorf("port %d is not between 1 and 65535", p.Port)
	}
	return nil
}

// buildSs runs ss when the target has it, else lsof -i, else netstat (the
// spec: ss is missing on macOS and minimal hosts).
func buildSs(p SsParams) (string, error) {
	opts, err := ssRules.words(p.Options)
	if err != nil {
		return "", err
	}
	ss := []string{"ss"}
	if len(opts) == 0 {
		opts = []string{"-a", "-n", "-p"}
	}
	ss = append(ss, opts...)
	switch p.Protocol {
	case "tcp":
		ss = append(ss, "-t")
	case "udp":
		ss = append(ss, "-u")
	default:
		if len(p.Options) == 0 {
			ss = append(ss, "-t", "-u")
		}
	}
	lsofSel := strings.ToUpper(p.Protocol)
	netstat := "netstat -an"
	if p.Protocol != "" {
		netstat += " -" + p.Protocol[:1]
	}
	if p.Port > 0 {
		port := fmt.Sprint(p.Port)
		ss = append(ss, Quote("( sport = :"+port+" or dport = :"+port+" )"))
		lsofSel += ":" + port
		netstat += " | grep -E -e " + Quote("[.:]"+port+"([^0-9]|$)|^Proto|^Active")
	}
	lsof := "lsof -n -P -i"
	if lsofSel != "" {
		lsof += " " + Quote(lsofSel)
	}
	return "if command -v ss >/dev/null 2>&1; then " + strings.Join(ss, " ") +
		"; elif command -v lsof >/dev/null 2>&1; then " + lsof +
		"; elif command -v netstat >/dev/null 2>&1; then " + netstat +
		"; else echo 'ss: none of ss, lsof or netstat is installed on the target' >&2; exit 127; fi", nil
}

// LsofParams are lsof's parameters (first product spec).
type LsofParams struct {
	Path    string   `json:"path,omitempty" description:"Who has this file open."`
	Port    int      `json:"port,omitempty" description:"Who uses this port."`
	User    string   `json:"user,omitempty" description:"This user's files."`
	Options []string `json:"options,omitempty" description:"Read-only lsof options, e.g. -i."`
}

func (p *LsofParams) check() error {
	if p.Port < 0 || p.Port > 65535 {
		return fmt.Errorf("port %d is not between 1 and 65535", p.Port)
	}
	if p.Path == "" && p.Port == 0 && p.User == "" && len(p.Options) == 0 {
		return errors.New("give path, port, user or options: listing every open file is too much output")
	}
	return checkName("user", p.User)
}

func buildLsof(p LsofParams) (string, error) {
	opts, err := lsofRules.words(p.Options)
	if err != nil {
		return "", err
	}
	words := append([]string{"lsof", "-n", "-P"}, opts...)
	selectors := 0
	if p.Port > 0 {
		words = append(words, "-i", Quote(fmt.Sprintf(":%d", p.Port)))
		selectors++
	}
	if p.User != "" {
		words = append(words, "-u", Quote(p.User))
		selectors++
	}
	if selectors > 1 {
		words = append(words, "-a")
	}
	if p.Path != "" {
		words = append(words, "--", quotePath(p.Path))
	}
	return strings.Join(words, " "), nil
}

func newPs(c *config) *shellTool[PsParams] {
	return newShellTool(c, PsName, "List processes on the target.", buildPs)
}

func newSs(c *config) *shellTool[SsParams] {
	return newShellTool(c, SsName, "Show network sockets on the target.", buildSs)
}

func newLsof(c *config) *shellTool[LsofParams] {
	return newShellTool(c, LsofName, "List open files on the target.", buildLsof)
}

// NewPs returns ps (WithCommandTimeout applies).
func NewPs(opts ...Option) Tool { return newPs(newConfig(zeroPolicy, opts)) }

// NewSs returns ss.
func NewSs(opts ...Option) Tool { return newSs(newConfig(zeroPolicy, opts)) }

// NewLsof returns lsof.
func NewLsof(opts ...Option) Tool { return newLsof(newConfig(zeroPolicy, opts)) }
