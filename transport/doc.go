// Package transport owns how agent reaches a host: the Transport interface
// (run a command, read, write atomically, stat, describe, close) implemented by
// transport/local and transport/ssh, and the bounded output capture they share.
package transport
