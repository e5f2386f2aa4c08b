package transport

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinks is how many dangling symbolic links at the end of a path
// LocalRealPath follows before it gives up with ELOOP.
const maxLinks = 40

// LocalRealPath returns where p really is on this machine, as `readlink -f`
// finds it, without starting a process: p is absolute or relative to the
// working directory, and every symbolic link is followed, in the middle and
// at the end. The last component need not exist (nor the target of a
// symbolic link at the end): then its directory is resolved and the name
// appended. A missing or non-directory component before it is an error
// (fs.ErrNotExist, ENOTDIR), as is a loop of links (ELOOP). The local
// transport's RealPath and the executor (for a transfer's operator-side
// file) resolve with it.
func LocalRealPath(p string) (string, error) {
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		p = wd + "/" + p // not filepath.Join: ".." after a link is the link target's parent
	}
	real, err := realPath(p)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return "", pe.Err
		}
		return "", err
	}
	return real, nil
}

// realPath resolves the absolute path p with filepath.EvalSymlinks; when
// the last component is missing, or is a link to a missing file, it
// resolves the directory and goes on with the name or the link's target.
func realPath(p string) (string, error) {
	for range maxLinks {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return real, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Stat(p); serr != nil {
				return "", serr // the kernel's reason (ELOOP, ENOTDIR, EACCES), not EvalSymlinks' text
			}
			return "", err
		}
		// Something is missing: it may only be the last name. The path is
		// split as written (filepath.Dir would clean "link/.." lexically).
		if t := strings.TrimRight(p, "/"); t != "" {
			p = t
		}
		i := strings.LastIndexByte(p, '/')
		base := p[i+1:]
		if base == "" || base == "." || base == ".." {
			return "", err // the missing name is not the last one
		}
		dir, err := filepath.EvalSymlinks(p[:max(i, 1)])
		if err != nil {
			return "", err
		}
		if fi, err := os.Stat(dir); err != nil {
			return "", err
		} else if !fi.IsDir() {
			return "", &fs.PathError{Op: "realpath", Path: dir, Err: syscall.ENOTDIR}
		}
		name := filepath.Join(dir, base)
		target, err := os.Readlink(name)
		if errors.Is(err, fs.ErrNotExist) {
			return name, nil // missing: readlink -f allows that of the last name
		}
		if err != nil {
			// It exists and is no link, yet p did not resolve: it changed
			// under us. Say so rather than guess.
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = dir + "/" + target
		}
		p = target // a dangling link: its target is where a write goes
	}
	return "", &fs.PathError{Op: "realpath", Path: p, Err: syscall.ELOOP}
}
