package safety

// DefaultPolicy returns the built-in policy: the adaptive-execution spec's
// file rules (system roots, 10 MB read cap, binary refusal) and the command
// lists of DESIGN.md's Safety section. Each call returns fresh maps.
func DefaultPolicy() Policy {
	p := Policy{
		Commands:         map[string]Rule{},
		Subcommands:      map[string]map[string]Rule{},
		Flags:            map[string]map[string]Rule{},
		QueryFlags:       map[string][]string{},
		ValueOptions:     map[string][]string{},
		WriteOptions:     map[string][]string{},
		WriteOperands:    map[string]string{},
		ReadOptions:      map[string][]string{},
		RecursiveReaders: map[string][]string{},
		Wrappers:         map[string]Wrapper{},
		Interpreters:     map[string][]string{},
		ReadOnly:         map[string]string{},
		MaxReadBytes:     10 << 20,
		MaxWriteBytes:    10 << 20,
		RefuseBinary:     true,
		PatternCommands:  []string{"grep", "egrep", "fgrep", "zgrep", "rg", "awk", "gawk", "mawk", "nawk", "sed", "jq"},
		DataOnly: []string{"echo", "printf", "true", "false", ":", "test", "[", "sleep", "basename", "dirname",
			"seq", "printenv", "which", "type", "whereis", "ls", "stat", "du", "df", "wc", "pwd", "whoami", "id", "groups", "uname", "uptime", "free", "nproc",
			"cd", "pushd", "popd", "dirs", "exit", "return", "shift", "wait", "jobs", "realpath", "readlink",
			"tty", "arch", "locale", "set", "unset", "shopt", "ulimit", "umask", "hash", "times", "break",
			"continue", "getopts", "ps", "pgrep", "pidof", "lscpu", "lsblk", "lsmem", "lsmod", "lspci", "lsusb",
			"vmstat", "w", "who", "users", "last", "ping", "dig", "nslookup", "host", "sync",
			// tr reads its input only: its operands are sets, not files
			// (taken for files, `tr a b` had the harvest read ./a and
			// ./b, and with a $ in the command walk the working
			// directory as a tree)
			"tr"},
		MetadataOnly: []string{"find", "tree", "file", "namei", "getfacl", "lsattr"},
		Shells:       []string{"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"},
		BinDirs:      []string{"/bin", "/usr/bin", "/sbin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"},
		DangerousEnv: []string{"PATH", "LD_*", "IFS", "BASH_ENV", "ENV", "PROMPT_COMMAND", "SHELLOPTS",
			"BASHOPTS", "PS4", "BASH_FUNC_*", "PYTHONPATH", "PYTHONSTARTUP", "PERL5OPT", "PERL5LIB",
			"NODE_OPTIONS", "RUBYOPT", "GIT_SSH*", "GIT_EXTERNAL_DIFF", "GIT_EXEC_PATH", "GIT_PAGER",
			"GIT_EDITOR", "PAGER", "EDITOR", "VISUAL", "SUDO_ASKPASS", "LESSOPEN", "LESSCLOSE", "HOME", "CDPATH",
			"GIT_*", "XDG_*", "*PAGER", "*EDITOR", "LESS*", "SYSTEMD_*", "*_OPTIONS", "*OPTS", "PERL*", "PYTHON*",
			"RUBY*", "NODE_*", "JAVA_*", "GCONV_PATH", "LOCPATH", "OPENSSL_*", "CURL_HOME", "WGETRC", "SSH_*",
			"*ASKPASS", "KUBECONFIG", "DOCKER_*", "HISTFILE", "BASH_*", "ZDOTDIR", "INPUTRC", "BROWSER", "SHELL",
			"TMPDIR", "MANOPT", "MANPATH", "TERMINFO*", "HOSTALIASES", "RES_OPTIONS", "LOCALDOMAIN", "*_PROXY",
			"*_proxy", "GNUPGHOME", "EMACS*", "VIM*", "MYVIMRC", "EXINIT", "TAR_*", "GZIP", "XZ_*", "ZSTD_*",
			"PS1", "PS2", "PS3", "FPATH", "GLOBIGNORE", "MAIL*", "POSIXLY_CORRECT_UNSAFE"},
		HarmlessEnv: []string{"LANG", "LANGUAGE", "LC_*", "TZ", "TERM", "COLUMNS", "LINES", "NO_COLOR", "CLICOLOR",
			"CLICOLOR_FORCE", "FORCE_COLOR", "TIME_STYLE", "LS_COLORS", "GREP_COLOR", "GREP_COLORS",
			"POSIXLY_CORRECT", "SYSTEMD_COLORS", "SYSTEMD_URLIFY", "DEBIAN_FRONTEND", "NEEDRESTART_MODE"},
		SystemRoots: []string{"/etc", "/sys", "/proc", "/dev", "/boot", "/root", "/usr", "/bin", "/sbin",
			"/lib", "/lib32", "/lib64", "/libx32", "/var/lib", "/var/spool", "/var/log", "/run", "/snap"},
		HarmlessDevices: []string{"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/tty",
			"/dev/fd/*", "/proc/self/fd/*", "/dev/random", "/dev/urandom"},
		SensitivePaths: []string{"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
			"/etc/sudoers", "/etc/sudoers.d", "/etc/security/opasswd", "/etc/ssh/ssh_host_*_key",
			"/etc/ssl/private", "/etc/letsencrypt/live", "/etc/letsencrypt/archive", "~/.ssh", "~/.gnupg",
			"~/.aws/credentials", "~/.netrc", "~/.pgpass", "~/.git-credentials", "~/.docker/config.json",
			"~/.kube/config", "~/.vault-token", "~/.aws", "~/.azure", "~/.config/gcloud", "~/.config/gh/hosts.yml",
			// Tokens and keys other tools keep under ~/.config (readable
			// otherwise): hub, glab, doctl, hcloud, ngrok, 1Password,
			// stripe, linode, netlify, npm tools' configstore, heroku,
			// sops/age keys, FileZilla and Remmina passwords, composer,
			// solana wallets, flyctl, OpenStack, vercel.
			"~/.config/hub", "~/.config/glab-cli", "~/.config/doctl", "~/.config/hcloud", "~/.config/ngrok",
			"~/.config/op", "~/.config/stripe", "~/.config/linode-cli", "~/.config/netlify", "~/.config/configstore",
			"~/.config/heroku", "~/.config/sops", "~/.config/age", "~/.config/filezilla", "~/.config/remmina",
			"~/.config/composer/auth.json", "~/.config/solana", "~/.config/flyctl", "~/.config/openstack",
			"~/.local/share/com.vercel.cli",
			// Session 13 (issue 26, secrets outside the list): pip's
			// index passwords, gh's whole directory, mail clients'
			// passwords, helm's repository logins, Copilot's and
			// OpenAI's tokens, chat apps' session keys, browser profiles
			// (saved logins, cookies), the histories of shells that keep
			// them outside dot-names (nushell, xonsh, elvish, atuin,
			// PowerShell, bash and zsh under XDG), keyrings' passwords.
			"~/.config/pip", "~/.pip", "~/.config/gh", "~/.config/msmtp", "~/.msmtprc", "~/.fetchmailrc",
			"~/.config/helm", "~/.config/github-copilot", "~/.config/openai", "~/.config/tea", "~/.config/lab",
			"~/.config/.jira", "~/.config/.wrangler", "~/.config/snowflake", "~/.config/kaggle", "~/.config/huggingface",
			"~/.config/hatch/config.toml", "~/.config/pypoetry/auth.toml", "~/.config/containers/auth.json",
			"~/.local/share/containers/auth.json", "~/.config/neomutt", "~/.config/mutt", "~/.config/aerc",
			"~/.config/isync", "~/.config/offlineimap", "~/.config/himalaya", "~/.config/lftp", "~/.config/hexchat",
			"~/.config/Signal", "~/.config/Element", "~/.config/discord", "~/.config/Slack", "~/.config/google-chrome",
			"~/.config/chromium", "~/.config/BraveSoftware", "~/.config/vivaldi", "~/.config/microsoft-edge",
			"~/.config/opera", "~/snap/firefox/common/.mozilla", "~/snap/chromium/common/chromium",
			"~/snap/thunderbird/common/.thunderbird", "~/.config/nushell/history*", "~/.local/share/xonsh",
			"~/.local/state/elvish", "~/.local/share/elvish", "~/.local/share/atuin", "~/.local/share/powershell/PSReadLine",
			"~/.local/state/bash", "~/.local/state/zsh", "~/.local/share/zsh", "~/.config/zsh/history",
			"~/.config/bash/history", "~/.local/share/mc/history", "~/.config/mc/history", "~/.local/share/python_keyring",
			"~/.local/share/aws-vault", "~/.local/state/nvim/shada", "~/.local/share/nvim/shada", "~/.local/share/keyrings",
			"~/.password-store",
			// The same for root's targets: VPN and Wi-Fi keys, mail relay
			// and Samba passwords, cluster admin configs, CI runner
			// tokens, mounted container secrets.
			"/etc/wireguard", "/etc/NetworkManager/system-connections", "/etc/wpa_supplicant", "/etc/openvpn",
			"/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets", "/etc/ipsec.secrets", "/etc/mysql/debian.cnf",
			"/etc/pki/tls/private", "/etc/krb5.keytab", "/etc/samba/smbpasswd", "/var/lib/samba/private",
			"/etc/postfix/sasl_passwd*", "/etc/exim4/passwd.client", "/etc/fetchmailrc", "/etc/davfs2/secrets",
			"/etc/letsencrypt/accounts", "/etc/rancher/k3s/k3s.yaml", "/etc/kubernetes/*.conf", "/etc/kubernetes/pki",
			"/var/lib/kubelet/kubeconfig", "/var/lib/kubelet/pki", "/etc/ceph/*.keyring", "/etc/gitlab-runner",
			"/etc/restic", "/var/lib/tailscale", "/var/lib/jenkins/secrets", "/var/lib/jenkins/credentials.xml",
			"/run/secrets", "/var/run/secrets", "/etc/*credentials*",
			// Session 14: netplan's Wi-Fi and WireGuard keys, HashiCorp
			// agents' gossip keys and tokens, backup passphrases
			// (borgmatic, restic, rclone), certbot's CSR keys and DNS
			// plugins' API tokens, Debian's copies of the shadow files,
			// cloud-init's user data, k3s's join token, containers'
			// configurations (their environments), LDAP bind passwords,
			// web servers' password files, pre-shared keys.
			"/etc/netplan", "/etc/consul.d", "/etc/vault.d", "/etc/nomad.d", "/etc/borgmatic", "/etc/borgmatic.d",
			"/etc/rclone", "/etc/letsencrypt/keys", "/etc/letsencrypt/*.ini", "/var/backups/shadow.*",
			"/var/backups/gshadow.*", "/var/lib/cloud/instances", "/var/lib/cloud/instance", "/var/lib/rancher/k3s/server/token",
			"/var/lib/rancher/k3s/server/cred", "/var/lib/rancher/k3s/server/tls", "/var/lib/docker/containers",
			"/var/lib/docker/swarm", "/etc/containers/auth.json", "/etc/*.secret", "/etc/pgbouncer/userlist.txt",
			"~/.config/borgmatic", "~/.config/rclone", "~/.config/restic", "~/.config/borg", ".htpasswd", "*.psk",
			// Services' configs that hold their passwords and keys
			// (redis's requirepass, grafana's admin password and
			// secret_key, WordPress's and Rails's database passwords
			// and keys, ODBC DSNs), the installer's user data, shadow
			// copies under other names, IPsec private keys.
			"/etc/redis/redis.conf", "/etc/redis/sentinel.conf", "/etc/grafana/grafana.ini", "/etc/odbc.ini",
			"/etc/*shadow*", "/etc/ipsec.d/private", "/var/log/installer/autoinstall-user-data", "wp-config.php",
			"database.yml", "master.key", "htpasswd", "*.htpasswd",
			"~/.bash_history", "~/.zsh_history", "~/.histfile", "~/.sh_history", "~/.python_history",
			"~/.mysql_history", "~/.psql_history", "~/.sqlite_history", "~/.rediscli_history", "~/.lesshst",
			"~/.local/share/fish/fish_history", "~/.node_repl_history", "~/.config/agent", "~/.local/state/agent", "/proc/*/environ", "/proc/kcore", "/dev/mem", "/dev/kmem",
			"/dev/port", "/dev/sd*", "/dev/nvme*", "/dev/vd*", "/dev/xvd*", "/dev/disk", "id_rsa", "id_dsa",
			"id_ecdsa", "id_ed25519", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "privkey*.pem",
			"*-key.pem", "*_key.pem", "*.key.pem", "shadow", "gshadow", ".env"},
		PublicPaths: []string{"*.pub", "*.crt", "~/.ssh/known_hosts*", "~/.ssh/config", "~/.ssh/authorized_keys*",
			"~/.ssh/environment", "~/.ssh/rc"},
		ReadableDotfiles: DefaultReadableDotfiles(), SecretNames: DefaultSecretNames(), AutorunPaths: DefaultAutorunPaths(),
		ProtectedPaths: []string{"~/.ssh", "~/.gnupg", "~/.bashrc", "~/.bash_profile", "~/.bash_login",
			"~/.bash_logout", "~/.profile", "~/.zshrc", "~/.zprofile", "~/.zshenv", "~/.config/systemd",
			"~/.config/autostart", "~/.pam_environment", "~/.local/bin", "~/.bash_aliases", "~/.zlogin",
			"~/.zlogout", "~/.config/fish", "~/.config/environment.d", "~/.gitconfig", "~/.config/git",
			"~/.aws", "~/.kube", "~/.docker", "~/.netrc", "~/.npmrc", "~/.pypirc", "~/.curlrc", "~/.wgetrc",
			"~/.vimrc", "~/.vim", "~/.config/nvim", "~/.exrc", "~/.emacs", "~/.emacs.d", "~/.tmux.conf",
			"~/.screenrc", "~/.gdbinit", "~/.inputrc", "~/.xinitrc", "~/.xprofile", "~/.xsession",
			"~/.config/systemd", "~/.local/share/systemd", "~/.config/containers", "~/.bin", "~/bin",
			"~/.cargo/bin", "~/go/bin", "~/.config/pip", "~/.pip", "~/.ssh/rc", "~/.forward", "~/.procmailrc",
			"~/.mailcap", "~/.lessfilter", "~/.editorconfig", "~/.config/agent", "~/.local/state/agent",
			"~/.bash_history", "~/.zsh_history", "/var/spool/cron"},
	}
	p.defaultCommands()
	p.defaultSubcommands()
	p.defaultFlags()
	p.defaultOptions()
	p.defaultWrappers()
	p.defaultOperatorTools()
	p.defaultReadOnly()
	return p
}

func (p *Policy) set(l Level, reason string, names ...string) {
	for _, n := range names {
		p.Commands[n] = Rule{Level: l, Reason: reason}
	}
}

func (p *Policy) defaultCommands() {
	p.set(Safe, "", p.DataOnly...)
	p.set(Safe, "", p.MetadataOnly...)
	// Checksums read what they hash: a secret's hash is an oracle for
	// it (a short password falls to a dictionary), so their operands are
	// checked as reads, not taken as data (session 13: `md5sum ~/.my.cnf`
	// was safe with the classifier alone).
	p.set(Safe, "", "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum")
	p.set(Safe, "", "cat", "head", "tail", "grep", "egrep", "fgrep", "zgrep", "rg", "zcat", "wc", "sort",
		"uniq", "cut", "tr", "awk", "gawk", "mawk", "nawk", "sed", "jq", "diff", "cmp", "comm", "nl", "tac",
		"rev", "fold", "column", "paste", "join", "expand", "unexpand", "od", "hexdump", "strings", "base64",
		"less", "more", "ss", "netstat", "lsof", "ip", "systemctl", "journalctl", "docker", "podman", "git",
		"hostname", "date", "env", "sysctl", "dmesg", "iostat", "mpstat", "findmnt", "blkid", "getent",
		"mount", "swapon", "dpkg", "rpm", "apt-cache", "apt", "apt-get", "yum", "dnf", "snap", "pip", "pip3", "npm",
		"service", "iptables", "ip6tables", "nft", "ufw", "fdisk", "parted", "top",
		"htop", "tmux", "alias", "trap", "mapfile", "readarray", "read", "command", "builtin", "let", "local", "unalias",
		"export", "declare", "typeset", "readonly")
	p.set(Medium, "creates or changes files", "mkdir", "touch", "cp", "mv", "ln", "tee", "truncate",
		"install", "patch", "tar", "zip", "unzip", "gzip", "gunzip", "bzip2", "xz", "mktemp", "mkfifo",
		"split", "rmdir", "unlink")
	p.set(Medium, "deletes files", "rm")
	p.set(Medium, "changes permissions or ownership", "chmod", "chown", "chgrp")
	p.set(High, "changes extended attributes, which the undo journal does not keep", "setfattr")
	// An access list may let any user write (setfacl -m u:bob:rwx ~) and
	// sets the mode's bits past chmod (-m o::rwx); the undo journal does
	// not keep it, and the kernel answers a medium step's extended
	// attributes "not supported" (confine's xattrCalls).
	p.set(High, "changes access lists, which may let other users write and which the undo journal does not keep", "setfacl")
	p.set(Medium, "network download", "curl", "wget")
	p.set(High, "dynamic loader: runs any program file", "ld.so", "ld-linux*.so*", "ld-*.so*")
	p.set(High, "an editor: runs commands and writes any file unjournaled (edit_file is the tool for edits)", "vi", "vim",
		"nvim", "nano", "emacs", "ed", "ex")
	p.set(High, "signals another process (no undo takes it back; at medium the kernel denies it anyway)", "kill")
	p.set(Medium, "traces a process", "strace", "ltrace")
	p.set(High, "privilege escalation", "sudo", "su", "doas", "pkexec", "runuser", "chroot", "nsenter",
		"unshare", "setcap", "chsh", "sg", "newgrp")
	p.set(High, "runs commands in a detached terminal session", "screen")
	p.set(High, "raw block copy", "dd")
	p.set(High, "formats or partitions a disk", "mkfs", "mkfs.*", "mke2fs", "mkswap", "sfdisk", "cfdisk",
		"gdisk", "sgdisk", "wipefs", "blkdiscard", "cryptsetup", "losetup", "lvremove", "vgremove",
		"pvremove", "lvreduce", "resize2fs", "tune2fs", "fsck", "fsck.*", "e2fsck")
	p.set(High, "destroys data irrecoverably", "shred", "srm")
	p.set(High, "power state change", "shutdown", "reboot", "poweroff", "halt", "init", "telinit")
	p.set(High, "kills processes by name", "killall", "pkill", "killall5", "xkill")
	p.set(High, "mount change", "umount", "swapoff")
	p.set(High, "user account change", "useradd", "userdel", "usermod", "groupadd", "groupdel", "groupmod",
		"adduser", "deluser", "addgroup", "delgroup", "passwd", "chpasswd", "chage", "gpasswd", "visudo", "vipw",
		"vigr")
	p.set(High, "firewall change", "iptables-restore", "ip6tables-restore", "firewall-cmd", "ebtables",
		"arptables")
	p.set(High, "kernel change", "modprobe", "insmod", "rmmod", "kexec", "setenforce", "chattr")
	p.set(High, "connects to another host", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "telnet",
		"socat", "ftp", "mosh", "ssh-copy-id", "rlogin", "rsh", "lftp")
	p.set(High, "scheduled job change", "crontab", "at", "batch")
	p.set(High, "runs dynamically built code", "eval")
	p.set(High, "runs a script in the current shell", "source", ".")
	p.set(High, "loads shell builtins from a library", "enable")
	p.set(High, "runs a transient system unit", "systemd-run")
}

func rules(m map[string]Rule, l Level, reason string, keys ...string) map[string]Rule {
	for _, k := range keys {
		m[k] = Rule{Level: l, Reason: reason}
	}
	return m
}

func (p *Policy) defaultSubcommands() {
	s := p.Subcommands
	s["systemctl"] = rules(map[string]Rule{}, Safe, "", "", "status", "show", "cat", "is-active", "is-enabled",
		"is-failed", "is-system-running", "list-units", "list-unit-files", "list-sockets", "list-timers",
		"list-jobs", "list-dependencies", "list-machines", "help", "show-environment", "get-default")
	// Issue 26, medium means undoable: a service's state (running,
	// restarted, its connections, what it did on start) is nothing the
	// undo journal keeps, and enable/unmask change unit links under
	// /etc (through systemd, outside the journal). A person approves
	// them, or --approve high, or a policy rule lowers them
	// (safety: {subcommands: {systemctl: {restart: medium}}}).
	rules(s["systemctl"], High, "starts, restarts or reloads a service: undo cannot take a service's state back", "start", "restart",
		"reload", "try-restart", "reload-or-restart", "try-reload-or-restart", "daemon-reload", "reset-failed")
	rules(s["systemctl"], High, "changes what starts at boot: undo cannot take it back", "enable", "reenable", "unmask")
	rules(s["systemctl"], High, "takes a service down or changes the system state", "*", "stop", "disable",
		"mask", "kill", "isolate", "edit", "set-default", "set-property", "revert", "preset", "preset-all",
		"link", "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep", "rescue",
		"emergency", "default", "exit", "switch-root", "clean", "freeze")
	s["service"] = rules(map[string]Rule{}, Safe, "", "")
	s["service"]["*"] = Rule{} // the service's name: its action decides
	s["service *"] = rules(map[string]Rule{"": {Level: High, Reason: "controls a service: undo cannot take a service's state back"}},
		Safe, "", "status")
	rules(s["service *"], High, "starts or restarts a service: undo cannot take a service's state back", "start", "restart", "reload",
		"force-reload", "try-restart", "condrestart")
	rules(s["service *"], High, "takes a service down", "*", "stop")

	git := rules(map[string]Rule{}, Safe, "", "", "status", "log", "diff", "show", "ls-files", "ls-tree",
		"ls-remote", "rev-parse", "rev-list", "describe", "blame", "grep", "shortlog", "cat-file", "help",
		"version", "whatchanged", "merge-base", "name-rev", "show-ref", "for-each-ref", "count-objects",
		"check-ignore", "var")
	// A repository's objects, refs, index, reflog and working tree
	// change together, and the undo journal keeps none of them (git is
	// an opaque writer: the executor made these high anyway).
	const gitChange = "changes the repository (objects, refs, index, working tree), which undo does not keep"
	rules(git, High, gitChange, "*")
	rules(git, High, "rewrites history", "filter-branch", "filter-repo")
	// Session 14: `git credential fill` prints what the credential
	// helper holds (a keyring over D-Bus, a cache over a socket: no file
	// the kernel's rules deny), even at --approve medium.
	rules(git, High, "prints or changes stored credentials", "credential", "credential-store", "credential-cache",
		"credential-libsecret", "credential-osxkeychain", "credential-manager", "credential-gnome-keyring", "credential-netrc")
	s["git"] = git
	for _, sub := range []string{"branch", "tag", "remote", "config", "reflog", "worktree", "notes"} {
		git[sub] = Rule{}
		s["git "+sub] = map[string]Rule{"": {}, "*": {Level: High, Reason: gitChange}}
	}
	rules(s["git reflog"], Safe, "", "show")
	git["stash"] = Rule{}
	rules(s["git remote"], Safe, "", "show", "get-url")
	s["git stash"] = rules(map[string]Rule{"*": {Level: High, Reason: gitChange}, "": {Level: High, Reason: gitChange}},
		Safe, "", "list", "show")

	for _, d := range []string{"docker", "podman"} {
		top := rules(map[string]Rule{}, Safe, "", "", "ps", "images", "logs", "inspect", "version", "info",
			"top", "port", "stats", "diff", "history", "events", "search")
		// Containers, images, networks and volumes live in the engine's
		// store, which the undo journal does not keep; the engine (a
		// root daemon for docker) does what it is asked outside the
		// step's confinement.
		const engine = "changes containers, images, networks or volumes: undo cannot take it back"
		rules(top, High, engine, "*")
		s[d] = top
		for _, obj := range []string{"container", "image", "volume", "network", "system", "compose", "builder", "context"} {
			top[obj] = Rule{}
			m := rules(map[string]Rule{}, Safe, "", "", "ls", "list", "ps", "inspect", "logs", "top", "port",
				"diff", "stats", "history", "df", "info", "events", "config", "images", "version")
			rules(m, High, engine, "*")
			rules(m, High, "deletes container data", "prune")
			s[d+" "+obj] = m
		}
		rules(s[d+" volume"], High, "deletes container data", "rm", "remove")
	}

	for _, n := range []string{"apt", "apt-get", "yum", "dnf", "snap"} {
		s[n] = map[string]Rule{"": {}, "*": {Level: High, Reason: "changes installed system packages"}}
	}
	for _, n := range []string{"apt", "apt-get"} {
		rules(s[n], Safe, "", "", "list", "search", "show", "policy", "showpkg", "depends", "rdepends",
			"changelog", "madison", "check")
		rules(s[n], High, "changes package lists, caches or downloads: undo cannot take it back", "update", "download", "source", "clean", "autoclean")
	}
	for _, n := range []string{"yum", "dnf"} {
		rules(s[n], Safe, "", "", "list", "info", "search", "provides", "whatprovides", "repolist",
			"check-update", "deplist", "repoquery")
		rules(s[n], High, "changes package caches or downloads: undo cannot take it back", "makecache", "clean", "download")
	}
	rules(s["snap"], Safe, "", "", "list", "info", "find", "version", "services", "changes")
	for _, n := range []string{"pip", "pip3", "npm"} {
		// Installing runs the package's own scripts (setup.py, npm
		// lifecycle scripts): arbitrary code.
		s[n] = rules(map[string]Rule{"*": {Level: High, Reason: "installs packages or runs their scripts (arbitrary code)"}},
			Safe, "", "", "list", "show", "freeze", "check", "search", "ls", "view", "outdated", "help")
		rules(s[n], High, "downloads packages (and runs an sdist's build to read its metadata): undo cannot take it back", "download")
	}
	s["tmux"] = rules(map[string]Rule{"": {Level: High, Reason: "runs commands in a detached terminal session"},
		"*": {Level: High, Reason: "runs commands in a detached terminal session"}}, Safe, "", "ls", "list-sessions", "list-windows", "list-panes", "has-session",
		"capture-pane", "show-options")

	ip := rules(map[string]Rule{}, High, "network configuration change", "*")
	s["ip"] = ip
	for _, obj := range []string{"a", "ad", "addr", "address", "r", "ro", "route", "l", "li", "link", "n",
		"ne", "neigh", "neighbour", "neighbor", "ru", "rule", "m", "maddr", "maddress", "tunnel", "tun",
		"netns", "mroute", "monitor", "-s", "ntable", "tcp_metrics", "token", "xfrm", "mptcp", "vrf", "stats"} {
		ip[obj] = Rule{}
		s["ip "+obj] = rules(map[string]Rule{"*": {Level: High, Reason: "network configuration change"}}, Safe, "", "", "show",
			"list", "lst", "ls", "sh", "s", "get")
	}
	s["getent"] = rules(map[string]Rule{"*": {}}, High, "reads password hashes", "shadow", "gshadow")
	s["mount"] = map[string]Rule{"": {}, "*": {Level: High, Reason: "mount change"}}
	// swapon lists swap areas only without an operand and with read-only
	// options (--show, -s); a device or file operand, or -a, enables swap.
	s["swapon"] = s["mount"]
	s["nft"] = map[string]Rule{"list": {}, "*": {Level: High, Reason: "firewall change"}, "": {Level: High, Reason: "firewall change"}}
	s["ufw"] = map[string]Rule{"status": {}, "*": {Level: High, Reason: "firewall change"}, "": {Level: High, Reason: "firewall change"}}
	s["iptables"] = map[string]Rule{"*": {Level: High, Reason: "firewall change"}, "": {Level: High, Reason: "firewall change"}}
	s["ip6tables"] = s["iptables"]
	s["fdisk"] = map[string]Rule{"*": {Level: High, Reason: "formats or partitions a disk"}, "": {Level: High, Reason: "formats or partitions a disk"}}
	s["parted"] = s["fdisk"]
}
