// Package become runs commands and file operations on a host as another
// user through sudo, as Ansible's become does: a decorator over the host's
// transport.Transport that the engine hands to the steps that escalate.
package become
