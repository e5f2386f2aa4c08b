//go:build !linux

package main

// keepInheritedFromSteps is a no-op where agent cannot list its
// descriptors.
func keepInheritedFromSteps() {}
