#!/usr/bin/env python3
"""Where the CPU of one fan-out run went, per host (bench/fanout/cpu.sh).

cputree.py PERF_DATA HOSTS TOOL_BINARY reads a `perf record -a -e
sched:sched_process_fork -e sched:sched_process_exec -e
sched:sched_stat_runtime` of one run and prints the CPU time of every task,
summed by its role and divided by the number of hosts:

- on the hosts, each sshd connection (a process whose first exec is sshd)
  and its descendants: the connection process itself, its children that
  never exec (privilege separation's pre-auth child, internal-sftp; a
  process's threads, the launcher's, apart as "threads of"), the
  login shell with its exec chain, the shells its shell starts, and the
  commands by name;
- on the controller, the tool's process tree (the first exec of
  TOOL_BINARY's base name) by program.

The run times are the scheduler's, task by task (not sampled). A
connection made before the recording (a ControlMaster's: pssh-cm-warm) that
forks during it is counted as a connection, by what it did during the
recording. A connection count other than HOSTS means something else
logged in during the run: its figures are mixed in.
"""
import collections
import os
import re
import subprocess
import sys


def main():
    data, hosts, tool = sys.argv[1], int(sys.argv[2]), os.path.basename(sys.argv[3])
    out = subprocess.run(["perf", "script", "-i", data, "-F", "comm,pid,tid,event,trace"],
                         capture_output=True, text=True, check=True).stdout
    parent, names, rt = {}, collections.defaultdict(list), collections.Counter()
    tgid = {}  # thread ID → process ID, from each event's "PID/TID"
    conns, roots, forked_by_sshd = [], [], []
    for line in out.splitlines():
        h = re.search(r" (\d+)/(\d+) ", line)
        if h:
            tgid[int(h.group(2))] = int(h.group(1))
        if "sched_stat_runtime" in line:
            m = re.search(r"comm=.* pid=(\d+) runtime=(\d+)", line)
            rt[int(m.group(1))] += int(m.group(2))
        elif "sched_process_fork" in line:
            m = re.search(r"comm=(.*) pid=(\d+) child_comm=.* child_pid=(\d+)", line)
            parent[int(m.group(3))] = int(m.group(2))
            if m.group(1) == "sshd":
                forked_by_sshd.append(int(m.group(2)))
        elif "sched_process_exec" in line:
            m = re.search(r"filename=(\S+) pid=(\d+)", line)
            pid, name = int(m.group(2)), os.path.basename(m.group(1))
            names[pid].append(name)
            if names[pid] == ["sshd"]:
                conns.append(pid)
            if name == tool and not roots:
                roots.append(pid)
    children = collections.defaultdict(list)
    for c, p in parent.items():
        children[p].append(c)
    # An sshd process that forked during the recording but did not start
    # in it: a connection made before (a ControlMaster's), its sessions
    # counted as a connection's (its own CPU before the recording is not).
    def in_conn(pid):
        while pid in parent:
            pid = parent[pid]
            if pid in conns:
                return True
        return False
    made_set = set(conns)
    old = [p for p in dict.fromkeys(forked_by_sshd) if p not in made_set and p not in names and not in_conn(p)
           and not any(c in made_set for c in children.get(p, []))]  # not a listener
    conns.extend(old)
    made = len(conns) - len(old)

    def tree(pid):
        yield pid
        for c in children.get(pid, []):
            yield from tree(c)

    def role(pid):
        n, pn = names.get(pid, []), names.get(parent.get(pid), [])
        if not n and tgid.get(pid, pid) != pid:  # a thread: its process's
            return "threads of " + role(tgid[pid]).split(": ", 1)[-1].split(" → ")[-1]
        if not n:
            return "sshd child that does not exec (pre-auth, sftp)" if pn == ["sshd"] else "fork that does not exec"
        if pn == ["sshd"]:
            return "login shell: " + " → ".join(n)
        if n[-1] == "sh" and pn and pn[-1] == "bash" and len(pn) > 1:
            return "/bin/sh per command (worker)"
        return "command: " + n[-1]

    host, count = collections.Counter(), collections.Counter()
    for c in conns:
        host["sshd connection process"] += rt[c]
        count["sshd connection process"] += 1
        for d in list(tree(c))[1:]:
            host[role(d)] += rt[d]
            count[role(d)] += 1
    ctl = collections.Counter()
    for r in roots:
        for d in tree(r):
            ctl[(names.get(d) or [tool])[-1]] += rt[d]
    n = hosts
    warn = "" if made == hosts or (made == 0 and len(old) >= hosts) else f"  (WARNING: {made} connections made: other logins mixed in)"
    print(f"CPU a host, ms ({made} sshd connections made, {len(old)} made before used, {hosts} hosts){warn}")
    for k, v in host.most_common():
        print(f"  {v / 1e6 / n:7.2f}  ({count[k] / n:4.2f} a host)  {k}")
    hs = sum(host.values()) / 1e6 / n
    print(f"  {hs:7.2f}  the hosts' side")
    for k, v in ctl.most_common():
        print(f"  {v / 1e6 / n:7.2f}  controller: {k}")
    cs = sum(ctl.values()) / 1e6 / n
    print(f"  {cs:7.2f}  the controller's side")
    print(f"  {hs + cs:7.2f}  all")


if __name__ == "__main__":
    main()
