package safety

import (
	"slices"
	"strings"
	"testing"
)

// mediumRules are the only rules of the default policy rated Medium (issue
// 26: at --approve medium only changes to non-protected files that agent
// undo restores, or network use). Each is a program whose effect is the
// files its command line names, journaled before it runs (or made high by
// the executor when they cannot be: Analysis.Unjournaled), a download,
// or a tracer of the program it starts. A new Medium rule must be one of
// these kinds, and is added here with the reason it is undoable.
var mediumRules = map[string][]string{
	// Writers of the files their operands, options or redirections name.
	"cmd": {"mkdir", "touch", "cp", "mv", "ln", "tee", "truncate", "install", "patch", "tar", "zip", "unzip",
		"gzip", "gunzip", "bzip2", "xz", "mktemp", "mkfifo", "split", "rmdir", "unlink", "rm", "chmod", "chown",
		"chgrp",
		"curl", "wget", // network downloads: their files are journaled (download.go)
		"strace", "ltrace", // trace the program they start (itself classified); -o is a journaled write
		"script"}, // records the command it runs (itself classified) into a journaled file
	"flag": {"sed -i", "sed --in-place"},
	// openssl's key and encoding tools write what -out and -keyout name.
	"sub": {"openssl genrsa", "openssl genpkey", "openssl gendsa", "openssl rsa", "openssl pkey", "openssl pkeyutl",
		"openssl ec", "openssl ecparam", "openssl dhparam", "openssl dsa", "openssl dsaparam", "openssl enc",
		"openssl pkcs12", "openssl pkcs8", "openssl rsautl", "openssl smime", "openssl cms", "openssl passwd",
		"openssl base64", "openssl md5", "openssl sha1", "openssl sha256", "openssl sha512", "openssl kdf",
		"openssl mac", "openssl prime", "openssl spkac", "openssl nseq", "openssl sess_id", "openssl speed",
		"openssl info"},
}

// TestMediumRulesAreUndoable audits the default policy: every rule rated
// Medium is in mediumRules. Before issue 26's audit, service restarts,
// container and cluster changes, git, package caches and the kernel log
// were Medium: nothing undo takes back.
func TestMediumRulesAreUndoable(t *testing.T) {
	p := DefaultPolicy()
	n := 0
	for name, r := range p.Commands {
		if r.Level == Medium {
			n++
			if !slices.Contains(mediumRules["cmd"], name) {
				t.Errorf("command %s is medium (%s): undo cannot take back what it does", name, r.Reason)
			}
		}
	}
	for name, m := range p.Subcommands {
		for sub, r := range m {
			if r.Level == Medium {
				n++
				if !slices.Contains(mediumRules["sub"], name+" "+sub) {
					t.Errorf("subcommand %s [%s] is medium (%s): undo cannot take back what it does", name, sub, r.Reason)
				}
			}
		}
	}
	for name, m := range p.Flags {
		for flag, r := range m {
			if r.Level == Medium {
				n++
				if !slices.Contains(mediumRules["flag"], name+" "+flag) {
					t.Errorf("flag %s %s is medium (%s): undo cannot take back what it does", name, flag, r.Reason)
				}
			}
		}
	}
	t.Logf("%d medium rules, all journaled writers, downloads or tracers", n)
}

// TestMediumNotUndoableIsHigh: per class, commands whose effect undo
// cannot take back are High, journaled or not, and say why.
func TestMediumNotUndoableIsHigh(t *testing.T) {
	p := DefaultPolicy()
	for class, cmds := range map[string][]string{
		"service": {"systemctl start nginx", "systemctl restart nginx", "systemctl reload nginx", "systemctl try-restart x",
			"systemctl reload-or-restart x", "systemctl try-reload-or-restart x", "systemctl daemon-reload",
			"systemctl reset-failed", "systemctl enable --now x", "systemctl reenable x", "systemctl unmask x",
			"systemctl --user restart x", "service nginx restart", "service nginx start", "service nginx reload",
			"service nginx force-reload", "service x condrestart", "service nginx"},
		"web server": {"nginx", "nginx -s reload", "nginx -s reopen", "nginx -t -p /tmp/x", "apachectl", "apachectl start",
			"apachectl graceful", "apache2ctl restart"},
		"container": {"docker start web", "docker stop web", "docker restart web", "docker run alpine true", "docker pull alpine",
			"docker compose down", "docker compose up -d", "docker-compose restart web", "docker pause web", "docker tag a b",
			"docker network create n", "docker volume create v", "docker update --restart=always web", "docker container stop web",
			"docker image pull alpine", "podman run --rm -v /home/u/.ssh:/x alpine true", "podman restart web", "podman stop web"},
		"cluster": {"kubectl apply -f x.yaml", "kubectl create ns x", "kubectl scale deploy x --replicas=0", "kubectl cordon n1",
			"kubectl rollout restart deploy/x", "kubectl rollout undo deploy/x", "kubectl config use-context x",
			"kubectl auth reconcile -f x.yaml", "kubectl port-forward svc/x 8080:80", "helm upgrade x ./c", "helm rollback x 1",
			"helm pull x/y", "helm repo add x https://x", "helm dependency update", "terraform plan", "terraform init",
			"terraform test", "terraform fmt", "terraform workspace new x"},
		"repository": {"git commit -m x", "git checkout main", "git switch -c x", "git gc", "git stash", "git stash pop",
			"git merge x", "git rebase main", "git pull", "git fetch", "git add .", "git init", "git branch -D x", "git branch x",
			"git tag -d v1", "git tag v1", "git config user.name x", "git config --unset x.y", "git remote add o u",
			"git worktree add ../x", "git notes add -m x", "git reflog expire --all", "git -C /srv/app commit -m x"},
		"packages": {"apt-get update", "apt update", "apt-get clean", "apt autoclean", "apt-get download x", "apt source x",
			"yum makecache", "dnf clean all", "dnf download x", "pip download x", "pip3 download x", "npm download x"},
		"kernel log": {"dmesg -C", "dmesg -c", "dmesg -n 1", "dmesg -D", "journalctl --rotate", "journalctl --flush",
			"journalctl --sync", "journalctl --relinquish-var", "journalctl --setup-keys"},
		"storage and machines": {"zfs snapshot tank/d@x", "zfs create tank/x", "zfs hold x tank/d@x", "zpool scrub tank",
			"virsh start vm", "virsh resume vm", "virsh snapshot-create-as vm s"},
		"openssl": {"openssl ca -in x.csr", "openssl rehash /home/u/certs", "openssl srp -add u",
			"openssl engine dynamic -pre SO_PATH:/tmp/x.so", "openssl genrsa -engine /tmp/x.so -out /home/u/k 2048",
			"openssl enc -provider-path /tmp -provider x -in a -out /home/u/b"},
	} {
		for _, c := range cmds {
			an := p.Analyze(c, "/home/u")
			switch {
			case an.Level < High:
				t.Errorf("%s: %s = %s, want high", class, c, an.Assessment)
			case an.IfJournaled.Level < High:
				t.Errorf("%s: %s = %s once journaled, want high", class, c, an.IfJournaled)
			case !strings.Contains(strings.Join(an.Reasons, "\n"), "undo") && class != "openssl" && !strings.Contains(c, "port-forward"):
				t.Errorf("%s: %s = %s: the reason should say undo cannot take it back", class, c, an.Assessment)
			}
		}
	}
	// Their read-only neighbours keep running unattended, and the
	// journaled writers stay medium.
	for c, want := range map[string]Level{"systemctl status nginx": Safe, "service nginx status": Safe, "nginx -t": Safe,
		"docker ps": Safe, "git status": Safe, "git log -3": Safe, "kubectl rollout status deploy/x": Medium, // the network
		"terraform validate": Safe, "zfs list": Safe, "apt list --installed": Safe, "journalctl -n 50": Safe,
		"touch /home/u/x": Medium, "sed -i s/a/b/ /home/u/x": Medium, "openssl genrsa -out /home/u/k.pem 2048": Medium,
		"curl -o /home/u/x https://example.com/x": Medium} {
		if an := p.Analyze(c, "/home/u"); an.Level != want {
			t.Errorf("%s = %s, want %s", c, an.Assessment, want)
		}
	}
}

// TestMediumOverrideByConfig: an operator who wants unattended restarts
// lowers the rule in the config's safety: section; the rest stays high.
func TestMediumOverrideByConfig(t *testing.T) {
	p, _, err := LoadConfigPolicy(strings.NewReader(`safety:
  subcommands:
    systemctl:
      restart: medium
    docker:
      restart: {level: medium, reason: "our containers restart cleanly"}
    "service *":
      reload: medium
`))
	if err != nil {
		t.Fatal(err)
	}
	for c, want := range map[string]Level{"systemctl restart nginx": Medium, "docker restart web": Medium,
		"service nginx reload": Medium, "systemctl stop nginx": High, "systemctl start nginx": High,
		"docker stop web": High, "service nginx restart": High, "systemctl status nginx": Safe} {
		if an := p.Analyze(c, "/home/u"); an.Level != want || an.IfJournaled.Level != want {
			t.Errorf("with the override, %s = %s (journaled %s), want %s", c, an.Assessment, an.IfJournaled, want)
		}
	}
}

// TestSetidModesHigh: every spelling of a set-user-ID or set-group-ID
// mode is high — chmod's octal with leading zeros or after an operator,
// install's and mkdir's -m — and plain modes stay medium.
func TestSetidModesHigh(t *testing.T) {
	p := DefaultPolicy()
	for _, c := range []string{"chmod =4755 /home/u/x", "chmod 04755 /home/u/x", "chmod 0002755 /home/u/x", "chmod +4000 /home/u/x",
		"chmod u+s /home/u/x", "install -m 4755 /bin/sh /home/u/x", "install -m4755 /bin/sh /home/u/x", "install --mode=u+s /bin/sh /home/u/x",
		"install -m $m /bin/sh /home/u/x", "mkdir -m 2775 /home/u/d"} {
		if an := p.Analyze(c, "/home/u"); an.Level < High || an.IfJournaled.Level < High {
			t.Errorf("%s = %s, want high", c, an.Assessment)
		}
	}
	// (1777 lets every user write: High since session 16, TestModesOpeningToOthers.)
	for _, c := range []string{"chmod 0755 /home/u/x", "chmod =755 /home/u/x", "chmod 1775 /home/u/d", "install -m 0644 a /home/u/x",
		"mkdir -m 700 /home/u/d"} {
		if an := p.Analyze(c, "/home/u"); an.Level != Medium {
			t.Errorf("%s = %s, want medium", c, an.Assessment)
		}
	}
}
