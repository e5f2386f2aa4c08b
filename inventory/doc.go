// Package inventory reads Ansible inventories (INI and YAML) and selects
// hosts with Ansible's host patterns. It does no network I/O.
package inventory
