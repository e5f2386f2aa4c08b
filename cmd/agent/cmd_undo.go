package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/journal"
	"github.com/autoshell/agent/session"
	"github.com/autoshell/agent/statedir"
	"github.com/autoshell/agent/transport"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

// runUndo is `agent undo [SESSION]`: it puts back every file the session
// (default: the newest) changed, on the host the session ran on, newest
// change first. The journal names the host: "local", or the name given to
// --ssh-host, which undo dials again (the -F/-l/-p/--identity flags
// apply). A --ssh-host that names another host is refused; a session that
// ran on several hosts needs --ssh-host to pick one ("local": this
// machine). The files downloads wrote on this machine (host "local") are
// put back after the host's, unless --ssh-host local or --limit picks. A batch session (the
// journal names inventory hosts) is undone with -i FILE [--limit PAT]:
// each selected host the session changed is reached as the batch reached
// it (undoBatch).
func runUndo(ctx context.Context, a *app, args []string) error {
	fs := pflag.NewFlagSet("undo", pflag.ContinueOnError)
	fs.SetOutput(a.stderr)
	var host hostOptions
	host.addFlags(fs)
	var inv inventoryFlags
	var limit string
	inv.addFlags(fs, "undo a batch session on the hosts of the inventory `SOURCE` it ran on")
	fs.StringVar(&limit, "limit", "", "with -i: only the inventory hosts matching `PATTERN`")
	force := fs.Bool("force", false, "restore files that changed after the session changed them, overwriting those changes")
	list := fs.Bool("list", false, "list the sessions that changed files: id, hosts, time, files, restored or not")
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: agent undo [SESSION] [--ssh-host HOST | -i INVENTORY [--limit PAT]] [flags]\n"+
			"       agent undo --list\n\n"+
			"Put back the files a session changed (default: the newest session not yet\n"+
			"restored): the file tools' changes and the files shell commands write (saved\n"+
			"before they ran). What a high-risk command did beyond its files is not journaled\n"+
			"and cannot be undone.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := a.parseFlags(fs, args, usage); err != nil {
		return err
	}
	mergeHost(&a.host, host, fs)
	given := inv
	inv = a.task.batch.inv
	mergeInventory(&inv, given, fs)
	if !fs.Changed("limit") {
		limit = a.task.batch.limit
	}
	if fs.NArg() > 1 {
		return usagef("undo: at most one session id")
	}
	if !inv.given() && limit != "" {
		return usagef("undo: --limit needs -i INVENTORY")
	}
	if inv.given() && a.host.sshHost != "" {
		return usagef("undo: -i and --ssh-host: choose the inventory or one host")
	}
	stateDir, err := statedir.Dir()
	if err != nil {
		return err
	}
	sessions, err := journal.ListSessions(stateDir)
	if err != nil {
		return err
	}
	if *list {
		if fs.NArg() > 0 {
			return usagef("undo --list takes no session id")
		}
		listSessions(a.stdout, sessions)
		return nil
	}
	info, err := pickSession(sessions, fs.Arg(0))
	if errors.Is(err, errAllRestored) {
		fmt.Fprintf(a.stdout, "nothing to undo: %v (agent undo --list shows the sessions)\n", err)
		return nil
	}
	if err != nil {
		return err
	}
	if inv.given() {
		err := undoBatch(ctx, a, stateDir, info, inv, limit, *force)
		if err == nil && slices.Contains(info.Hosts, "local") && limit == "" {
			err = undoLocal(ctx, a, stateDir, info, *force)
		}
		return err
	}
	remote := slices.DeleteFunc(slices.Clone(info.Hosts), func(h string) bool { return h == "local" })
	// A download's files on this machine ("local") are undone after the
	// host's when the session ran on one other host, unless "local" is
	// the host asked for.
	alsoLocal := a.host.sshHost != "local" && len(remote) == 1 && len(info.Hosts) == 2
	if alsoLocal {
		info.Hosts = remote
	}
	if a.host.sshHost == "" && len(info.Hosts) == 1 && info.Hosts[0] != "local" {
		// The run's own way to the host (user@host, ssh://…:port, -l,
		// -p, -F, --identity), for what this command line does not say.
		if ran, ok := sessionHost(stateDir, info.ID); ok && a.hostName(ran) == info.Hosts[0] {
			keepRunHost(&a.host, ran, fs)
		}
	}
	target, err := undoHost(info, a.host.sshHost, a.hostName(a.host))
	if err != nil {
		return err
	}
	opened := a.host
	if target == "local" {
		opened.sshHost = ""
	} else if opened.sshHost == "" {
		opened.sshHost = target
	}
	a.host = opened
	tr, err := a.open(ctx)
	if err != nil {
		if target != "local" && a.host.sshHost == target && !fs.Changed("ssh-host") && ctx.Err() == nil {
			// A batch session's host is an inventory name, which ssh may
			// not know: the inventory says how to reach it.
			return fmt.Errorf("%w\n(if session %s was a batch run: agent undo %s -i INVENTORY)", err, info.ID, info.ID)
		}
		return err
	}
	defer tr.Close()
	hb, err := a.hostBecome(ctx, engine.Target{})
	if err != nil {
		return err
	}
	if err := undoOn(ctx, a, tr, stateDir, info, target, *force, hb); err != nil || !alsoLocal {
		return err
	}
	return undoLocal(ctx, a, stateDir, info, *force)
}

// undoLocal puts back the files a session's downloads wrote on this
// machine (the journal's host "local").
func undoLocal(ctx context.Context, a *app, stateDir string, info journal.SessionInfo, force bool) error {
	a.host.sshHost = ""
	tr, err := a.open(ctx)
	if err != nil {
		return err
	}
	defer tr.Close()
	return undoOn(ctx, a, tr, stateDir, info, "local", force, nil)
}

// hostBecome is t's become settings for undo: a file changed through
// become is restored as the same user.
func (a *app) hostBecome(ctx context.Context, t engine.Target) (*engine.HostBecome, error) {
	b, err := a.becomeSettings(ctx)
	if err != nil {
		return nil, err
	}
	return engine.ResolveBecome(t, b)
}

// undoOn restores session info's changes on target, reached through tr.
func undoOn(ctx context.Context, a *app, tr transport.Transport, stateDir string, info journal.SessionInfo, target string, force bool, hb *engine.HostBecome) error {
	actions, err := engine.Undo(ctx, tr, stateDir, info.ID, target, force, hb)
	for _, act := range actions {
		fmt.Fprintf(a.stdout, "%s: %s\n", printable(target), act)
	}
	if errors.Is(err, journal.ErrAlreadyRestored) {
		fmt.Fprintf(a.stdout, "session %s on %s was already restored; nothing to do\n", info.ID, printable(target))
		return nil
	}
	if err != nil {
		// Only the files listed above were put back.
		fmt.Fprintf(a.stdout, "session %s on %s NOT fully undone: only the %d %s above %s put back; the others were not restored\n",
			info.ID, printable(target), len(actions), pluralize(len(actions), "file"), pluralize(len(actions), "was", "were"))
		return fmt.Errorf("undo session %s on %s: %w", info.ID, target, err)
	}
	fmt.Fprintf(a.stdout, "undid session %s on %s: %d %s restored\n", info.ID, printable(target), len(actions), pluralize(len(actions), "file"))
	return nil
}

// undoBatch is `agent undo SESSION -i FILE [--limit PAT]`: the session's
// changes are put back on every selected inventory host it changed, one
// host after another, each dialled with its inventory settings as a batch
// run dials it. A host that fails does not stop the others; exit 3 then.
func undoBatch(ctx context.Context, a *app, stateDir string, info journal.SessionInfo, inv inventoryFlags, limit string, force bool) error {
	spec, err := inv.spec(ctx)
	if err != nil {
		return err
	}
	hosts, err := engine.SelectHosts(spec, limit, a.host.overrides())
	if err != nil {
		return err
	}
	a.warnInventory(hosts)
	var todo []engine.Target
	for _, h := range hosts {
		if slices.Contains(info.Hosts, h.Name) {
			todo = append(todo, h)
		}
	}
	if len(todo) == 0 {
		return usagef("undo: session %s changed files on %s, none of them selected from %s", info.ID, strings.Join(info.Hosts, ", "), inv.name())
	}
	failed := 0
	for _, h := range todo {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := undoInventoryHost(ctx, a, stateDir, info, h, force); err != nil {
			failed++
			fmt.Fprintf(a.stderr, "agent: %s: %v\n", printable(h.Name), err)
		}
	}
	if failed > 0 {
		fmt.Fprintf(a.stderr, "agent: undo failed on %d of %d %s\n", failed, len(todo), pluralize(len(todo), "host"))
		return exitError{code: exitSomeHosts}
	}
	return nil
}

// undoInventoryHost restores session info's changes on inventory host h.
func undoInventoryHost(ctx context.Context, a *app, stateDir string, info journal.SessionInfo, h engine.Target, force bool) error {
	tr, err := engine.Dial(ctx, h, engine.DialOptions{SSH: sshtr.Options{ // local for ansible_connection=local
		Prompter: newTerminalPrompter(),
		Warn:     func(msg string) { fmt.Fprintf(a.stderr, "agent: %s: %s\n", printable(h.Name), msg) },
	}})
	if err != nil {
		return err
	}
	defer tr.Close()
	hb, err := a.hostBecome(ctx, h)
	if err != nil {
		return err
	}
	return undoOn(ctx, a, tr, stateDir, info, h.Name, force, hb)
}

// errAllRestored: agent undo without an id found only restored sessions.
var errAllRestored = errors.New("every session is restored")

// pickSession finds id among sessions, or when id is "" the newest one not
// yet restored (undoing twice goes one session further back, never
// "restores" the same one again).
func pickSession(sessions []journal.SessionInfo, id string) (journal.SessionInfo, error) {
	if id != "" {
		if err := statedir.CheckSessionID(id); err != nil {
			return journal.SessionInfo{}, usageError{err}
		}
	}
	if id == "" && len(sessions) > 0 {
		// Ids sort by the second a run started; two runs in one second
		// are told apart by their first change.
		var newest *journal.SessionInfo
		newestAny := sessions[0]
		for i, s := range sessions {
			if s.Err == nil && (newestAny.Err != nil || s.Started.After(newestAny.Started)) {
				newestAny = s
			}
			if s.Err == nil && !s.Restored && (newest == nil || s.Started.After(newest.Started)) {
				newest = &sessions[i]
			}
		}
		switch {
		case newest != nil:
			sessions = []journal.SessionInfo{*newest}
		case newestAny.Err != nil:
			sessions = []journal.SessionInfo{newestAny}
		default:
			return journal.SessionInfo{}, fmt.Errorf("%w (the newest, %s, was restored)", errAllRestored, newestAny.ID)
		}
	}
	for _, s := range sessions {
		if id == "" || s.ID == id {
			if s.Err != nil {
				return s, fmt.Errorf("session %s: %w", s.ID, s.Err)
			}
			return s, nil
		}
	}
	if id == "" {
		return journal.SessionInfo{}, usagef("undo: no session has changed any file yet")
	}
	return journal.SessionInfo{}, usagef("undo: session %s changed no file (or does not exist)", id)
}

// undoHost decides which host of the session to restore: asked (the
// --ssh-host given) is one of the session's hosts by the name it was
// given or by the name the journal keeps for it (named: user@host and
// ssh://…:port are kept by their host name).
func undoHost(info journal.SessionInfo, asked, named string) (string, error) {
	switch {
	case asked != "" && slices.Contains(info.Hosts, asked):
		return asked, nil
	case asked != "" && named != "" && slices.Contains(info.Hosts, named):
		return named, nil
	case asked != "":
		return "", usagef("undo: session %s ran on %s, not on %s", info.ID, strings.Join(info.Hosts, ", "), asked)
	case len(info.Hosts) == 1:
		return info.Hosts[0], nil
	}
	return "", usagef("undo: session %s ran on several hosts (%s); a batch run: agent undo %s -i INVENTORY [--limit HOST]; or choose one with --ssh-host",
		info.ID, strings.Join(info.Hosts, ", "), info.ID)
}

// listSessions prints agent undo --list: the sessions that changed files,
// newest first.
func listSessions(w io.Writer, sessions []journal.SessionInfo) {
	if len(sessions) == 0 {
		fmt.Fprintln(w, "no session has changed any file yet")
		return
	}
	sorted := slices.Clone(sessions)
	slices.SortStableFunc(sorted, func(x, y journal.SessionInfo) int { return y.Started.Compare(x.Started) })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tSTARTED\tHOSTS\tFILES\tRESTORED")
	for _, s := range sorted {
		if s.Err != nil {
			fmt.Fprintf(tw, "%s\t-\t-\t-\tunreadable: %s\n", s.ID, printable(oneLineText(s.Err.Error(), 80)))
			continue
		}
		restored := "no"
		if s.Restored {
			restored = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", s.ID, s.Started.Local().Format("2006-01-02 15:04:05"),
			printable(oneLineText(strings.Join(s.Hosts, ","), 60)), s.Files, restored)
	}
	tw.Flush()
}

// hostName is the name the journal keeps for the host o reaches (the
// transport's name: its ssh_config alias or host name); "" when o names
// no SSH host or cannot be resolved.
func (a *app) hostName(o hostOptions) string {
	if o.sshHost == "" {
		return ""
	}
	t, err := engine.HostTarget(o.sshHost, o.overrides())
	if err != nil || t.SSH == nil {
		return ""
	}
	if t.SSH.Alias != "" {
		return t.SSH.Alias
	}
	return t.SSH.HostName
}

// sessionHost is the host options session id's run was given, from the
// arguments its record keeps; false when it has none (a local run, a
// batch, no record).
func sessionHost(stateDir, id string) (hostOptions, bool) {
	s, err := session.Load(stateDir, id)
	if s == nil || len(s.Start.Args) == 0 {
		_ = err
		return hostOptions{}, false
	}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	var h hostOptions
	h.addFlags(fs)
	if fs.Parse(s.Start.Args) != nil || h.sshHost == "" {
		return hostOptions{}, false
	}
	return h, true
}

// keepRunHost sets in dst the run's host options (ran) that undo's own
// flags (fs) do not set.
func keepRunHost(dst *hostOptions, ran hostOptions, fs *pflag.FlagSet) {
	dst.sshHost = ran.sshHost
	if !fs.Changed("ssh-config") && dst.configFile == "" {
		dst.configFile = ran.configFile
	}
	if !fs.Changed("user") && dst.user == "" {
		dst.user = ran.user
	}
	if !fs.Changed("port") && dst.port == 0 {
		dst.port = ran.port
	}
	if !fs.Changed("identity") && len(dst.identities) == 0 {
		dst.identities = ran.identities
	}
}
