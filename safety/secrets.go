package safety

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Secrets found, not listed (issue 26): besides SensitivePaths, the
// kernel denies unapproved steps (safe and medium) every dot-file and
// dot-directory of the home but ReadableDotfiles, and every entry named
// like SecretNames that a bounded walk of the home and the working
// directory finds when the rules are computed (confine/secrets.go).

// defaultReadableDotfiles are the dot-entries of ~ an unapproved step may
// read: shell and editor start-up files, terminal and X settings, the
// configuration and data directories (.config, .local: secret-shaped
// names in them are found and hidden, and SensitivePaths keeps
// ~/.config/gcloud, gh's hosts.yml and fish's history), the toolchains
// commands run from (~/.cargo/bin, nvm, pyenv: denying them would break
// `node --version`). Not readable: histories (.bash_history, .lesshst,
// .viminfo, .python_history …), credentials and the files that hold them
// (.netrc, .npmrc, .pypirc, .my.cnf, .pgpass, .git-credentials, .docker,
// .kube, .aws, .ssh, .gnupg, .m2, .gradle, .bundle, .yarnrc, .curlrc,
// .wgetrc, .hgrc: each may carry a password), caches and anything new.
// ~/.gitconfig is readable: git reads it for every command in a
// repository, and what it usually holds is a credential helper's name,
// not a credential (a token written into a url.insteadOf line is not
// protected: put it in ~/.git-credentials, which is).
var defaultReadableDotfiles = []string{
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".profile",
	".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc",
	".inputrc", ".dircolors", ".hushlogin", ".selected_editor", ".sudo_as_admin_successful", ".motd_shown",
	".vimrc", ".vim", ".exrc", ".nanorc", ".editorconfig", ".tmux.conf", ".tmux", ".screenrc",
	".gitconfig", ".gitignore", ".gitignore_global", ".gitattributes", ".hgignore",
	".Xresources", ".Xdefaults", ".xinitrc", ".xprofile", ".xsession", ".fonts", ".icons", ".themes", ".terminfo",
	".config", ".local", ".cargo", ".rustup", ".nvm", ".pyenv", ".rbenv", ".sdkman", ".asdf", ".deno", ".bun", ".volta",
}

// defaultSecretNames are base-name patterns of secrets, found in the home
// and the working directory by a bounded walk: private keys whatever
// their name, certificates' key stores, .env files, credentials files,
// the configuration files that carry tokens or passwords, key rings and
// every shell's (and REPL's) history. Not "*secret*" or "*token*": a
// project's secrets.go or tokenizer.py would be hidden from grep -r.
var defaultSecretNames = []string{
	"id_*", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.kdbx", "*.keytab", "*.ovpn",
	".env", ".env.*", "*.env", "*credentials*", ".netrc", "_netrc", ".git-credentials", ".pgpass", ".my.cnf",
	".mylogin.cnf", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc", ".vault-token", ".boto", ".s3cfg", ".docker",
	".kube", "kubeconfig", "*.kubeconfig", ".terraformrc", "terraform.tfstate*", "*.tfvars", "rclone.conf",
	"keyrings", ".password-store", "Cookies", "Login Data",
	// Session 13: pip's index passwords, registry logins (podman's
	// containers/auth.json, composer, vercel, poetry's auth.toml), npm's
	// XDG npmrc, Ansible vault passwords however named, secrets files of
	// deployments, browsers' saved logins and keys, VS Code's token store.
	"pip.conf", "auth.json", "auth.toml", "npmrc", "*vault*pass*", "secrets", "secrets.y*ml", "secrets.json",
	"secrets.toml", "sec.conf", "Login Data*", "Web Data", "Local State", "logins.json", "key3.db", "key4.db",
	"signons.sqlite", "cookies.sqlite", "state.vscdb*", "*.keyring",
	".*history", ".histfile", ".lesshst", ".viminfo", "fish_history",
	// Histories outside the dot-names: XDG state files of less and the
	// REPLs, PowerShell's, nvim's shada.
	"lesshst", "*_history", "*_history.*", "*.shada",
}

// DefaultReadableDotfiles is the default policy's ReadableDotfiles.
func DefaultReadableDotfiles() []string { return slices.Clone(defaultReadableDotfiles) }

// DefaultSecretNames is the default policy's SecretNames.
func DefaultSecretNames() []string { return slices.Clone(defaultSecretNames) }

// baseNames is a list of base names or base-name patterns
// (readable_dotfiles, secret_names), checked as it is read.
type baseNames []string

// UnmarshalYAML reads a list of names and refuses one with a "/", an
// empty one, or a pattern that does not parse.
func (l *baseNames) UnmarshalYAML(n *yaml.Node) error {
	var names []string
	if err := n.Decode(&names); err != nil {
		return err
	}
	for _, name := range names {
		if err := checkBaseName(name); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
	}
	*l = names
	return nil
}

func checkBaseName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("%s is not a base name (no \"/\")", strconv.Quote(name))
	}
	if _, err := path.Match(name, ""); err != nil {
		return fmt.Errorf("%s is not a pattern: %w", strconv.Quote(name), err)
	}
	return nil
}
