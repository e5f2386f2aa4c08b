// Package sshmux reuses a live OpenSSH ControlMaster: it checks the
// control socket is the operator's, asks the master whether it is alive
// (MUX_C_ALIVE_CHECK) and opens an SSH client whose sessions are the
// master's passengers (MUX_C_NEW_SESSION), carried over its already
// authenticated connection. The protocol is openssh-portable's
// PROTOCOL.mux and mux.c.
package sshmux
