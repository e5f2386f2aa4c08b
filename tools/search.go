package tools

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Names of the structured tools of the first product spec.
const (
	FindName = "find"
	GrepName = "grep"
	WgetName = "wget"
	PsName   = "ps"
	SsName   = "ss"
	LsofName = "lsof"
)

// FindParams are find's parameters (first product spec).
type FindParams struct {
	Name     string `json:"name" description:"Name; * and ? work."`
	Path     string `json:"path,omitempty" description:"Start directory; default ."`
	Type     string `json:"type,omitempty" enum:"f,d" description:"f file, d directory."`
	MaxDepth *int   `json:"maxdepth,omitempty" description:"1: start directory only."`
}

func (p *FindParams) check() error {
	if p.Name == "" {
		return errors.New("name is empty")
	}
	if p.MaxDepth != nil && *p.MaxDepth < 0 {
		return errors.New("maxdepth must not be negative")
	}
	return nil
}

func buildFind(p FindParams) (string, error) {
	start := p.Path
	if start == "" {
		start = "."
	}
	// find reads its first words as paths until one starts an expression:
	// "-x", "!" or "(" would be taken as one, so they get "./".
	if strings.HasPrefix(start, "-") || start == "!" || start == "(" || start == ")" || start == "," {
		start = "./" + start
	}
	words := []string{"find", quotePath(start)}
	if p.MaxDepth != nil {
		words = append(words, "-maxdepth", fmt.Sprint(*p.MaxDepth))
	}
	if p.Type != "" {
		words = append(words, "-type", p.Type)
	}
	words = append(words, "-name", Quote(p.Name))
	return strings.Join(words, " "), nil
}

// GrepParams are grep's parameters (first product spec).
type GrepParams struct {
	Pattern    string `json:"pattern" description:"Basic regexp."`
	File       string `json:"file" description:"File(s) or directory, space-separated."`
	Recursive  bool   `json:"recursive,omitempty" description:"-r"`
	IgnoreCase bool   `json:"ignore_case,omitempty" description:"-i"`
	CountOnly  bool   `json:"count_only,omitempty" description:"-c"`
}

func (p *GrepParams) check() error {
	if strings.TrimSpace(p.File) == "" {
		return errors.New("file is empty")
	}
	return nil
}

func buildGrep(p GrepParams) (string, error) {
	words := []string{"grep"}
	if p.Recursive {
		words = append(words, "-r")
	}
	if p.IgnoreCase {
		words = append(words, "-i")
	}
	if p.CountOnly {
		words = append(words, "-c")
	}
	// -e keeps a pattern starting with "-" a pattern; "--" ends options
	// before the files.
	words = append(words, "-e", Quote(p.Pattern), "--")
	for _, f := range strings.Fields(p.File) {
		words = append(words, quotePath(f))
	}
	return strings.Join(words, " "), nil
}

// WgetParams are wget's parameters (first product spec).
type WgetParams struct {
	URL        string `json:"url" description:"http(s) or ftp URL."`
	OutputFile string `json:"output_file,omitempty" description:"Save as."`
}

func (p *WgetParams) check() error {
	u, err := url.Parse(p.URL)
	if err != nil {
		return fmt.Errorf("url: %v", err)
	}
	switch u.Scheme {
	case "http", "https", "ftp":
	default:
		return fmt.Errorf("url %q: only http, https and ftp URLs can be downloaded", p.URL)
	}
	if u.Host == "" {
		return fmt.Errorf("url %q has no host", p.URL)
	}
	return nil
}

func buildWget(p WgetParams) (string, error) {
	words := []string{"wget", "-nv"}
	if p.OutputFile != "" {
		// "-O -" would mean standard output; "./-" is the file.
		words = append(words, "-O", quotePath(operand(p.OutputFile)))
	}
	words = append(words, "--", Quote(p.URL))
	return strings.Join(words, " "), nil
}

func newFind(c *config) *shellTool[FindParams] {
	return newShellTool(c, FindName, "Find files by name on the target.", buildFind)
}

func newGrep(c *config) *shellTool[GrepParams] {
	return newShellTool(c, GrepName, "Search files on the target for matching lines.", buildGrep)
}

func newWget(c *config) *shellTool[WgetParams] {
	return newShellTool(c, WgetName, "Download a URL onto the target.", buildWget)
}

// NewFind, NewGrep and NewWget return the structured tools (WithCommandTimeout applies).
func NewFind(opts ...Option) Tool { return newFind(newConfig(zeroPolicy, opts)) }

// NewGrep returns grep.
func NewGrep(opts ...Option) Tool { return newGrep(newConfig(zeroPolicy, opts)) }

// NewWget returns wget.
func NewWget(opts ...Option) Tool { return newWget(newConfig(zeroPolicy, opts)) }
