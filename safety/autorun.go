package safety

// defaultAutorunPaths are the places whose contents run later, without
// anyone running them by name (issue 26): Python's user site-packages
// (a *.pth line and usercustomize.py run at every python start; every
// module `pip install --user` put there shadows the system's), editor
// plugin and autoload directories and start-up files, Mercurial's hooks,
// tmux and readline start-up files, desktop autostart entries, systemd
// user units, crontabs, the user's bin directories (first on PATH), the
// REPLs' start-up files, direnv's library, desktop sessions' start-up
// scripts and window managers' configurations. Writing there is High, and the kernel denies it
// to a medium step nobody approved (Protected's NoWrite). The git hooks
// and configuration of the repositories in the home are found when the
// kernel's rules are computed (confine/secrets.go): they join the same
// denial.
var defaultAutorunPaths = []string{
	"~/.local/lib", "~/.local/share/nvim/site", "~/.config/nvim", "~/.vim", "~/.vimrc", "~/.emacs.d", "~/.emacs",
	"~/.hgrc", "~/.config/hg", "~/.tmux.conf", "~/.config/tmux", "~/.inputrc", "~/.config/autostart",
	"~/.config/systemd", "~/.local/share/systemd", "~/.local/bin", "~/bin", "/var/spool/cron",
	"~/.ipython", "~/.psqlrc", "~/.irbrc", "~/.pryrc", "~/.Rprofile", "~/.gdbinit", "~/.lldbinit", "~/.xsessionrc",
	// Run at every login or directory change with no approval asked:
	// direnv's direnvrc and lib/*.sh (sourced before any .envrc is
	// allowed), KDE's autostart scripts and Plasma's env and shutdown
	// scripts, window managers' start-up files (exec lines).
	"~/.config/direnv", "~/.config/autostart-scripts", "~/.config/plasma-workspace", "~/.config/openbox",
	"~/.config/i3", "~/.config/sway", "~/.config/hypr", "~/.config/labwc",
}

// DefaultAutorunPaths is the default policy's AutorunPaths.
func DefaultAutorunPaths() []string { return append([]string(nil), defaultAutorunPaths...) }
