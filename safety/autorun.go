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
	// Session 14 (attacker pass): files shells source (Fedora's bashrc
	// sources ~/.bashrc.d/*, bash-completion ~/.bash_completion and the
	// user's completions, zsh frameworks their custom directories,
	// other shells' rc files, rustup's ~/.cargo/env from .profile,
	// version managers' init scripts from .bashrc); programs first on
	// PATH or run as the toolchain (npm, yarn, deno, bun, volta, pnpm
	// bin directories; rustup, pyenv, rbenv, sdkman, asdf toolchains
	// and shims; cargo's rustc-wrapper); start-up files that run
	// commands (sqlite's .shell, lesskey's LESSOPEN, mutt's
	// `source "cmd|"`, ranger's rc, nano's speller, starship's custom
	// prompt commands, Emacs under XDG, terraform's provider overrides,
	// sensible-editor's choice, terminals' shell and Lua configs,
	// mpv's scripts, jupyter's Python configs, octave's rc); desktop
	// entries and MIME defaults (what opens a file).
	"~/.bashrc.d", "~/.bash_completion", "~/.bash_completion.d", "~/.local/share/bash-completion", "~/.zfunc", "~/.zsh",
	"~/.oh-my-zsh", "~/.config/zsh", "~/.zdotdir", "~/.config/nushell", "~/.xonshrc", "~/.config/xonsh", "~/.elvish",
	"~/.config/elvish", "~/.config/powershell", "~/.config/ion", "~/.cargo/env", "~/.cargo/config", "~/.cargo/config.toml",
	"~/.nvm/nvm.sh", "~/.nvm/bash_completion", "~/.nvm/versions", "~/.npm-global", "~/.yarn/bin", "~/.deno/bin",
	"~/.bun/bin", "~/.volta", "~/.local/share/pnpm", "~/.rustup/toolchains", "~/.rustup/settings.toml", "~/.pyenv/shims",
	"~/.pyenv/versions", "~/.rbenv/shims", "~/.rbenv/versions", "~/.sdkman/bin", "~/.sdkman/candidates", "~/.asdf/asdf.sh",
	"~/.asdf/shims", "~/.asdf/installs", "~/.sqliterc", "~/.lesskey", "~/.config/lesskey", "~/.muttrc", "~/.mutt",
	"~/.config/mutt", "~/.config/ranger", "~/.nanorc", "~/.config/nano", "~/.config/starship.toml", "~/.config/emacs",
	"~/.terraformrc", "~/.selected_editor", "~/.config/kitty", "~/.config/alacritty", "~/.alacritty.toml",
	"~/.alacritty.yml", "~/.config/wezterm", "~/.wezterm.lua", "~/.config/mpv/scripts", "~/.jupyter", "~/.octaverc",
	"~/.local/share/applications", "~/.config/mimeapps.list", "~/.xinputrc",
}

// DefaultAutorunPaths is the default policy's AutorunPaths.
func DefaultAutorunPaths() []string { return append([]string(nil), defaultAutorunPaths...) }
