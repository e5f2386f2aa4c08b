// Package sshmux reuses a live OpenSSH ControlMaster: it checks the
// control socket is the operator's, asks the master whether it is alive
// (MUX_C_ALIVE_CHECK) and opens an SSH client whose channels the master
// carries over its already authenticated connection (proxy mode, through
// golang.org/x/crypto/ssh's NewControlClientConn). The protocol is
// openssh-portable's PROTOCOL.mux.
package sshmux
