// Package execctx is the execution context of a run — variables, `last`, step history, files accessed, {{var}} templating, Python-style conditions on expr-lang/expr, and the bounded summary shown to the LLM — as pure data with no I/O.
package execctx
