#!/usr/bin/env python3
"""Run a command as a child subreaper (bench/fanout/run.sh).

subreaper.py CMD [ARG...] starts CMD and becomes the subreaper of its whole
process tree (prctl PR_SET_CHILD_SUBREAPER): a process whose parent exits
without waiting for it is reparented here instead of to init, and reaped
here, so that its CPU time and its descendants' end up in this process's
cutime and cstime (/proc/PID/stat) rather than in init's. run.sh needs that
for the "hosts' CPU": sshd's connection process exits without waiting for a
session whose client closed the connection (agent's worker shell), and
that shell and every command it ran then escaped sshd's own cutime.

It exits with CMD's status once CMD has ended and every orphan is reaped,
and passes SIGTERM, SIGINT and SIGHUP on to CMD.
"""
import ctypes
import os
import signal
import sys

PR_SET_CHILD_SUBREAPER = 36


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: subreaper.py CMD [ARG...]")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("subreaper: prctl: " + os.strerror(ctypes.get_errno()))
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(sys.argv[1], sys.argv[1:])
        finally:
            os._exit(127)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: os.kill(pid, s))
    status = 0
    while True:
        try:
            p, st = os.wait()
        except ChildProcessError:
            break
        if p == pid:
            status = os.waitstatus_to_exitcode(st)
    sys.exit(status if status >= 0 else 128 - status)


if __name__ == "__main__":
    main()
