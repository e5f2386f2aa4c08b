// Package stepgen drives a task with the model: the adaptive loop (plan, then 1–3 steps at a time per phase with the results fed back) and the ReAct loop, turning tool calls into planner steps run by the Executor and enforcing the step, round and loop limits.
package stepgen
