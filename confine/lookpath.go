package confine

import (
	"errors"
	"os"
	"path"
	"strings"
	"syscall"
)

// lookPath finds the executable file as os/exec.LookPath does on Unix
// (which the launcher does not link: docs/decisions.md, "The launcher kept
// small"): a name with a slash as it is, else the first executable file
// of that name in $PATH's directories (an empty entry: "."), refusing
// one found relative to the working directory (exec.ErrDot).
func lookPath(file string) (string, error) {
	if strings.Contains(file, "/") {
		if err := executable(file); err != nil {
			return "", wrap(file, err)
		}
		return file, nil
	}
	for _, dir := range strings.Split(os.Getenv("PATH"), ":") {
		if dir == "" {
			dir = "."
		}
		p := path.Join(dir, file)
		if executable(p) != nil {
			continue
		}
		if !path.IsAbs(p) {
			return "", errors.New(file + ": cannot run " + p + ": found relative to the current directory")
		}
		return p, nil
	}
	return "", errors.New(file + ": executable file not found in $PATH")
}

// executable is nil when file is a file the process may execute.
func executable(file string) error {
	perm, typ, err := statMode(file)
	if err != nil {
		return err
	}
	if typ.IsDir() {
		return syscall.EISDIR
	}
	err = eaccessExec(file)
	if err == nil || err != syscall.ENOSYS && err != syscall.EPERM {
		return err
	}
	if perm&0o111 != 0 {
		return nil
	}
	return os.ErrPermission
}
