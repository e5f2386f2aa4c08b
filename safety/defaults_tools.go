package safety

// defaultOperatorTools adds the programs operators use beyond the basic
// shell tools. A program the policy does not know is High (its effect
// cannot be known), so the ones an operator runs to look at a host are
// listed here as Safe, with their subcommands where one program both
// inspects and destroys (kubectl get / kubectl delete). Database clients
// run queries whose effect cannot be known from the command line: High.
func (p *Policy) defaultOperatorTools() {
	s, f, v := p.Subcommands, p.Flags, p.ValueOptions

	p.set(Safe, "", "lsb_release", "getconf", "pstree", "lsns", "lshw", "dmidecode", "sar", "pidstat",
		"nstat", "traceroute", "tracepath", "mtr", "xxd", "bzcat", "xzcat", "zless", "zmore", "lastlog",
		"ethtool", "sensors", "timedatectl", "hostnamectl", "resolvectl", "loginctl", "networkctl",
		"localectl", "kubectl", "helm", "terraform", "zfs", "zpool", "virsh", "openssl", "redis-cli",
		"docker-compose", "apachectl", "apache2ctl")
	f["ethtool"] = flagRules(High, "network configuration change", "-s", "--change", "-K", "--features",
		"-G", "--set-ring", "-A", "--pause", "-C", "--coalesce", "-L", "--set-channels", "-E", "-f", "--flash",
		"-r", "--negotiate", "--reset")

	// *ctl tools of systemd: status and listings are Safe, settings High.
	for _, n := range []string{"timedatectl", "hostnamectl", "resolvectl", "loginctl", "networkctl", "localectl"} {
		s[n] = rules(map[string]Rule{"*": {Level: High, Reason: "changes system settings"}}, Safe, "", "", "status", "show",
			"list", "list-sessions", "list-users", "list-seats", "list-timezones", "list-locales",
			"list-keymaps", "show-session", "show-user", "show-seat", "session-status", "user-status",
			"seat-status", "timesync-status", "show-timesync", "query", "statistics", "dns", "domain", "lldp",
			"label")
	}

	// Web servers: -t tests the configuration, -s signals the master.
	// Issue 26: a server started, reloaded or reopening its logs is no
	// file change undo takes back: High (a person, --approve high, or a
	// policy rule lowers it).
	p.set(High, "runs or signals the web server: undo cannot take a server's state back", "nginx")
	p.QueryFlags["nginx"] = []string{"-t", "-T", "-v", "-V", "-h", "-?"}
	v["nginx"] = []string{"-c", "-g", "-p", "-e", "-s"}
	f["nginx"] = rules(map[string]Rule{}, High, "reloads the web server: undo cannot take a server's state back", "-s reload", "-s reopen")
	rules(f["nginx"], High, "stops the web server", "-s stop", "-s quit")
	// -t opens the error log at start; a directive or a configuration of
	// the caller's can load a module (code) and name logs to write.
	rules(f["nginx"], High, "directives on the command line can load a module (code) or name a file to write", "-g")
	rules(f["nginx"], High, "sets the prefix its modules (code) are found under and its logs written (undo does not know them)", "-p")
	p.WriteOptions["nginx"] = []string{"-e"}
	for _, n := range []string{"apachectl", "apache2ctl"} {
		p.QueryFlags[n] = []string{"-t", "-S", "-M", "-v", "-V", "-l", "-L"}
		s[n] = rules(map[string]Rule{"": {Level: High, Reason: "starts the web server: undo cannot take a server's state back"}, "*": {Level: High, Reason: "controls the web server"}},
			Safe, "", "configtest", "status", "fullstatus")
		rules(s[n], High, "starts or restarts the web server: undo cannot take a server's state back", "start", "restart", "graceful")
		rules(s[n], High, "stops the web server", "stop", "graceful-stop")
	}

	// kubectl: reads are Safe; changes, deletion, draining and running
	// code in a pod High (a cluster's objects are on other hosts: undo
	// cannot take a change back); reading secrets is High.
	kc := rules(map[string]Rule{"*": {Level: High, Reason: "unknown kubectl command"}, "": {}}, Safe, "", "get", "describe",
		"logs", "top", "version", "explain", "api-resources", "api-versions", "cluster-info", "diff", "events",
		"wait", "auth", "config", "rollout", "completion", "help")
	rules(kc, High, "changes cluster objects (on other hosts): undo cannot take it back", "apply", "create", "scale", "label",
		"annotate", "patch", "set", "expose", "autoscale", "cordon", "uncordon")
	rules(kc, High, "serves a cluster port on this host", "port-forward")
	rules(kc, High, "serves the cluster API and local files on a port", "proxy")
	rules(kc, High, "deletes or replaces cluster objects, or runs code in a pod", "delete", "drain", "replace",
		"exec", "attach", "run", "debug", "cp", "edit", "taint", "certificate", "plugin", "kustomize")
	s["kubectl"] = kc
	f["kubectl"] = flagRules(High, "a kubeconfig can name a program to run (exec credential plugin)",
		"--kubeconfig")
	s["kubectl get"] = map[string]Rule{"*": {}, "": {},
		"secret": {Level: High, Reason: "reads secrets"}, "secrets": {Level: High, Reason: "reads secrets"}}
	s["kubectl describe"] = s["kubectl get"]
	s["kubectl auth"] = rules(map[string]Rule{"*": {Level: High, Reason: "changes access rules (on other hosts): undo cannot take it back"}}, Safe, "", "", "can-i",
		"whoami")
	s["kubectl rollout"] = rules(map[string]Rule{"*": {Level: High, Reason: "changes a rollout (on other hosts): undo cannot take it back"}}, Safe, "", "", "status",
		"history")
	s["kubectl config"] = rules(map[string]Rule{"*": {Level: High, Reason: "changes kubectl's configuration, which undo does not keep"}}, Safe, "", "",
		"view", "current-context", "get-contexts", "get-clusters", "get-users")
	f["kubectl config view"] = flagRules(High, "prints credentials", "--raw")
	f["kubectl delete"] = flagRules(High, "deletes cluster objects", "--all")
	kv := []string{"-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user", "-o", "--output",
		"-l", "--selector", "-c", "--container", "--tail", "--since", "--filename", "--field-selector",
		"-s", "--server", "--request-timeout", "--sort-by"}
	v["kubectl"] = kv
	v["helm"] = []string{"-n", "--namespace", "--kube-context", "--kubeconfig", "-o", "--output", "--version",
		"-f", "--values", "--set", "--revision", "--max"}
	hm := rules(map[string]Rule{"*": {Level: High, Reason: "unknown helm command"}, "": {}}, Safe, "", "list", "ls", "status",
		"history", "get", "show", "inspect", "search", "version", "env", "template", "lint", "verify", "help",
		"completion", "repo", "dependency")
	rules(hm, High, "installs or changes a release (on other hosts): undo cannot take it back", "install", "upgrade", "rollback")
	rules(hm, High, "writes chart files whose names undo does not know", "pull", "fetch", "package", "create")
	rules(hm, High, "uninstalls a release or installs plugins", "uninstall", "delete", "del", "un", "plugin",
		"push")
	s["helm"] = hm
	// Session 14: a release's values and manifests hold its secrets
	// (database passwords in values, Secret objects in the manifest).
	s["helm get"] = rules(map[string]Rule{"*": {Level: High, Reason: "unknown helm get command"}, "": {}}, Safe, "", "notes", "metadata")
	rules(s["helm get"], High, "prints a release's values or manifests (its secrets)", "values", "manifest", "all", "hooks")
	s["helm repo"] = rules(map[string]Rule{"*": {Level: High, Reason: "changes helm's repositories, which undo does not keep"}}, Safe, "", "", "list", "ls")
	rules(s["helm repo"], High, "removes a helm repository", "remove", "rm")
	s["helm dependency"] = rules(map[string]Rule{"*": {Level: High, Reason: "downloads chart dependencies whose files undo does not know"}}, Safe, "", "",
		"list", "ls")

	// terraform: apply, destroy and state surgery change real
	// infrastructure (other hosts): High.
	tf := rules(map[string]Rule{"*": {Level: High, Reason: "changes infrastructure"}, "": {}}, Safe, "", "version", "show",
		"output", "validate", "providers", "graph", "help", "state", "workspace")
	rules(tf, High, "downloads or runs providers (code), which change state undo does not keep (locks, state, test infrastructure)",
		"init", "plan", "get", "refresh", "console", "login", "logout", "test")
	rules(tf, High, "rewrites configuration files undo does not know", "fmt")
	rules(tf, High, "changes or destroys infrastructure", "apply", "destroy", "import", "taint", "untaint",
		"force-unlock")
	s["terraform"] = tf
	s["terraform state"] = rules(map[string]Rule{"*": {Level: High, Reason: "changes infrastructure state"}}, Safe, "", "",
		"list", "show", "pull")
	s["terraform workspace"] = rules(map[string]Rule{"*": {Level: High, Reason: "changes the workspace (its state backend): undo cannot take it back"}}, Safe, "", "",
		"list", "show")
	rules(s["terraform workspace"], High, "deletes a workspace", "delete")

	// ZFS and libvirt: listings Safe, the rest High (a snapshot, a
	// scrub, a started machine are no file change undo takes back).
	s["zfs"] = rules(map[string]Rule{"*": {Level: High, Reason: "changes or destroys datasets"}, "": {}}, Safe, "", "list",
		"get", "holds", "version", "help", "userspace", "groupspace", "projectspace", "diff")
	rules(s["zfs"], High, "creates a snapshot or dataset: undo cannot take it back", "snapshot", "snap", "create", "hold")
	s["zpool"] = rules(map[string]Rule{"*": {Level: High, Reason: "changes or destroys pools"}, "": {}}, Safe, "", "list",
		"status", "iostat", "get", "history", "version", "help", "events")
	rules(s["zpool"], High, "starts a pool scrub: undo cannot take it back", "scrub")
	v["zfs"] = []string{"-o", "-t", "-s", "-S", "-d"}
	v["zpool"] = []string{"-o", "-T"}
	s["virsh"] = rules(map[string]Rule{"*": {Level: High, Reason: "changes or destroys virtual machines"}, "": {Level: High,
		Reason: "runs virsh commands from input"}}, Safe, "", "list", "dominfo", "domstate", "dumpxml", "domifaddr",
		"domblklist", "domiflist", "domstats", "net-list", "net-info", "net-dumpxml", "pool-list", "pool-info",
		"vol-list", "vol-info", "version", "nodeinfo", "capabilities", "hostname", "uri", "help",
		"snapshot-list", "vcpuinfo", "dommemstat", "domblkinfo")
	rules(s["virsh"], High, "starts or snapshots a virtual machine: undo cannot take it back", "start", "resume", "snapshot-create-as",
		"snapshot-create")
	v["virsh"] = []string{"-c", "--connect"}

	// docker: deleting containers, images or their data is High.
	for _, d := range []string{"docker", "podman"} {
		rules(s[d], High, "deletes containers, images or their data", "rm", "rmi", "kill")
		for _, obj := range []string{"container", "image"} {
			rules(s[d+" "+obj], High, "deletes containers, images or their data", "rm", "remove", "kill")
		}
		rules(s[d+" system"], High, "deletes container data", "reset")
		// Issue 26: a command run in a container is confined by no
		// rule of agent's and undone by no journal, and it reads the
		// container's secrets (`docker exec web env`); cp and export
		// carry a container's files (its secrets) out or in.
		const inside = "runs a command in, or copies files into or out of, a container: no undo, no confinement, its secrets"
		rules(s[d], High, inside, "exec", "cp", "export")
		rules(s[d+" container"], High, inside, "exec", "cp", "export")
		rules(s[d+" compose"], High, inside, "exec", "cp")
	}
	s["docker-compose"] = s["docker compose"]
	f["docker-compose down"] = f["docker compose down"]

	// openssl: inspecting certificates is Safe; key files read are
	// checked as sensitive reads; writing keys Medium; connecting High.
	s["openssl"] = rules(map[string]Rule{"*": {Level: High, Reason: "runs an openssl command whose effects are not all files its command line names"}, "": {Level: High,
		Reason: "runs openssl commands from input"}}, Safe, "", "version", "x509", "verify", "crl", "asn1parse",
		"ciphers", "list", "dgst", "req", "rand", "crl2pkcs7", "pkcs7", "errstr", "help")
	rules(s["openssl"], High, "connects to another host", "s_client", "s_server", "s_time", "ocsp")
	// Issue 26: the key and encoding tools write only the files -out and
	// -keyout name (journaled): Medium. The rest (ca's database and
	// certificate directory, rehash's links, srp's verifier file,
	// engine's libraries) change what undo does not know: High.
	rules(s["openssl"], Medium, "writes the files -out and -keyout name", "genrsa", "genpkey", "gendsa", "rsa", "pkey",
		"pkeyutl", "ec", "ecparam", "dhparam", "dsa", "dsaparam", "enc", "pkcs12", "pkcs8", "rsautl", "smime", "cms",
		"passwd", "base64", "md5", "sha1", "sha256", "sha512", "kdf", "mac", "prime", "spkac", "nseq", "sess_id",
		"speed", "info")
	f["openssl"] = flagRules(High, "loads a library (code) into openssl", "-engine", "-provider", "-provider-path")
	v["openssl"] = []string{"-in", "-out", "-keyout", "-CAfile", "-CApath", "-config", "-passin", "-passout",
		"-subj", "-days", "-newkey", "-key", "-name", "-inform", "-outform", "-connect", "-servername",
		"-certfile", "-signkey", "-untrusted"}
	p.ReadOptions["openssl"] = []string{"-in", "-key", "-CAfile", "-certfile", "-signkey", "-config", "-rand"}
	p.WriteOptions["openssl"] = []string{"-out", "-keyout", "-writerand"}
	v["openssl"] = append(v["openssl"], "-writerand", "-rand")

	// Database clients run queries (-e, -c, stdin) whose effect cannot be
	// known: High, except asking for the version or a listing.
	p.set(High, "database client (runs queries whose effect cannot be known)", "mysql", "mariadb", "psql",
		"sqlite3", "mongo", "mongosh", "clickhouse-client", "cqlsh", "sqlcmd", "mysqladmin", "pg_ctl",
		"dropdb", "dropuser", "createdb")
	for _, n := range []string{"mysql", "mariadb", "psql", "sqlite3", "mongo", "mongosh", "mysqladmin"} {
		p.QueryFlags[n] = []string{"--version", "-V", "--help"}
	}
	p.QueryFlags["psql"] = append(p.QueryFlags["psql"], "-l", "--list")
	f["psql"] = flagRules(High, "runs SQL whose effect cannot be known", "-c", "--command", "-f", "--file")
	for _, n := range []string{"mysql", "mariadb"} {
		f[n] = flagRules(High, "runs SQL whose effect cannot be known", "-e", "--execute")
	}
	// redis-cli: read-only commands Safe; FLUSHALL, DEL, CONFIG … High.
	s["redis-cli"] = rules(map[string]Rule{"*": {Level: High, Reason: "runs a redis command that can change or delete data"},
		"": {Level: High, Reason: "runs redis commands from input"}}, Safe, "", "ping", "info", "dbsize", "time", "lastsave",
		"PING", "INFO", "DBSIZE", "TIME", "LASTSAVE")
	p.QueryFlags["redis-cli"] = []string{"--version", "-v", "--help"}
	v["redis-cli"] = []string{"-h", "-p", "-a", "-n", "-u", "-s", "--user", "--pass", "-r", "-i"}

	// Debuggers and tracers attached to a running process read its memory
	// and can make it run code.
	f["strace"] = flagRules(High, "attaches to a running process", "-p", "--attach")
	rules(f["strace"], High, "sets the traced program's environment (LD_PRELOAD loads code)", "-E", "--env")
	f["ltrace"] = flagRules(High, "attaches to a running process", "-p")
	rules(f["ltrace"], High, "reads a prototype file the tracer prints back", "-F", "--config")
	f["gdb"] = flagRules(High, "attaches to a running process", "-p", "--pid", "-pid")
	v["gdb"] = []string{"-p", "--pid", "-pid", "-d", "--directory", "-cd", "-s", "--symbols", "-c", "--core",
		"-e", "--exec"}
}
