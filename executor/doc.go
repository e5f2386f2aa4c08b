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
//	condition ─ prepare ─ classify ─ permissions ─ preview ─ decide ─ confine ─ journal ─ run ─ record
//	(+ dry-run   templates  risk,     declared,      diff for  Guard,    level,    undo:     tool   journal's new
//	  needs)     call,      files     --read-only,   a person  approver  sandbox   saved            states, files
//	             transport, looked    dry run                                     first            of the session
//	             home, view at once
//	                                                                                  └─ finish: vars, audit, event
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
// One vocabulary, from the classifier up:
//
//   - safety.FileOp: how a file is used — read, write, edit;
//   - safety.Touch: a path a command's words name, and how; the
//     classifier's, resolved on the host into safety.Resolved;
//   - stepFile: a path a file tool acts on, its FileOp, where it really is,
//     and whether it is on the operator's machine (a transfer);
//   - shellTarget: a file a command writes, as the undo journal saves it;
//   - safety.Needs: what a step needs of declared permissions;
//   - execctx.FileEvent and execctx.SessionFile: what the session did to a
//     file, for the model's later questions (session_files).
//
// The files a step reads and writes are in its prepared value (files, and
// a command's cls.analysis.Touches and cls.undo), resolved on its host:
// the hook for what is built on a step.
package executor
