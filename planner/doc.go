// Package planner owns plans — phases and steps — from the model or from plan files, and the Executor that runs their steps safely on one host, emitting events.
package planner
