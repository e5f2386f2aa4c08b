package engine

import (
	"slices"
	"strings"
	"testing"
)

// TestVaultedVarsAreSecrets: a variable decrypted from Ansible Vault is
// kept from the model whatever its name (not in the summary, scrubbed
// from output it reads) yet still templates, and its value is among the
// values redacted from events.
func TestVaultedVarsAreSecrets(t *testing.T) {
	const secret = "plain-looking-value"
	tg := Target{Name: "app1", Vars: map[string]any{"conn_string": secret, "nested": map[string]any{"k": "nested-vault-value"}, "port_note": "plainvalue"},
		Secrets: []string{"conn_string", "nested"}}
	vars, err := hostVars(tg, nil, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	sum := vars.Summary(100000)
	if strings.Contains(sum, secret) || strings.Contains(sum, "nested-vault-value") || !strings.Contains(sum, "plainvalue") {
		t.Errorf("summary shows a vaulted value (or hides a plain one):\n%s", sum)
	}
	if got := vars.Scrub("the db said " + secret); strings.Contains(got, secret) {
		t.Errorf("Scrub left the vaulted value: %q", got)
	}
	if r, err := vars.Render("{{conn_string}}"); err != nil || r != secret {
		t.Errorf("template: %q, %v", r, err)
	}
	b := &Batch{}
	vals := b.secretValues(tg)
	if !slices.Contains(vals, secret) || !slices.Contains(vals, "nested-vault-value") || slices.Contains(vals, "plainvalue") {
		t.Errorf("redacted values %q", vals)
	}
}
