package main

import "context"

// runREPL is agent without a command: the `Agent > ` prompt.
func runREPL(ctx context.Context, a *app, o taskOptions) error {
	return usagef("no command given (agent -c TASK does a task; the REPL is not built yet)")
}
