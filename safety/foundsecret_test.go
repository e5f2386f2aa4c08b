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
