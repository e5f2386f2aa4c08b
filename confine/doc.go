// Package confine holds the commands of a step nobody approved to what its
// level allows, with Linux Landlock: the ruleset a level means (Spec), the
// launcher that applies it to itself and execs the command (Launch: agent
// re-executing itself locally, and the small static cmd/agent-launch sent
// to an SSH host). It imports nothing of agent's, so the launcher stays
// small; the per-host setup (probe, upload, clean-up) is engine's, and
// the observation that tells the model a command was blocked is
// confine/explain's.
package confine
