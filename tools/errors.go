package tools

import "errors"

var (
	// ErrUnknownTool is returned by Registry.Prepare and Registry.Validate for a
	// name no tool registered.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrInvalidParams marks parameters that do not fit a tool's schema.
	ErrInvalidParams = errors.New("invalid parameters")
)
