package main

import "context"

// runBatchTask is `agent -i FILE -c TASK`: the task on every selected host.
func runBatchTask(ctx context.Context, a *app, o taskOptions) error {
	return usagef("-i: batch runs are not built yet")
}
