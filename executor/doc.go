// Package executor runs one step on one host: it works the step out once
// (prepared), decides whether and how it may run, runs it, and records it.
// It also runs plans (RunPlan) step by step, and journals a shell
// command's file changes for undo.
//
// # The stages of a step
//
// RunStep is a list of stages over one stepRun; each is a small function
// that returns nil to go on or a *denial that ends the step (its kind
// says how: failed, denied by policy or approver, not confined, blocked
// by the sandbox, skipped, or a run-stopping error), and one finish
// records every step however it ended:
//
//	dryNeeds ─ condition ─ prepare ─ classify ─ announce ─ permissions ─ readOnly ─ dryRun ─ preview ─ decide ─┐
//	┌───────────────────────────────────────────────────────────────────────────────────────────────────────────┘
//	└ confine ─ sandbox ─ levelRules ─ journal ─ homeNames ─ harvest ─ run ─ harvestRead ─ record ─ finish
//
// In order:
//
//   - dryNeeds, condition: a dry run's step that needs what a skipped step
//     set, and a false condition, are skipped (templates resolved);
//   - prepare: the call, its transport and user, the one home, the view;
//   - classify: the risk, the command parsed once, its files looked at
//     once (announce: the step_start event);
//   - permissions, readOnly, dryRun: declared permissions, --read-only,
//     a dry run's stop before a medium or high step;
//   - preview, decide: the diff a person sees, then Guard and the approver;
//   - confine, sandbox, levelRules: the kernel's level, the operator's
//     sandbox for file tools, the level's rules for file tools;
//   - journal, homeNames: undo saved first; a new name in ~ created first;
//   - harvest, run, harvestRead: secrets a step reads, learnt around the
//     tool's run;
//   - record: the journal's new states and the session's files; finish
//     records every step however it ended (vars, audit, event).
//
// The same stages, not copies, serve the other callers: the needs of a
// step whose condition is false (skippedNeeds, for --save-plan) are the
// prefix prepare → classify → permissions; the plan pre-check
// (CheckPlanPermissions) runs the host-free part of the same prefix:
// prepareCall, classify's analysis without a home, and the permissions
// stage's needsOf over a view without a host (staticNeeds).
//
// # One prepared step
//
// prepare builds one prepared value per step, and no stage after it
// re-derives what it holds: the resolved call, the transport the step
// runs on and the user it runs as (become), the step's one home (the
// become user's when the step runs as them: the command is classified
// with the home its "~" is resolved against), and a hostView: the host as
// that user sees it, which looks at each path once (transport.Inspector:
// where it really is, what is there, its owner, and for a file a command
// writes its content, read ahead for the undo journal) and remembers it
// for the step. Through become each look is one sudo command; a journaled
// `sed -i` as another user runs three (the look, the command, the state it
// left), a read_file two.
//
// # What a step touches
//
// One type for a path and how it is used, one for the operation:
//
//   - safety.FileOp: the operation — read, write, edit;
//   - safety.Touch: a path a step touches and its access — its FileOp,
//     a tree or a pattern, a directory it creates, on the operator's
//     machine or the host, and where it really is (Real, or why that is
//     not known). The classifier's are a command's words
//     (Analysis.Touches), the host view resolves them in place
//     (resolveTouches → AnalyzeResolvedParsed); a file tool's are its
//     files (classification.files); safety.Needs, what a step needs of
//     declared permissions, are lists of them made absolute.
//
// Built on a Touch, not another description of one: savedFile is what the
// undo journal saves of a file a command writes (its state before the
// step), and execctx.FileEvent / execctx.SessionFile are what the session
// did to a file, for the model's later questions (session_files).
//
// The command line itself is parsed once per step (safety.Command, in
// classification.parsed): the classifier's passes, the POSIX reading
// /bin/sh may make and the analysis with the host's links share its trees.
//
// The files a step reads and writes are in its prepared value (files, and
// a command's cls.analysis.Touches and cls.undo), resolved on its host:
// the hook for what is built on a step.
package executor
