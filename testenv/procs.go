package testenv

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// procInfo is what /proc/PID/stat says about a process (Linux).
type procInfo struct {
	pid, ppid, pgid int
	state           byte // 'R', 'S', 'T', 'Z', …
}

// readProc reads /proc/PID/stat; ok is false when the process is gone or
// /proc is not available.
func readProc(pid int) (procInfo, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procInfo{}, false
	}
	return parseProcStat(b)
}

// parseProcStat parses "pid (comm) state ppid pgrp …"; comm may hold
// spaces and parentheses, so the fields start after the last ')'.
func parseProcStat(b []byte) (procInfo, bool) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 1 || end < open {
		return procInfo{}, false
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return procInfo{}, false
	}
	f := bytes.Fields(b[end+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgid, err2 := strconv.Atoi(string(f[2]))
	if err1 != nil || err2 != nil {
		return procInfo{}, false
	}
	return procInfo{pid: pid, ppid: ppid, pgid: pgid, state: f[0][0]}, true
}

// processes lists every process in /proc.
func processes() []procInfo {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var ps []procInfo
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			ps = append(ps, p)
		}
	}
	return ps
}

// processAlive reports whether pid exists and is not a zombie. Where PID 1
// does not reap orphans (some containers and micro-VMs), killed processes
// stay zombies forever; they run nothing and hold no files.
func processAlive(pid int) bool {
	if p, ok := readProc(pid); ok {
		return p.state != 'Z' && p.state != 'X'
	}
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		return false // /proc works and pid is not in it
	}
	return syscall.Kill(pid, 0) == nil
}

// tree returns root and its descendants (by parent pid).
func tree(root int) []procInfo {
	children := map[int][]procInfo{}
	var rootInfo procInfo
	found := false
	for _, p := range processes() {
		children[p.ppid] = append(children[p.ppid], p)
		if p.pid == root {
			rootInfo, found = p, true
		}
	}
	if !found {
		return nil
	}
	out := []procInfo{rootInfo}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i].pid]...)
	}
	return out
}

// killTree kills root, all its descendants and their process groups, and
// waits (up to timeout) until none of them is alive. It first stops the
// whole tree with SIGSTOP, round after round until no new process shows up,
// so that nothing forks or gets reparented while it is being killed.
//
// OpenSSH's sshd puts every connection and every session in a new session
// (setsid), so killing the listener's process group alone would leave them.
func killTree(root int, timeout time.Duration) error {
	seen := map[int]procInfo{}
	for round := 0; round < 100; round++ {
		fresh := false
		for _, p := range tree(root) {
			if _, ok := seen[p.pid]; !ok {
				seen[p.pid] = p
				syscall.Kill(p.pid, syscall.SIGSTOP)
				fresh = true
			}
		}
		if !fresh {
			break
		}
	}
	own := syscall.Getpgrp()
	for pid, p := range seen {
		syscall.Kill(pid, syscall.SIGKILL)
		if p.pgid > 1 && p.pgid != own {
			syscall.Kill(-p.pgid, syscall.SIGKILL)
		}
	}
	syscall.Kill(root, syscall.SIGKILL) // when /proc is not available

	deadline := time.Now().Add(timeout)
	for pid := range seen {
		for processAlive(pid) {
			if time.Now().After(deadline) {
				return fmt.Errorf("process %d still alive after SIGKILL", pid)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return nil
}
