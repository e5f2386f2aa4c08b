package ssh

import "sync"

// ConfigCache shares the reading of ssh_config files between the
// resolutions of one batch (ResolveOptions.Cache): each file is read and
// split into tokenized lines once, each Include pattern globbed once, and
// the local user's name, home and host name looked up once. What depends
// on the destination — Host and Match blocks, Match exec, %-tokens — is
// evaluated for every Resolve as before, so each host's settings are still
// those `ssh -G` prints for it; the files are a snapshot taken the first
// time they are read. Without it a 2,000-host batch over a config with one
// Host block per host re-read and re-tokenized the whole file 2,000 times.
//
// A ConfigCache is safe for concurrent use; its zero value is not usable:
// make one with NewConfigCache.
type ConfigCache struct {
	mu    sync.Mutex
	files map[string]cachedFile
	globs map[string]cachedGlob
	envs  map[envKey]*env
}

type cachedFile struct {
	lines []configLine
	err   error
}

type cachedGlob struct {
	matches []string
	err     error
}

// envKey is what newEnv depends on.
type envKey struct{ home, localUser, sysFile string }

// NewConfigCache returns an empty cache.
func NewConfigCache() *ConfigCache {
	return &ConfigCache{files: map[string]cachedFile{}, globs: map[string]cachedGlob{}, envs: map[envKey]*env{}}
}

// env returns the local environment for opts, looked up once per cache
// (afresh when c is nil).
func (c *ConfigCache) env(opts ResolveOptions) (*env, error) {
	if c == nil {
		return newEnv(opts)
	}
	k := envKey{opts.Home, opts.LocalUser, opts.SystemConfigFile}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.envs[k]; ok {
		return e, nil
	}
	e, err := newEnv(opts)
	if err != nil {
		return nil, err // not kept: the next host says the same
	}
	c.envs[k] = e
	return e, nil
}

// load returns a config file's tokenized lines: read once per cache.
func (r *reader) load(path string) ([]configLine, error) {
	c := r.cache
	if c == nil {
		data, err := readConfigFile(path)
		if err != nil {
			return nil, err
		}
		return splitLines(data), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.files[path]; ok {
		return f.lines, f.err
	}
	var f cachedFile
	data, err := readConfigFile(path)
	if err != nil {
		f.err = err
	} else {
		f.lines = splitLines(data)
	}
	c.files[path] = f
	return f.lines, f.err
}

// glob expands an Include pattern (globConfig): once per cache.
func (r *reader) glob(pattern string) ([]string, error) {
	c := r.cache
	if c == nil {
		return globConfig(pattern, r.env.home)
	}
	k := r.env.home + "\x00" + pattern
	c.mu.Lock()
	defer c.mu.Unlock()
	if g, ok := c.globs[k]; ok {
		return g.matches, g.err
	}
	m, err := globConfig(pattern, r.env.home)
	c.globs[k] = cachedGlob{m, err}
	return m, err
}
