// Package planner owns plans — phases and steps — from the model or from plan files.
package planner
