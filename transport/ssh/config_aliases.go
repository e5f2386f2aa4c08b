package ssh

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// HostAliases lists the names the config files give in Host lines, in
// the order first seen, for completing a host name: a pattern with a
// wildcard ('*', '?') or a negation names no one host and is left out.
// It reads the files Resolve would (ConfigFile, or ~/.ssh/config then
// the system file) and what they Include, whatever the Host and Match
// blocks around an Include. A missing file is skipped; a file that
// cannot be read is an error naming it.
func HostAliases(opts ResolveOptions) ([]string, error) {
	e, err := newEnv(opts)
	if err != nil {
		return nil, err
	}
	l := aliasLister{env: e, seen: map[string]bool{}}
	switch opts.ConfigFile {
	case "none":
	case "":
		if err := l.file(filepath.Join(e.home, ".ssh", "config"), userConf, 0); err != nil {
			return nil, err
		}
		if err := l.file(e.sysFile, 0, 0); err != nil {
			return nil, err
		}
	default:
		if err := l.file(opts.ConfigFile, userConf, 0); err != nil {
			return nil, err
		}
	}
	return l.names, nil
}

type aliasLister struct {
	env   *env
	seen  map[string]bool
	names []string
}

func (l *aliasLister) file(path string, flags readFlags, depth int) error {
	data, err := readConfigFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &ConfigError{File: path, Err: err}
	}
	for _, line := range splitLines(data) {
		switch line.kw {
		case "host":
			for _, a := range line.args {
				if a == "" || a[0] == '!' || strings.ContainsAny(a, "*?") || l.seen[a] {
					continue
				}
				l.seen[a] = true
				l.names = append(l.names, a)
			}
		case "include":
			if depth+1 > maxIncludeDepth {
				continue // Resolve reports the loop; a list just stops
			}
			for _, a := range line.args {
				pattern, err := l.env.includePattern(a, flags)
				if err != nil {
					continue // Resolve reports it; a list skips it
				}
				matches, err := globConfig(pattern, l.env.home)
				if err != nil {
					continue
				}
				for _, m := range matches {
					if err := l.file(m, flags, depth+1); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}
