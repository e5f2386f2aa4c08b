package main

import "context"

// runInventory is `agent inventory list -i FILE [--limit PAT] [--json]`.
func runInventory(ctx context.Context, a *app, args []string) error {
	return usagef("inventory: not built yet")
}
