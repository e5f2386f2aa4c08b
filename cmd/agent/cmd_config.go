package main

import "context"

// runConfig is `agent config set-llm|show`.
func runConfig(ctx context.Context, a *app, args []string) error {
	return usagef("config: not built yet")
}
