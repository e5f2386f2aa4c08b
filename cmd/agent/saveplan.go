package main

import "github.com/autoshell/agent/stepgen"

// savePlan writes the steps of res that ran to path as a plan file.
func savePlan(path string, res stepgen.Result) error {
	return usagef("--save-plan is not built yet")
}
