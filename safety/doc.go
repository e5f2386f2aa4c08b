// Package safety decides how risky a step is: it classifies shell commands
// from their mvdan.cc/sh syntax tree and file paths for the file tools as
// safe, medium or high against one configurable Policy.
package safety
