package engine

import "fmt"

// ConfigError marks a mistake in what the operator gave — an inventory, a
// host pattern, a host's settings, a --var: nothing ran. Front ends report
// it as a usage error (the CLI exits 2).
type ConfigError struct{ Err error }

func (e ConfigError) Error() string { return e.Err.Error() }
func (e ConfigError) Unwrap() error { return e.Err }

func configf(format string, a ...any) error { return ConfigError{fmt.Errorf(format, a...)} }
