package safety

import "testing"

// TestClassifierKnowsFoundSecrets: reading what the kernel's walk would
// hide (a dot-entry of ~ not in readable_dotfiles, a secret-named entry in
// the home or the working directory) is High from the classifier alone,
// so a host without Landlock is covered; the readable ones stay safe.
func TestClassifierKnowsFoundSecrets(t *testing.T) {
	p := DefaultPolicy()
	const home = "/home/u"
	high := []string{
		"cat ~/.npmrc", "cat /home/u/.pypirc", "cat ~/.my.cnf", "grep pass ~/.zhistory", "tail ~/.newtool/token",
		"cat ~/keys/deploy.pem", "cat .env.local", "cat config/credentials.yml", "cat ~/.*", "head ~/projects/x/*.pem",
		"cut -c1-60 < ~/.npmrc", "tr -dc a-z < .npmrc", "cat ~/.docker/config.json", "less ~/work/kubeconfig", "openssl x509 -in cert.pem -noout",
	}
	safe := []string{
		"cat ~/.bashrc", "cat ~/.config/app/app.conf", "cat /etc/ssl/certs/ca.pem", "grep x *.go", "wc -l *",
		"cat ~/notes.txt", "grep -l foo *.txt", "cat ~/.gitconfig", "cat README.md",
	}
	for _, c := range high {
		if a := p.ClassifyCommandAt(c, home); a.Level < High {
			t.Errorf("%s: %s, want high", c, a)
		}
	}
	for _, c := range safe {
		if a := p.ClassifyCommandAt(c, home); a.Level != Safe {
			t.Errorf("%s: %s, want safe", c, a)
		}
	}
}

// TestCredentialFilesHigh: the common credential files and every shell's
// history, wherever their tool keeps them, are High to read from the
// classifier alone (session 13: ~/.config/pip/pip.conf,
// ~/.config/containers/auth.json, nushell's history, a vault password
// file not under a dot-name, root's VPN and cluster keys were safe). The
// kernel side is TestSecretsFoundLocal/SSHD (engine).
func TestCredentialFilesHigh(t *testing.T) {
	p := DefaultPolicy()
	const home = "/home/u"
	for _, f := range []string{
		"~/.config/pip/pip.conf", "~/.pip/pip.conf", "~/.docker/config.json", "~/.config/containers/auth.json",
		"~/.local/share/containers/auth.json", "~/.kube/config", "~/.netrc", "~/.git-credentials", "~/.config/gh/hosts.yml",
		"~/.config/gh/config.yml", "~/.config/hub", "~/.aws/credentials", "~/.azure/accessTokens.json",
		"~/.config/gcloud/application_default_credentials.json", "~/.oci/config", "~/.terraform.d/credentials.tfrc.json",
		"~/.cargo/credentials", "~/.cargo/credentials.toml", "~/.gem/credentials", "~/.m2/settings.xml",
		"~/.gradle/gradle.properties", "~/.composer/auth.json", "~/.config/composer/auth.json", "~/.yarnrc.yml",
		"~/.config/rclone/rclone.conf", "~/.s3cfg", "~/.boto", "~/.pgpass", "~/.my.cnf", "~/.mylogin.cnf",
		"~/.vault-token", "~/.password-store/web.gpg", "~/.gnupg/private-keys-v1.d/k.key", "~/.local/share/keyrings/login.keyring",
		"~/.msmtprc", "~/.config/msmtp/config", "~/.fetchmailrc", "~/.config/doctl/config.yaml",
		"~/.config/helm/repositories.yaml", "~/.condarc", "~/.ansible/vault_pass", "~/vault_pass.txt", "~/ops/.vault-password",
		"~/.ssh/mykey", "~/.ssh/work", "~/.config/op/config", "~/.config/npm/npmrc", "~/.config/pypoetry/auth.toml",
		"~/.config/github-copilot/hosts.json", "~/.config/google-chrome/Default/Login Data",
		"~/.config/chromium/Default/Cookies", "~/.config/BraveSoftware/Brave-Browser/Default/Login Data",
		"~/.mozilla/firefox/p.default/logins.json", "~/snap/firefox/common/.mozilla/firefox/p/key4.db",
		"~/.thunderbird/p/logins.json", "~/.config/Signal/config.json", "~/.config/weechat/sec.conf",
		"~/deploy/secrets.yaml", "~/k8s/secrets/db.env",
		// Every shell's and REPL's history, dot-named or XDG.
		"~/.bash_history", "~/.zsh_history", "~/.zhistory", "~/.histfile", "~/.sh_history", "~/.mksh_history",
		"~/.history", "~/.config/zsh/.zsh_history", "~/.local/share/fish/fish_history", "~/.config/nushell/history.txt",
		"~/.config/nushell/history.sqlite3", "~/.local/share/xonsh/xonsh-history.sqlite", "~/.local/state/elvish/db.bolt",
		"~/.local/share/atuin/history.db", "~/.local/share/powershell/PSReadLine/ConsoleHost_history.txt",
		"~/.local/state/bash/history", "~/.local/state/zsh/history", "~/.local/share/zsh/history",
		"~/.local/state/less/lesshst", "~/.local/state/nvim/shada/main.shada", "~/.python_history", "~/.psql_history",
		"~/.mysql_history", "~/.node_repl_history", "~/.julia/logs/repl_history.jl",
		// Root's targets.
		"/etc/wireguard/wg0.conf", "/etc/NetworkManager/system-connections/home.nmconnection",
		"/etc/wpa_supplicant/wpa_supplicant.conf", "/etc/ppp/chap-secrets", "/etc/ipsec.secrets", "/etc/mysql/debian.cnf",
		"/etc/krb5.keytab", "/etc/postfix/sasl_passwd", "/etc/kubernetes/admin.conf", "/etc/rancher/k3s/k3s.yaml",
		"/etc/ceph/ceph.client.admin.keyring", "/etc/gitlab-runner/config.toml", "/var/lib/tailscale/tailscaled.state",
		"/run/secrets/db_password", "/var/run/secrets/kubernetes.io/serviceaccount/token", "/etc/smbcredentials",
		// Session 14: system secrets that were safe to read. Netplan's
		// YAML holds Wi-Fi passwords and WireGuard keys (`ip addr`,
		// `networkctl` and `resolvectl` show the network instead).
		"/etc/netplan/01-netcfg.yaml", "/etc/netplan/50-cloud-init.yaml", "/etc/consul.d/consul.hcl",
		"/etc/vault.d/vault.hcl", "/etc/nomad.d/nomad.hcl", "/etc/borgmatic/config.yaml", "/etc/borgmatic.d/home.yaml",
		"~/.config/borgmatic/config.yaml", "~/.config/restic/env", "/etc/restic/env", "/etc/rclone/rclone.conf",
		"/etc/letsencrypt/live/x.org/privkey.pem", "/etc/letsencrypt/archive/x.org/privkey1.pem",
		"/etc/letsencrypt/keys/0000_key-certbot.pem", "/etc/letsencrypt/cloudflare.ini", "/etc/ssl/private/ssl-cert-snakeoil.key",
		"/var/backups/shadow.bak", "/var/backups/gshadow.bak", "/var/lib/cloud/instance/user-data.txt",
		"/var/lib/cloud/instances/i-1/user-data.txt", "/var/lib/rancher/k3s/server/token",
		"/var/lib/docker/containers/abc/config.v2.json", "/etc/containers/auth.json", "/etc/ldap.secret",
		"/etc/nginx/.htpasswd", "/etc/zabbix/zabbix_agentd.psk", "/etc/pgbouncer/userlist.txt",
		"/etc/redis/redis.conf", "/etc/grafana/grafana.ini", "/etc/odbc.ini", "/etc/shadow.bak", "/etc/gshadow~",
		"/etc/ipsec.d/private/x.pem", "/var/log/installer/autoinstall-user-data", "/var/www/html/wp-config.php",
		"/srv/app/config/database.yml", "/srv/app/config/master.key", "/etc/nginx/htpasswd",
		// Other accounts' homes, wherever /etc/passwd puts them.
		"/var/lib/postgresql/.pgpass", "/var/lib/postgresql/.psql_history", "/var/lib/jenkins/.ssh/id_rsa",
		"/var/lib/gitlab-runner/.gitlab-runner/config.toml", "/var/www/.env", "/var/lib/mysql/.my.cnf",
	} {
		for _, cmd := range []string{"cat ", "grep -r x "} {
			if a := p.ClassifyCommandAt(cmd+"'"+f+"'", home); a.Level < High {
				t.Errorf("%s%s: %s, want high", cmd, f, a)
			}
		}
	}
	// What must stay greppable: sources named like the new names, app
	// configs, network diagnostics.
	for _, c := range []string{"cat ~/proj/secrets.go", "cat ~/proj/history.go", "cat ~/proj/auth.go", "cat ~/.config/app/app.conf",
		"grep -r TODO ~/proj/src", "cat /var/www/html/index.html", "cat /var/lib/postgresql/16/main/postgresql.auto.conf",
		"cd /srv/app && grep -rn TODO .", "cat /etc/ssh/sshd_config", "cat ~/.config/git/ignore",
		"cat ~/.config/containers/registries.conf", "cat ~/.config/pulse/client.conf", "cat /etc/docker/daemon.json"} {
		if a := p.ClassifyCommandAt(c, home); a.Level != Safe {
			t.Errorf("%s: %s, want safe", c, a)
		}
	}
}
