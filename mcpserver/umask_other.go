//go:build !linux

package mcpserver

func umask(m int) int { return m }
