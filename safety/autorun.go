package safety

// defaultAutorunPaths are the places whose contents run later, without
// anyone running them by name (issue 26): Python's user site-packages
// (a *.pth line and usercustomize.py run at every python start; every
// module `pip install --user` put there shadows the system's), editor
// plugin and autoload directories and start-up files, Mercurial's hooks,
// tmux and readline start-up files, desktop autostart entries, systemd
// user units, crontabs, the user's bin directories (first on PATH), the
// REPLs' start-up files. Writing there is High, and the kernel denies it
// to a medium step nobody approved (Protected's NoWrite). The git hooks
// and configuration of the repositories in the home are found when the
// kernel's rules are computed (confine/secrets.go): they join the same
// denial.
var defaultAutorunPaths = []string{
	"~/.local/lib", "~/.local/share/nvim/site", "~/.config/nvim", "~/.vim", "~/.vimrc", "~/.emacs.d", "~/.emacs",
	"~/.hgrc", "~/.config/hg", "~/.tmux.conf", "~/.config/tmux", "~/.inputrc", "~/.config/autostart",
	"~/.config/systemd", "~/.local/share/systemd", "~/.local/bin", "~/bin", "/var/spool/cron",
	"~/.ipython", "~/.psqlrc", "~/.irbrc", "~/.pryrc", "~/.Rprofile", "~/.gdbinit", "~/.lldbinit", "~/.xsessionrc",
}

// DefaultAutorunPaths is the default policy's AutorunPaths.
func DefaultAutorunPaths() []string { return append([]string(nil), defaultAutorunPaths...) }
