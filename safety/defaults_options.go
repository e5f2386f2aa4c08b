package safety

func flagRules(l Level, reason string, flags ...string) map[string]Rule {
	return rules(map[string]Rule{}, l, reason, flags...)
}

func (p *Policy) defaultFlags() {
	f := p.Flags
	f["rm"] = undoable(flagRules(High, "recursive delete", "-r", "-R", "--recursive"))
	rules(f["rm"], High, "deletes the root directory", "--no-preserve-root")
	f["find"] = flagRules(High, "runs a command per file", "-exec", "-execdir", "-ok", "-okdir")
	rules(f["find"], High, "deletes files", "-delete")
	f["kill"] = flagRules(High, "forced kill", "-9", "-KILL", "-SIGKILL", "-kill", "-sigkill", "-s 9", "-s KILL",
		"-s SIGKILL", "-s kill", "-n 9", "-n KILL", "-n SIGKILL", "--signal=KILL", "--signal=9",
		"--signal=SIGKILL", "--signal KILL", "--signal 9", "--signal SIGKILL")
	for _, c := range []string{"chmod", "chown", "chgrp", "setfacl"} {
		f[c] = flagRules(High, "recursive permission change", "-R", "--recursive")
	}
	// Modes and owners are journaled (trees whole); access lists are not.
	for _, c := range []string{"chmod", "chown", "chgrp"} {
		f[c] = undoable(f[c])
	}
	f["sed"] = flagRules(Medium, "edits files in place", "-i", "--in-place")
	f["journalctl"] = flagRules(High, "deletes logs", "--vacuum-size", "--vacuum-time", "--vacuum-files")
	rules(f["journalctl"], High, "changes the journal: undo cannot take it back", "--rotate", "--flush", "--relinquish-var", "--sync",
		"--setup-keys")
	f["date"] = flagRules(High, "sets the system clock", "-s", "--set")
	f["hostname"] = flagRules(High, "sets the host name", "-F", "--file", "-b", "--boot")
	f["sysctl"] = flagRules(High, "changes kernel parameters", "-w", "--write", "-p", "--load", "--system")
	f["dmesg"] = flagRules(High, "clears or configures the kernel log: undo cannot take it back", "-C", "-c", "--clear", "--read-clear",
		"-D", "-E", "-n", "--console-off", "--console-on", "--console-level")
	f["crontab"] = flagRules(High, "scheduled job change", "-e", "-r", "-i")
	f["mount"] = flagRules(High, "mount change", "-a", "--all", "-B", "--bind", "--rbind", "-M", "--move")
	for _, c := range []string{"iptables", "ip6tables"} {
		f[c] = flagRules(High, "firewall change", "-A", "-D", "-I", "-R", "-F", "-X", "-P", "-Z", "-N", "-E",
			"--append", "--delete", "--insert", "--replace", "--flush", "--delete-chain", "--policy", "--zero",
			"--new-chain", "--rename-chain")
	}
	f["dpkg"] = flagRules(High, "changes installed system packages", "-i", "--install", "-r", "--remove", "-P",
		"--purge", "--configure", "--unpack", "--set-selections", "--clear-selections")
	f["rpm"] = flagRules(High, "changes installed system packages", "-i", "--install", "-U", "--upgrade", "-F",
		"--freshen", "-e", "--erase", "--import", "--rebuilddb", "--initdb", "--setperms", "--setugids",
		"--restore")
	rules(f["rpm"], Safe, "", "-qi", "-qa", "-ql", "-qf", "-qc", "-qd", "-qR", "-qip", "-qlp", "-qpi", "-qpl",
		"-qai", "-qal", "-qil", "-qli")
	f["git"] = flagRules(High, "overrides configuration (can run commands)", "-c", "--config-env", "--exec-path")
	f["git reset"] = flagRules(High, "discards uncommitted changes", "--hard")
	f["git clean"] = flagRules(High, "deletes untracked files", "-f", "--force", "-x", "-X", "-d")
	f["git push"] = flagRules(High, "rewrites or deletes remote history", "-f", "--force", "--force-with-lease",
		"--force-if-includes", "--mirror", "--delete", "-d", "--prune")
	const gitChange = "changes the repository, which undo does not keep"
	f["git branch"] = flagRules(High, gitChange, "-D", "-d", "--delete", "-m", "-M", "-c",
		"-C", "-f", "--force", "-u", "--set-upstream-to", "--unset-upstream")
	f["git tag"] = flagRules(High, gitChange, "-d", "--delete", "-a", "-s", "-f", "-m")
	f["git config"] = flagRules(High, "changes the repository configuration, which undo does not keep", "--unset", "--add",
		"--replace-all", "--unset-all", "--rename-section", "--remove-section", "-e", "--edit")
	for _, d := range []string{"docker", "podman"} {
		for _, sub := range []string{"run", "create", "exec"} {
			f[d+" "+sub] = flagRules(High, "privileged container", "--privileged", "--cap-add", "--device",
				"--pid=host", "--security-opt", "--userns=host")
		}
		f[d+" compose down"] = flagRules(High, "deletes container volumes", "-v", "--volumes")
	}
	f["ip"] = flagRules(High, "runs commands from a file", "-b", "-batch", "-force")
	rules(f["ip"], Safe, "", "-br", "-brief")
	f["tar"] = flagRules(High, "runs a command", "--to-command", "--checkpoint-action", "--use-compress-program",
		"-I", "--info-script", "-F", "--new-volume-script")
	rules(f["tar"], High, "writes outside the directory or to another host", "-P", "--absolute-names",
		"--transform", "--xform", "--rsh-command", "--rmt-command", "--force-local")
	f["zip"] = flagRules(High, "runs a command", "-TT", "--unzip-command")
	f["curl"] = flagRules(High, "sends data to, or changes, another host", "-d", "--data", "--data-binary",
		"--data-raw", "--data-urlencode", "--data-ascii", "--json", "-F", "--form", "--form-string", "-T",
		"--upload-file", "-X", "--request", "--engine", "-K", "--config", "--unix-socket", "--abstract-unix-socket",
		"-Q", "--quote", "--mail-rcpt", "--mail-from", "-x", "--proxy", "--preproxy", "--proxy-header")
	f["wget"] = flagRules(High, "sends data to another host or runs a command", "--post-data", "--post-file",
		"--body-data", "--body-file", "--method", "--use-askpass", "-e", "--execute", "--config")
	f["split"] = flagRules(High, "runs a command", "--filter")
	f["git apply"] = flagRules(High, "writes outside the repository", "--unsafe-paths", "--directory")
	f["script"] = flagRules(High, "runs a shell", "-I", "--log-in", "-T", "--log-timing")
	f["service"] = flagRules(High, "runs a command", "--full-restart")
	f["sort"] = flagRules(High, "runs a command", "--compress-program")
	rules(f["sort"], High, "reads the files a list names, which cannot be checked", "--files0-from")
	f["rsync"] = flagRules(High, "runs a command", "-e", "--rsh", "--rsync-path")
	f["hash"] = flagRules(High, "maps a command name to another program", "-p")
	f["ss"] = flagRules(High, "closes sockets", "-K", "--kill")
	f["systemctl"] = flagRules(High, "acts on another host", "-H", "--host")
	f["git grep"] = flagRules(High, "runs a command", "-O", "--open-files-in-pager")
	for _, c := range []string{"vi", "vim", "nvim", "ex"} {
		f[c] = flagRules(High, "runs editor commands", "-c", "--cmd", "-S")
	}
}

func (p *Policy) defaultOptions() {
	q := p.QueryFlags
	q["crontab"] = []string{"-l"}
	q["kill"] = []string{"-l", "-L", "--list", "--table"}
	q["command"] = []string{"-v", "-V"}
	q["fdisk"] = []string{"-l", "--list"}
	q["parted"] = []string{"-l", "--list"}
	q["iptables"] = []string{"-L", "-S", "--list", "--list-rules"}
	q["ip6tables"] = q["iptables"]
	q["screen"] = []string{"-ls", "-list"}

	v := p.ValueOptions
	grep := []string{"-e", "-f", "-m", "-A", "-B", "-C", "-d", "-D", "--regexp", "--file", "--max-count"}
	for _, c := range []string{"grep", "egrep", "fgrep", "zgrep"} {
		v[c] = grep
	}
	v["rg"] = []string{"-e", "-f", "-g", "-t", "-T", "-m", "-A", "-B", "-C", "-j", "-M", "--glob", "--type",
		"--regexp", "--file", "--max-count"}
	v["sed"] = []string{"-e", "-f", "-l", "--expression", "--file", "--line-length"}
	for _, c := range []string{"awk", "gawk", "mawk", "nawk"} {
		v[c] = []string{"-F", "-v", "-f", "-e", "-i", "-l", "-E", "--field-separator", "--assign", "--file",
			"--source", "--include", "--load", "--exec"}
	}
	v["sort"] = []string{"-o", "-k", "-t", "-S", "-T", "--output", "--key", "--field-separator",
		"--buffer-size", "--temporary-directory", "--files0-from", "--compress-program"}
	v["head"] = []string{"-n", "-c", "--lines", "--bytes"}
	v["tail"] = []string{"-n", "-c", "-s", "--lines", "--bytes", "--pid", "--sleep-interval"}
	v["cut"] = []string{"-d", "-f", "-c", "-b", "--delimiter", "--fields", "--characters", "--bytes"}
	v["find"] = []string{"-name", "-iname", "-path", "-ipath", "-type", "-newer", "-user", "-group", "-perm",
		"-size", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-maxdepth", "-mindepth", "-regex",
		"-iregex", "-printf", "-wholename", "-lname", "-samefile", "-uid", "-gid", "-links", "-inum"}
	v["journalctl"] = []string{"-u", "-n", "-p", "-S", "-U", "-b", "-o", "-t", "-g", "-D", "-M", "-F", "--unit",
		"--user-unit", "--lines", "--priority", "--since", "--until", "--boot", "--output", "--identifier",
		"--grep", "--directory", "--file", "--field", "--facility"}
	v["systemctl"] = []string{"-t", "-p", "-n", "-o", "-H", "-M", "--type", "--property", "--lines", "--output",
		"--host", "--machine", "--state", "--root", "--signal", "-s", "--kill-whom"}
	v["git"] = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace"}
	v["touch"] = []string{"-d", "-t", "-r", "--date", "--reference"}
	v["truncate"] = []string{"-s", "--size", "-r", "--reference"}
	v["git commit"] = []string{"-m", "-F", "--message", "--file", "-C", "-c", "--author", "--date"}
	v["git log"] = []string{"-n", "--author", "--grep", "--since", "--until", "--format", "--pretty"}
	v["git checkout"] = []string{"-b", "-B"}
	v["git clone"] = []string{"-b", "--branch", "--depth", "-o", "--origin"}
	v["git tag"] = []string{"-m", "-F"}
	v["git stash"] = []string{"-m", "--message"}
	for _, d := range []string{"docker", "podman"} {
		v[d] = []string{"-H", "--host", "-c", "--context", "--config", "-l", "--log-level"}
		v[d+" logs"] = []string{"-n", "--tail", "--since", "--until"}
		v[d+" ps"] = []string{"-f", "--filter", "--format", "-n", "--last"}
		v[d+" images"] = []string{"-f", "--filter", "--format"}
		v[d+" inspect"] = []string{"-f", "--format", "--type"}
		v[d+" exec"] = []string{"-e", "-u", "-w", "--user", "--workdir", "--env", "--env-file"}
		v[d+" run"] = []string{"-v", "-e", "-p", "--name", "-w", "--workdir", "-u", "--user", "--network",
			"--net", "--entrypoint", "-m", "--memory", "--env-file", "--mount", "-l", "--label", "--restart",
			"--cpus", "-h", "--hostname", "--add-host", "--dns", "--volume", "--env", "--publish"}
		v[d+" create"] = v[d+" run"]
	}
	v["ip"] = []string{"-f", "-n", "-family", "-netns", "-rc"}
	v["kill"] = []string{"-s", "-n", "--signal"}
	v["curl"] = []string{"-o", "-d", "-H", "-X", "-u", "-A", "-e", "-T", "-F", "-x", "-K", "-w", "-m", "-b", "-c",
		"-D", "-r", "--output", "--data", "--data-binary", "--data-raw", "--data-urlencode", "--header",
		"--request", "--user", "--user-agent", "--referer", "--upload-file", "--form", "--proxy", "--config",
		"--write-out", "--max-time", "--connect-timeout", "--cookie", "--cookie-jar", "--dump-header",
		"--retry", "--range", "--cacert", "--cert", "--key", "--resolve"}
	v["wget"] = []string{"-O", "-o", "-a", "-P", "-U", "-e", "-t", "-T", "-i", "--output-document",
		"--output-file", "--append-output", "--directory-prefix", "--user-agent", "--header", "--post-data",
		"--post-file", "--tries", "--timeout", "--input-file"}
	v["tar"] = []string{"-f", "-C", "-T", "-X", "-b", "-H", "--file", "--directory", "--files-from",
		"--exclude-from", "--format", "--exclude"}
	for _, c := range []string{"chmod", "chown", "chgrp"} {
		v[c] = []string{"--reference"}
	}
	for _, c := range []string{"cp", "mv", "ln", "install"} {
		v[c] = []string{"-t", "-S", "--target-directory", "--suffix"}
	}
	v["install"] = append(v["install"], "-m", "-o", "-g", "--mode", "--owner", "--group")
	for _, c := range []string{"mkdir", "mkfifo"} {
		v[c] = []string{"-m", "--mode"}
	}
	v["ps"] = []string{"-o", "-O", "-p", "-u", "-U", "-C", "-G", "-g", "-q", "-t", "--sort", "--pid", "--ppid",
		"--format"}
	v["lsof"] = []string{"-p", "-u", "-c", "-g", "-d"}
	v["date"] = []string{"-d", "--date", "-r", "--reference", "-f", "--file"}
	v["mount"] = []string{"-t", "-o", "-L", "-U", "-O", "--types", "--options", "--label", "--uuid"}
	v["crontab"] = []string{"-u"}
	v["iptables"] = []string{"-t", "--table"}
	v["ip6tables"] = v["iptables"]
	v["read"] = []string{"-p", "-d", "-n", "-N", "-t", "-u", "-i"}
	v["ss"] = []string{"-D", "--diag", "-F", "--filter"}
	v["jq"] = []string{"--arg", "--argjson", "-f", "--from-file", "--indent", "--slurpfile", "--rawfile"}

	w := p.WriteOptions
	w["sort"] = []string{"-o", "--output"}
	w["git"] = []string{"--output"}
	w["curl"] = []string{"-o", "--output", "--output-dir", "-D", "--dump-header", "-c", "--cookie-jar", "--trace",
		"--trace-ascii", "--stderr", "--libcurl", "--etag-save"}
	w["wget"] = []string{"-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "-P",
		"--directory-prefix"}
	w["tar"] = []string{"-C", "--directory", "-f", "--file"}
	w["git archive"] = []string{"-o", "--output"}
	w["git format-patch"] = []string{"-o", "--output-directory"}
	w["openssl"] = []string{"-out", "-keyout", "-writerand"}
	w["unzip"] = []string{"-d"}
	for _, c := range []string{"cp", "mv", "ln", "install"} {
		w[c] = []string{"-t", "--target-directory"}
	}
	w["find"] = []string{"-fprint", "-fprint0", "-fprintf", "-fls"}
	w["tree"] = []string{"-o"}
	w["time"] = []string{"-o", "--output"}
	w["strace"] = []string{"-o", "--output"}
	w["ltrace"] = []string{"-o", "--output"}
	w["patch"] = []string{"-o", "--output"}
	w["ss"] = []string{"-D", "--diag"}

	r := p.ReadOptions
	r["curl"] = []string{"-T", "--upload-file", "-K", "--config"}
	r["wget"] = []string{"--post-file", "--body-file", "-i", "--input-file"}
	r["sort"] = []string{"--files0-from"}
	r["xargs"] = []string{"-a", "--arg-file"}
	r["parallel"] = []string{"-a", "--arg-file"}
	r["openssl"] = []string{"-in", "-key", "-CAfile", "-certfile", "-signkey", "-config", "-rand"}
	r["touch"] = []string{"-r", "--reference"}
	for _, c := range []string{"chmod", "chown", "chgrp"} {
		r[c] = []string{"--reference"}
	}
	r["ss"] = []string{"-F", "--filter"}
	for _, c := range []string{"grep", "egrep", "fgrep", "zgrep"} {
		r[c] = []string{"-f", "--file"}
	}

	rr := p.RecursiveReaders
	for _, c := range []string{"grep", "egrep", "fgrep", "zgrep"} {
		rr[c] = []string{"-r", "-R", "--recursive", "--dereference-recursive"}
	}
	rr["rg"] = nil
	rr["tar"] = nil
	rr["cp"] = []string{"-r", "-R", "-a", "--recursive", "--archive"}
	rr["zip"] = []string{"-r", "--recurse-paths"}

	for _, c := range []string{"rm", "rmdir", "unlink", "shred", "truncate", "touch", "mkdir", "chmod", "chown",
		"chgrp", "setfacl", "chattr", "tee", "mkfifo", "mknod", "mv", "patch", "vi", "vim", "nvim", "nano", "emacs",
		"ed", "ex"} {
		p.WriteOperands[c] = "all"
	}
	for _, c := range []string{"cp", "ln", "install", "docker cp", "podman cp"} {
		p.WriteOperands[c] = "last"
	}
	p.WriteOperands["uniq"] = "second"
	p.WriteOperands["xxd"] = "second"
	p.WriteOperands["git clone"] = "second"
}

func (p *Policy) defaultWrappers() {
	w := p.Wrappers
	w["sudo"] = Wrapper{Assignments: true, ValueOptions: []string{"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t",
		"-U", "-T", "-R", "--user", "--group", "--chdir", "--host", "--prompt", "--role", "--type",
		"--other-user", "--close-from", "--command-timeout", "--chroot"}}
	w["doas"] = Wrapper{ValueOptions: []string{"-u", "-C"}}
	w["pkexec"] = Wrapper{ValueOptions: []string{"--user"}}
	w["runuser"] = Wrapper{ValueOptions: []string{"-u", "-g", "-G", "-s", "--user", "--group", "--supp-group",
		"--shell"}, CodeOptions: []string{"-c", "--command"}}
	w["su"] = Wrapper{NoCommand: true, ValueOptions: []string{"-s", "--shell", "-g", "--group", "-G",
		"--supp-group", "-w", "--whitelist-environment"}, CodeOptions: []string{"-c", "--command",
		"--session-command"}}
	w["script"] = Wrapper{NoCommand: true, CodeOptions: []string{"-c", "--command"}}
	w["sg"] = Wrapper{NoCommand: true, CodeOptions: []string{"-c"}}
	w["env"] = Wrapper{Assignments: true, ValueOptions: []string{"-u", "--unset", "-C", "--chdir"},
		CodeOptions: []string{"-S", "--split-string"}}
	w["nice"] = Wrapper{ValueOptions: []string{"-n", "--adjustment"}}
	w["ionice"] = Wrapper{ValueOptions: []string{"-c", "-n", "-p", "-P", "-u", "--class", "--classdata", "--pid",
		"--pgid", "--uid"}}
	w["stdbuf"] = Wrapper{ValueOptions: []string{"-i", "-o", "-e", "--input", "--output", "--error"}}
	w["timeout"] = Wrapper{Skip: 1, ValueOptions: []string{"-s", "--signal", "-k", "--kill-after"}}
	w["time"] = Wrapper{ValueOptions: []string{"-f", "--format", "-o", "--output"}}
	w["exec"] = Wrapper{ValueOptions: []string{"-a"}}
	w["xargs"] = Wrapper{InputOperands: true, ValueOptions: []string{"-I", "-L", "-n", "-P", "-s", "-d", "-E",
		"-a", "--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-lines", "--max-chars", "--eof",
		"--process-slot-var"}}
	w["flock"] = Wrapper{Skip: 1, ValueOptions: []string{"-w", "--timeout", "-E", "--conflict-exit-code"},
		CodeOptions: []string{"-c", "--command"}}
	w["watch"] = Wrapper{JoinCode: true, ValueOptions: []string{"-n", "--interval"}}
	w["parallel"] = Wrapper{JoinCode: true, InputOperands: true, ValueOptions: []string{"-j", "--jobs", "-S",
		"--sshlogin", "-a", "--arg-file", "--delay", "--timeout"}}
	w["chroot"] = Wrapper{Skip: 1, ValueOptions: []string{"--userspec", "--groups"}}
	w["nsenter"] = Wrapper{ValueOptions: []string{"-t", "--target", "-S", "--setuid", "-G", "--setgid"}}
	w["unshare"] = Wrapper{ValueOptions: []string{"--map-user", "--map-group"}}
	w["taskset"] = Wrapper{Skip: 1}
	w["chrt"] = Wrapper{Skip: 1, ValueOptions: []string{"-T", "-P", "-D", "--sched-runtime", "--sched-period",
		"--sched-deadline"}}
	w["prlimit"] = Wrapper{ValueOptions: []string{"-p", "--pid", "-o", "--output"}}
	w["strace"] = Wrapper{ValueOptions: []string{"-o", "-e", "-p", "-s", "-u", "-E", "-P", "-a", "-I", "-b", "-O",
		"-S", "-X", "--output", "--env", "--trace-path", "--string-limit", "--user"}}
	w["ltrace"] = Wrapper{ValueOptions: []string{"-o", "-e", "-p", "-s", "-u", "-a", "-A", "-D", "-F", "-l", "-n",
		"-w", "-x", "--output", "--config", "--library", "--indent", "--align"}}
	for _, n := range []string{"nohup", "command", "builtin", "setsid", "busybox", "unbuffer"} {
		w[n] = Wrapper{}
	}
	p.set(Safe, "", "parallel", "nohup", "nice", "ionice", "stdbuf", "timeout", "time", "exec", "xargs", "setsid",
		"watch", "busybox", "taskset", "chrt", "unbuffer", "prlimit")
	// flock holds its file's lock while its command runs, or forever in
	// the background (setsid flock /var/lib/dpkg/lock-frontend sleep …):
	// apt, rpm and iptables (the xtables lock) wait on it; and it creates
	// the file when missing.
	p.set(High, "takes a lock other processes wait on (a package manager's, the firewall's) for as long as it runs, and creates its file when missing", "flock")
	p.set(High, "changes the priority of running processes (no undo takes it back)", "renice", "snice", "skill", "cpulimit",
		"schedtool")
	p.set(Medium, "records a terminal session", "script")

	in := p.Interpreters
	for _, n := range []string{"python", "python2", "python3", "pypy", "pypy3"} {
		in[n] = []string{"-c"}
	}
	in["perl"] = []string{"-e", "-E"}
	in["ruby"] = []string{"-e"}
	in["node"] = []string{"-e", "--eval", "-p", "--print"}
	in["nodejs"] = in["node"]
	in["bun"] = []string{"-e", "--eval"}
	in["php"] = []string{"-r"}
	p.Flags["php"] = flagRules(High, "serves files on a port (its built-in web server)", "-S")
	in["lua"] = []string{"-e"}
	in["luajit"] = []string{"-e"}
	in["Rscript"] = []string{"-e"}
	in["groovy"] = []string{"-e"}
	in["osascript"] = []string{"-e"}
	in["pwsh"] = []string{"-c", "-Command", "-EncodedCommand", "-e"}
	in["powershell"] = in["pwsh"]
	in["tclsh"] = nil
	in["expect"] = []string{"-c"}
	in["gdb"] = []string{"-ex", "--eval-command", "-x", "--command", "-batch"}
}

// undoable marks every rule of m Undoable.
func undoable(m map[string]Rule) map[string]Rule {
	for k, r := range m {
		r.Undoable = true
		m[k] = r
	}
	return m
}
