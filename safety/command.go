package safety

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bounds that keep classification fast on hostile input; beyond them the
// command is High.
const (
	maxCommandBytes = 64 << 10 // source text analysed at all
	maxCodeDepth    = 8        // code strings inside code strings (sh -c 'sh -c …')
	maxNestDepth    = 200      // statements inside statements
	maxSteps        = 20000    // statements analysed in total
	maxParsedBytes  = 1 << 20  // code parsed in total, nested code strings included
)

// ClassifyCommand parses cmd as bash and returns the highest risk of every
// command it can run: pipelines, lists, subshells, groups, command and
// process substitutions, function bodies, loop and branch bodies, and code
// strings given to shells, wrappers, eval, trap and alias. Redirections are
// writes. Parse errors are High.
//
// Decisions on borderline cases:
//   - A command name must be literal; quoted pieces are joined ("r"m is rm),
//     but expansions, backslash escapes, globs and braces make it High.
//   - A non-literal operand is High, except for DataOnly commands (echo,
//     ls, test …) whose arguments cannot do harm; values of options are
//     checked only where the option names a file read or written.
//   - Script or program files given by path are Medium (a file the same
//     command wrote and then runs is High); a program the policy does not
//     know is High, as its effect cannot be known. A path to a program named
//     like a known command (/opt/bin/kubectl) is also classified as that
//     command; one in a BinDirs directory is only that command.
//   - Relative paths are taken from the directory of an earlier literal cd,
//     else from the home directory, where remote commands start.
func (p Policy) ClassifyCommand(cmd string) Assessment {
	a, _ := p.AnalyzeCommandAt(cmd, "")
	return a
}

// ClassifyCommandAt is ClassifyCommand for a host whose home directory is
// home: absolute paths under it are also matched as "~/…" (a HOME outside
// /home and /root).
func (p Policy) ClassifyCommandAt(cmd, home string) Assessment {
	a, _ := p.AnalyzeCommandAt(cmd, home)
	return a
}

// Touch is the one description of a file a step touches: the path, how
// the step uses it (Op), and, once the host is asked, where it really is.
// The classifier's are a command's words (Analysis.Touches): absolute,
// "~/…" in the home directory, or relative to the directory the step
// starts in. A file tool's are the files it acts on; permissions' Needs
// are Touches made absolute.
type Touch struct {
	Path string
	// Raw is Path as the kernel walks it when the command's word has a
	// ".." that may climb out of a symbolic link ("~/link/../x" is not
	// "~/x" when link is one): symbolic links are resolved along Raw.
	// "" when Path says it.
	Raw string
	// Op is how the step uses it: FileRead (the zero value) reads it;
	// FileWrite creates, changes or deletes it; FileEdit (a file tool's
	// edit) reads and writes it.
	Op FileOp
	// Tree: the command acts on the whole tree under Path (find's start
	// directories); Path may also be a glob pattern (its characters are
	// in it), for the files it matches when the command runs.
	Tree bool
	// Pattern: Path is a glob pattern, for the files it matches (Needs).
	Pattern bool
	// Dir: Path is a directory the command creates (mkdir); Parents: so
	// may be every missing directory above it (mkdir -p).
	Dir, Parents bool
	// Local: the file is on the operator's machine (a transfer's local
	// file), not on the host.
	Local bool
	// Real is where the host (or this machine, for a Local file) finds
	// it right before the step runs, every symbolic link on the way
	// followed (links that were there before the command, which its text
	// cannot show); "" when not looked up. Unresolved says why that could
	// not be found out (a loop of links, too many, a directory that
	// cannot be searched, an answer from the host that is not a clean
	// absolute path); Real is then "". A pattern may resolve to several:
	// where its directory leads, and each symbolic link among the names
	// it matches.
	Real       string
	Unresolved string
}

// Writes reports whether the step creates, changes or deletes the file.
func (t Touch) Writes() bool { return t.Op != FileRead }

// writeOp is FileWrite for a write, else FileRead.
func writeOp(write bool) FileOp {
	if write {
		return FileWrite
	}
	return FileRead
}

// Analysis is what the classifier knows of a command: its risk, the files
// its words name, the programs it runs and whether it connects out, and why
// any of that cannot be known before it runs (declared permissions deny a
// command with Unknown set unless they allow everything).
type Analysis struct {
	Assessment
	Touches []Touch
	// Programs are the programs the command runs, wrappers and the
	// commands inside them and inside code strings included, each once: a
	// bare name for a command found by name (or in a BinDirs directory),
	// else the program file's path as resolved like a Touch ("~/…",
	// absolute, or relative to where the step starts). Shell builtins that
	// run nothing (cd, echo, test …) are left out.
	Programs []string
	// Network says why the command connects to other hosts ("curl",
	// "/dev/tcp/…"), each once; nil when nothing it runs is known to.
	Network []string
	// Unknown says why what the command reads, writes or runs cannot be
	// known before it runs (code not statically resolvable, inline
	// interpreter code, operands read from input …); nil when it can.
	Unknown []string
	// IfJournaled is the command's assessment when the policy's Undoable
	// rules count as Medium: what it is once an undo journal has saved
	// everything it changes (the executor lowers a step to it only then).
	// It equals Assessment when no Undoable rule raised the level.
	IfJournaled Assessment
	// Unjournaled says which programs the command runs, anywhere in it
	// (wrappers, code strings, aliases, find -exec …), change files the
	// policy's write table does not list (archivers, compressors, patch
	// …: see opaqueWriters), so that an undo journal cannot save them
	// before it runs: "tar: an archive tool". nil when there are none.
	Unjournaled []string
	// LinkProbes are protected paths in the home directory whose real
	// place on the host matters to this command: it changes metadata
	// (chmod, chown, touch …), which the kernel's rules cannot hold, so
	// a file it names that is the target of a link such as ~/.bashrc →
	// ~/dotfiles/bashrc must be rated as the protected path. The executor
	// resolves them with the Touches and hands both to AnalyzeResolved;
	// they are not files the command touches.
	LinkProbes []string
	undoable   bool // an Undoable rule raised the level where it runs once, directly
	// unsure says why what the command runs, or when, is not certain
	// enough to lower an Undoable rule (a background job, an alias …).
	unsure string
}

// AnalyzeCommand is ClassifyCommand that also returns the files the
// command's words name for reading and writing (redirections, operands,
// option values), each once: what symbolic links on the target must be
// resolved for, and what an undo journal must save before the step runs.
// It is not complete for a High command (what High code touches cannot be
// known).
func (p Policy) AnalyzeCommand(cmd string) (Assessment, []Touch) { return p.AnalyzeCommandAt(cmd, "") }

// AnalyzeCommandAt is AnalyzeCommand for a host whose home directory is home.
func (p Policy) AnalyzeCommandAt(cmd, home string) (Assessment, []Touch) {
	an := p.Analyze(cmd, home)
	return an.Assessment, an.Touches
}

// Analyze is AnalyzeCommandAt with the programs the command runs, the
// connections it makes and what cannot be known (Analysis).
func (p Policy) Analyze(cmd, home string) Analysis { return p.analyze(ParseCommand(cmd), home, nil) }

// AnalyzeParsed is Analyze for a command parsed once for the step
// (ParseCommand): the trees it parses are kept in cmd for the analyses
// after it (AnalyzeResolvedParsed).
func (p Policy) AnalyzeParsed(cmd *Command, home string) Analysis { return p.analyze(cmd, home, nil) }

// analyze is Analyze with the symbolic links found on the host (nil when
// none were looked for); a High command also gets the assessment it has
// when the policy's Undoable rules count as Medium (IfJournaled).
func (p Policy) analyze(cmd *Command, home string, host *hostLinks) Analysis {
	an := p.analyzeOnce(cmd, home, host)
	an.IfJournaled = an.Assessment
	if an.Level == High && an.undoable && !p.undoView {
		jp := p
		jp.undoView = true
		ja := jp.analyzeOnce(cmd, home, host)
		an.IfJournaled = ja.Assessment
		if ja.unsure != "" && ja.Level < High {
			// A job running alongside may change the tree the journal
			// saved while or after the command changes it; an alias or a
			// function may change what a name runs; the two shells may
			// read it differently.
			an.IfJournaled = an.Assessment
			an.IfJournaled.Reasons = append(slices.Clip(an.Reasons), "undo cannot take it back: "+ja.unsure)
		}
	}
	return an
}

func (p Policy) analyzeOnce(cmd *Command, home string, host *hostLinks) Analysis {
	if home != "" {
		home = path.Clean(home)
	}
	// The step runs under /bin/sh: dash on Debian and Ubuntu, bash in
	// POSIX mode elsewhere. Constructs mean different things in the two
	// ([[ a > f ]] is a test in bash and a write under dash; ((…)) is
	// arithmetic in bash and nested subshells under dash), so the command
	// is classified as each dialect reads it and the worse result counts.
	c := p.classifyAs(cmd, home, syntax.LangBash, host)
	an := c.analysis()
	if an.Level == High || !c.bashOnly {
		// The POSIX reading cannot make it worse: the command is High, or
		// it holds no syntax that only bash reads (both parse it the same).
		return an
	}
	px := p.classifyAs(cmd, home, syntax.LangPOSIX, host)
	an.Level = max(an.Level, px.a.Level)
	for _, r := range px.a.Reasons {
		if !slices.Contains(an.Reasons, r) {
			an.add(px.a.Level, "as POSIX sh: "+r)
		}
	}
	more := px.analysis()
	an.undoable = an.undoable || more.undoable
	an.unsure = cmp.Or(an.unsure, more.unsure, "bash and /bin/sh (dash) read it differently")
	an.Touches = touches(append(an.Touches, more.Touches...))
	an.Programs = once(append(an.Programs, more.Programs...))
	an.Network = once(append(an.Network, more.Network...))
	an.Unknown = once(append(an.Unknown, more.Unknown...))
	an.Unjournaled = once(append(an.Unjournaled, more.Unjournaled...))
	if an.LinkProbes == nil {
		an.LinkProbes = more.LinkProbes
	}
	return an
}

// analysis is what c found, each item once.
func (c *classifier) analysis() Analysis {
	if c.async != "" && c.a.Level < High && slices.ContainsFunc(c.touched, Touch.Writes) {
		// The journal's after-look is taken when the step ends: a job
		// still running then (rm f &, over SSH) changes files after it,
		// and undo finds them "changed since" and leaves them.
		c.add(High, "it changes files, and part of it %s: undo could not take back what changes after the step ends", strings.TrimPrefix(c.async, "it "))
	}
	unsure := c.async
	if len(c.aliases) > 0 {
		unsure = cmp.Or(unsure, "it defines an alias, which may change what a command name runs")
	}
	if len(c.funcs) > 0 {
		unsure = cmp.Or(unsure, "it defines a function, which may change what a command name runs")
	}
	an := Analysis{Assessment: c.a, undoable: c.undoable, unsure: unsure, Touches: touches(c.touched), Programs: once(fromHome(c.programs)),
		Network: once(c.network), Unknown: once(c.unknown), Unjournaled: once(c.unjournaled)}
	if c.metadata {
		an.LinkProbes = c.p.linkProbes()
	}
	return an
}

func once(in []string) []string {
	var out []string
	for _, s := range in {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func fromHome(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		if rest, ok := strings.CutPrefix(s, homeStandIn); ok && (rest == "" || rest[0] == '/') {
			s = "~" + rest
		}
		out = append(out, s)
	}
	return out
}

// touches writes the classifier's places from "~" and removes repeats.
func touches(in []Touch) []Touch {
	var out []Touch
	for _, t := range in {
		if rest, ok := strings.CutPrefix(t.Path, homeStandIn); ok && (rest == "" || rest[0] == '/') {
			t.Path = "~" + rest
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func (p Policy) classifyAs(cmd *Command, home string, lang syntax.LangVariant, host *hostLinks) (c *classifier) {
	c = &classifier{p: &p, seen: map[*syntax.Stmt]bool{}, funcs: map[string]bool{},
		aliases: map[string]string{}, written: map[string]bool{}, links: map[string]string{}, lang: lang, home: home, host: host,
		cmd: cmd, nth: map[string]int{}}
	defer func() {
		if r := recover(); r != nil {
			c.opaque("internal error while analysing the command: %v", r)
		}
	}()
	c.code(cmd.text, env{})
	return c
}

type classifier struct {
	p       *Policy
	a       Assessment
	seen    map[*syntax.Stmt]bool
	funcs   map[string]bool   // functions defined in the code
	aliases map[string]string // aliases defined in the code
	written map[string]bool   // files the code writes content to
	links   map[string]string // symbolic links the code creates: link → target
	host    *hostLinks        // symbolic links already on the host (AnalyzeResolved)
	// allexport: set -a makes every later assignment part of the environment.
	allexport bool
	lang      syntax.LangVariant
	home      string // the host's home directory when known, else ""
	bashOnly  bool   // the code (or code nested in it) has syntax only bash reads
	// undoable: an Undoable rule raised the level of a command that runs
	// once, directly (see Analysis.IfJournaled and env.indirect).
	undoable bool
	// async says why something in the code runs alongside the rest or
	// after it: a background job, a coprocess, a process substitution.
	async string
	// cdUnsure says why the directory a cd went to may not be the one
	// the classifier took (cd NAME through $CDPATH).
	cdUnsure string
	cwds     []string // candidate working directories: "." (where the step starts) and cd targets
	cwdLost  bool     // a cd went somewhere that cannot be resolved
	touched  []Touch  // the files the command reads and writes, as resolved
	programs []string // the programs it runs (Analysis.Programs)
	network  []string // why it connects out (Analysis.Network)
	// unjournaled: programs whose file changes the write table does not
	// list (Analysis.Unjournaled).
	unjournaled []string
	unknown     []string // why its effects cannot be known (Analysis.Unknown)
	metadata    bool     // it changes a file's mode, owner, times or attributes (Analysis.LinkProbes)
	opens       string   // the command being read sets a mode or owner that may let others write (role.opens)
	findRoots   []arg    // inside find -exec: find's start directories ({} is under them)
	lastCd      []string // where the last cd went, when it could be followed
	linkHops    int      // links followed so far (see maxLinkWork)
	steps       int
	parsed      int    // bytes of code parsed so far
	src         string // the code being classified, for the text of its words
	// cmd holds the trees of the command and its code strings, parsed
	// once for every pass; nth counts each code's occurrences in this
	// pass (Command.tree).
	cmd *Command
	nth map[string]int
}

// env is what a statement inherits from where it appears.
type env struct {
	code  int    // nesting of code strings
	depth int    // nesting of statements
	stdin input  // what standard input carries
	xargs string // the wrapper feeding extra operands from input, if any
	// indirect says why a command here may run more than once, later than
	// the statement, or alongside something else (in a loop, under a
	// wrapper, in code a program runs, in a pipeline, a background job or
	// a function body); "" when it runs once, directly. An Undoable rule
	// is lowered only where it is "": the undo journal saves a tree once,
	// before the step, and a command run again or later changes it after.
	indirect string
}

// under is e inside a construct that may run a command again, later or
// alongside others (why says which); the outermost reason is kept.
func (e env) under(why string) env {
	if e.indirect == "" {
		e.indirect = why
	}
	return e
}

type inputKind int

const (
	inNone    inputKind = iota
	inPipe              // output of another command
	inText              // literal text (here-document, here-string)
	inDynamic           // text with expansions
	inFile              // a file redirected with <
)

type input struct {
	kind inputKind
	text string // inText: the text; inFile: the file; inPipe: its source
	file arg    // inFile: the file
}

func (c *classifier) add(l Level, format string, args ...any) {
	c.a.add(l, fmt.Sprintf(format, args...))
}

// opaque records a High reason that is also why what the command touches
// or runs cannot be known before it runs.
func (c *classifier) opaque(format string, args ...any) {
	why := fmt.Sprintf(format, args...)
	c.a.add(High, why)
	if len(c.unknown) < maxTouched {
		c.unknown = append(c.unknown, why)
	}
}

// code parses and classifies a piece of shell code.
func (c *classifier) code(src string, e env) {
	if e.code > maxCodeDepth {
		c.opaque("code nested more than %d levels deep is not analysed", maxCodeDepth)
		return
	}
	if len(src) > maxCommandBytes {
		c.opaque("command longer than %d bytes is not analysed", maxCommandBytes)
		return
	}
	if c.parsed += len(src); c.parsed > maxParsedBytes || c.steps > maxSteps {
		c.opaque("command too complex to analyse")
		return
	}
	defer func(outer string) { c.src = outer }(c.src)
	c.src = src
	f, err := c.cmd.tree(c.lang, src, c.nth[src])
	c.nth[src]++
	if err != nil && c.lang == syntax.LangPOSIX {
		// Bash reads it (the bash pass classified that); dash rejects it
		// or, for "&>", reads "cmd & >file", which writes the same file.
		c.add(Medium, "not POSIX shell: /bin/sh (dash) rejects or misreads it: %v", err)
		return
	}
	if err != nil {
		c.opaque("cannot parse command: %v", err)
		return
	}
	if c.lang == syntax.LangBash && !c.bashOnly {
		c.bashOnly = hasBashOnly(f)
	}
	if c.lang == syntax.LangBash {
		if why := arithRuntime(f, e.code > 0); why != "" {
			c.opaque("%s: bash evaluates a value read when it runs as arithmetic, and an array subscript in it (a[$(cmd)]) runs cmd", why)
		}
	}
	c.stmts(f.Stmts, e)
	// Anything the structural walk did not reach is still classified.
	syntax.Walk(f, func(n syntax.Node) bool {
		if s, ok := n.(*syntax.Stmt); ok && !c.seen[s] {
			c.stmt(s, env{code: e.code, indirect: cmp.Or(e.indirect, "it is in a construct the classifier does not follow")})
		}
		return true
	})
}

func (c *classifier) stmts(list []*syntax.Stmt, e env) {
	for _, s := range list {
		c.stmt(s, e)
	}
}

func (c *classifier) stmt(s *syntax.Stmt, e env) {
	if s == nil || c.seen[s] {
		return
	}
	c.seen[s] = true
	if c.steps++; c.steps > maxSteps {
		c.opaque("command too complex to analyse")
		return
	}
	if e.depth++; e.depth > maxNestDepth {
		c.opaque("command nested more than %d levels deep is not analysed", maxNestDepth)
		return
	}
	if s.Background || s.Coprocess {
		why := "it runs in a background job, alongside the rest and after the step may have ended"
		c.async = cmp.Or(c.async, why)
		e = e.under(why)
	}
	for _, r := range s.Redirs {
		e.stdin = c.redirect(r, e)
	}
	switch x := s.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		c.call(x, e)
	case *syntax.BinaryCmd:
		pipe := x.Op == syntax.Pipe || x.Op == syntax.PipeAll
		if pipe {
			e = e.under("it is a stage of a pipeline, running alongside the other stages")
		}
		saved := c.saveCwd()
		c.lastCd = nil
		c.stmt(x.X, e)
		switch {
		case pipe:
			c.restoreCwd(saved) // each part of a pipeline runs in a subshell
		case x.Op == syntax.AndStmt && isCd(x.X) && c.lastCd != nil && !c.cwdLost:
			c.cwds = c.lastCd // the rest runs only where the cd succeeded
		}
		if pipe {
			e.stdin = input{kind: inPipe, text: c.source(x.X)}
			e.xargs = ""
		}
		c.stmt(x.Y, e)
		if pipe {
			c.restoreCwd(saved)
		}
	case *syntax.Subshell:
		saved := c.saveCwd()
		c.stmts(x.Stmts, e)
		c.restoreCwd(saved)
	case *syntax.Block:
		c.stmts(x.Stmts, e)
	case *syntax.IfClause:
		for cl := x; cl != nil; cl = cl.Else {
			c.stmts(cl.Cond, e)
			c.stmts(cl.Then, e)
		}
	case *syntax.WhileClause:
		e = e.under("it is in a loop, which may run it again")
		c.stmts(x.Cond, e)
		c.stmts(x.Do, e)
	case *syntax.ForClause:
		e = e.under("it is in a loop, which may run it again")
		c.nested(x.Loop, e)
		c.stmts(x.Do, e)
	case *syntax.CaseClause:
		c.nested(x.Word, e)
		for _, it := range x.Items {
			for _, w := range it.Patterns {
				c.nested(w, e)
			}
			c.stmts(it.Stmts, e)
		}
	case *syntax.FuncDecl:
		c.add(Medium, "defines a function, which changes what a command name means")
		c.funcDecl(x, e.under("it is in a function body, which may run any number of times"))
	case *syntax.ArithmCmd, *syntax.LetClause, *syntax.TestClause:
		c.add(Medium, "%s: bash-only construct, read differently by /bin/sh (dash)", dialectName(x))
		c.nested(x, e)
		c.literalCode(x)
	case *syntax.DeclClause:
		for _, as := range x.Args {
			c.assign(as, e, x.Variant.Value)
		}
	case *syntax.TimeClause:
		c.stmt(x.Stmt, e.under("it runs under time"))
	case *syntax.CoprocClause:
		why := "it runs as a coprocess, alongside the rest"
		c.async = cmp.Or(c.async, why)
		c.stmt(x.Stmt, e.under(why))
	case *syntax.TestDecl:
		c.stmt(x.Body, e.under("it is in a test declaration"))
	default:
		c.opaque("unsupported shell construct %T", x)
	}
}

func dialectName(n syntax.Node) string {
	switch n.(type) {
	case *syntax.ArithmCmd:
		return "((…))"
	case *syntax.LetClause:
		return "let"
	}
	return "[[…]]"
}

// cwdState is the working directory state a subshell must not change.
type cwdState struct {
	cwds   []string
	lost   bool
	unsure string
}

func (c *classifier) saveCwd() cwdState { return cwdState{slices.Clone(c.cwds), c.cwdLost, c.cdUnsure} }

func (c *classifier) restoreCwd(s cwdState) { c.cwds, c.cwdLost, c.cdUnsure = s.cwds, s.lost, s.unsure }

// isCd reports a statement that is a plain cd or pushd.
func isCd(s *syntax.Stmt) bool {
	x, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(x.Args) == 0 || len(s.Redirs) > 0 || s.Background || s.Negated {
		return false
	}
	n := x.Args[0].Lit()
	return n == "cd" || n == "pushd"
}

// source names the command a pipe comes from, for reasons.
func (c *classifier) source(s *syntax.Stmt) string {
	for s != nil {
		switch x := s.Cmd.(type) {
		case *syntax.CallExpr:
			if len(x.Args) > 0 {
				return shorten(sourceText(x.Args[0], c.src))
			}
			return "assignment"
		case *syntax.BinaryCmd:
			s = x.Y
			continue
		}
		break
	}
	return "a compound command"
}

// nested classifies command and process substitutions anywhere in n.
func (c *classifier) nested(n syntax.Node, e env) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(m syntax.Node) bool {
		switch x := m.(type) {
		case *syntax.CmdSubst:
			saved := c.saveCwd()
			c.stmts(x.Stmts, env{code: e.code, depth: e.depth, indirect: e.indirect})
			c.restoreCwd(saved)
			return false
		case *syntax.ProcSubst:
			why := "it is in a process substitution, running alongside the command"
			c.async = cmp.Or(c.async, why)
			ne := env{code: e.code, depth: e.depth, indirect: cmp.Or(e.indirect, why)}
			if x.Op == syntax.CmdOut {
				ne.stdin = input{kind: inPipe, text: "process substitution"}
			}
			c.stmts(x.Stmts, ne)
			return false
		case *syntax.ParamExp:
			if x.Exp != nil && x.Exp.Op == syntax.OtherParamOps && x.Exp.Word != nil &&
				strings.Contains(x.Exp.Word.Lit(), "P") {
				c.opaque("prompt expansion ${…@P} can run commands")
			}
		}
		return true
	})
}

// literalCode flags quoted text that bash evaluates as code later: an
// array subscript holding a command substitution ('a[$(cmd)]') in
// arithmetic, tests, assignments and arguments.
func (c *classifier) literalCode(n syntax.Node) {
	syntax.Walk(n, func(m syntax.Node) bool {
		var v string
		switch x := m.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false // their commands are checked on their own
		case *syntax.Lit:
			v = x.Value
		case *syntax.SglQuoted:
			v = x.Value
		}
		if subscriptCode(v) {
			c.opaque("%s: array subscript with command substitution is evaluated as code", shorten(v))
		}
		return true
	})
}

func subscriptCode(v string) bool {
	i := strings.Index(v, "[")
	return i >= 0 && (strings.Contains(v[i:], "$(") || strings.Contains(v[i:], "`"))
}

func (c *classifier) funcDecl(f *syntax.FuncDecl, e env) {
	names := f.Names
	if f.Name != nil {
		names = append(names, f.Name)
	}
	for _, n := range names {
		c.funcs[n.Value] = true
		recursive := false
		syntax.Walk(f.Body, func(m syntax.Node) bool {
			switch x := m.(type) {
			case *syntax.FuncDecl:
				return false // checked on its own
			case *syntax.CallExpr:
				recursive = recursive || len(x.Args) > 0 && x.Args[0].Lit() == n.Value
			}
			return !recursive
		})
		if recursive {
			c.add(High, "function %s calls itself (fork bomb pattern)", n.Value)
		}
	}
	c.stmt(f.Body, e)
}

// assign checks a variable assignment, alone, before a command or in a
// declaration (export, declare, local, readonly).
func (c *classifier) assign(as *syntax.Assign, e env, decl string) {
	if as.Value != nil {
		c.nested(as.Value, e)
	}
	if as.Array != nil {
		c.nested(as.Array, e)
	}
	if as.Index != nil {
		c.nested(as.Index, e)
	}
	c.literalCode(as)
	name := ""
	switch {
	case as.Name != nil:
		name = as.Name.Value
	case as.Value != nil:
		a := wordArg(as.Value, c.src)
		if !a.static {
			c.opaque("%s %s: declaration is not statically resolvable", decl, a.text)
			return
		}
		if strings.HasPrefix(a.val, "-") || strings.HasPrefix(a.val, "+") {
			return
		}
		name, _, _ = strings.Cut(a.val, "=")
	}
	switch l := c.p.envRisk(name); {
	case l == High:
		c.opaque("%s=…: changes how later commands are found or run", name)
	case l == Medium && (decl == "prefix" || decl == "export" || c.allexport):
		c.add(Medium, "%s=…: a command's environment variable whose effect is not known", name)
	}
	// declare -n ref=PATH makes later assignments to ref change PATH.
	if decl != "" && decl != "prefix" && as.Value != nil {
		if a := wordArg(as.Value, c.src); a.static && c.p.dangerousEnv(a.val) {
			c.add(High, "%s %s=%s: name reference to %s", decl, name, a.val, a.val)
		}
	}
}

// redirect classifies one redirection and returns what standard input
// carries after it.
func (c *classifier) redirect(r *syntax.Redirect, e env) input {
	if r.Word != nil {
		c.nested(r.Word, e)
	}
	if r.Hdoc != nil {
		c.nested(r.Hdoc, e)
	}
	stdin := r.N == nil || r.N.Value == "0"
	op := "redirect " + r.Op.String()
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.RdrAllClob,
		syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
		c.write(op, wordArg(r.Word, c.src), wContent)
	case syntax.DplOut, syntax.DplIn:
		a := wordArg(r.Word, c.src)
		if a.static && (a.val == "-" || isDigits(strings.TrimSuffix(a.val, "-"))) {
			break
		}
		if r.Op == syntax.DplOut {
			c.write(op, a, wContent)
		}
	case syntax.RdrIn:
		a := wordArg(r.Word, c.src)
		c.read(op, a)
		if stdin {
			return input{kind: inFile, text: a.text, file: a}
		}
	case syntax.Hdoc, syntax.DashHdoc:
		if stdin {
			if text, ok := heredoc(r); ok {
				return input{kind: inText, text: text}
			}
			return input{kind: inDynamic, text: "here-document"}
		}
	case syntax.WordHdoc:
		if stdin {
			if a := wordArg(r.Word, c.src); a.static {
				return input{kind: inText, text: a.val + "\n"}
			}
			return input{kind: inDynamic, text: "here-string"}
		}
	}
	return e.stdin
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// hasBashOnly reports syntax the bash parser reads one way and the POSIX
// parser another (or not at all): where /bin/sh (dash) may do something
// else. Without it both parsers build the same tree.
func hasBashOnly(f *syntax.File) bool {
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.ArithmCmd, *syntax.TestClause, *syntax.LetClause, *syntax.DeclClause, *syntax.CStyleLoop,
			*syntax.ProcSubst, *syntax.ExtGlob, *syntax.CoprocClause, *syntax.TimeClause, *syntax.TestDecl,
			*syntax.BraceExp:
			found = true
		case *syntax.Redirect:
			found = found || x.Op == syntax.RdrAll || x.Op == syntax.AppAll || x.Op == syntax.WordHdoc ||
				x.Op == syntax.RdrAllClob || x.Op == syntax.AppAllClob || x.Op == syntax.AppClob
		case *syntax.BinaryCmd:
			found = found || x.Op == syntax.PipeAll
		case *syntax.SglQuoted:
			found = found || x.Dollar
		case *syntax.DblQuoted:
			found = found || x.Dollar
		case *syntax.ParamExp:
			found = found || x.Excl || x.Slice != nil || x.Repl != nil || x.Names != 0 || x.Index != nil ||
				x.Width || x.IsSet || x.Exp != nil && x.Exp.Op >= syntax.UpperFirst
		case *syntax.Assign:
			found = found || x.Array != nil || x.Index != nil || x.Append || x.Naked
		case *syntax.FuncDecl:
			found = found || x.RsrvWord
		case *syntax.ForClause:
			found = found || x.Select
		case *syntax.Word:
			for _, p := range x.Parts {
				if l, ok := p.(*syntax.Lit); ok && strings.ContainsAny(l.Value, "{}") {
					found = true // brace expansion
				}
			}
		}
		return !found
	})
	return found
}
