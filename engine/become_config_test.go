package engine

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func decodeBecome(t testing.TB, text string) (*BecomeFile, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return DecodeBecomeFile(nil)
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "become" {
			return DecodeBecomeFile(root.Content[i+1])
		}
	}
	return DecodeBecomeFile(nil)
}

func TestDecodeBecomeFile(t *testing.T) {
	bf, err := decodeBecome(t, "become:\n  enabled: true\n  user: postgres\n  method: sudo\n  ask_pass: true\n  exe: /usr/bin/sudo\n  flags: -H -S -n\n")
	if err != nil || *bf != (BecomeFile{Enabled: true, User: "postgres", Method: "sudo", AskPass: true, Exe: "/usr/bin/sudo", Flags: "-H -S -n"}) {
		t.Fatalf("decode = %+v, %v", bf, err)
	}
	if bf, err := decodeBecome(t, "become:\n"); err != nil || *bf != (BecomeFile{}) {
		t.Errorf("empty section = %+v, %v", bf, err)
	}
	bad := map[string]string{
		"become: [a]\n":                      "want a mapping",
		"become:\n  enabled: yes please\n":   "want true or false",
		"become:\n  enabled: 1\n":            "want true or false",
		"become:\n  method: su\n":            "not supported",
		"become:\n  user: -root\n":           "not a user name",
		"become:\n  user: [root]\n":          "want a string",
		"become:\n  flags: -i\n":             "not supported",
		"become:\n  exe: sudo -i\n":          "not a program path",
		"become:\n  password: hunter2\n":     "never read from the config file",
		"become:\n  colour: red\n":           "unknown key",
		"become:\n  user: a\n  user: b\n":    "given twice",
		"become:\n  ask_pass: ~\n":           "want true or false",
		"become:\n  flags: $(reboot)\n":      "expansions",
		"become:\n  enabled: true\n  x: 1\n": "line 3",
	}
	for text, want := range bad {
		_, err := decodeBecome(t, text)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error saying %q", text, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

func TestResolveBecome(t *testing.T) {
	hb, err := ResolveBecome(Target{}, Become{})
	if err != nil || hb.All || hb.Config.User != "root" || hb.Config.Password != "" {
		t.Fatalf("defaults = %+v, %v", hb, err)
	}
	// The inventory beats the operator, as in Ansible.
	inv := Target{Name: "web1", BecomeVars: map[string]BecomeVar{
		"enabled":  {Name: "ansible_become", Value: "no", Origin: "hosts:2"},
		"user":     {Name: "ansible_become_user", Value: "postgres", Origin: "hosts:2"},
		"password": {Name: "ansible_become_password", Value: "inv-pw", Origin: "hosts:2"},
		"flags":    {Name: "ansible_become_flags", Value: "-H -S -n", Origin: "hosts:2"},
	}}
	hb, err = ResolveBecome(inv, Become{Enabled: true, User: "root", Password: "cli-pw"})
	if err != nil || hb.All || hb.Config.User != "postgres" || hb.Config.Password != "inv-pw" || len(hb.Config.Flags) != 1 {
		t.Fatalf("inventory over flags = %+v, %v", hb, err)
	}
	for _, o := range []Become{{Method: "su"}, {User: "a b"}, {Flags: "-s"}, {Exe: "x\ny"}, {Password: "a\nb"}} {
		_, err := ResolveBecome(Target{}, o)
		var ce ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("ResolveBecome(%+v) = %v, want a ConfigError", o, err)
		}
	}
	for _, v := range []string{"yes", "True", "on", "1", "y"} {
		if b, ok := ansibleBool(v); !b || !ok {
			t.Errorf("ansibleBool(%q) = %v %v", v, b, ok)
		}
	}
	for _, v := range []string{"maybe", "2", "sure"} {
		if _, ok := ansibleBool(v); ok {
			t.Errorf("ansibleBool(%q) accepted", v)
		}
	}
}

// FuzzDecodeBecomeFile: any YAML is a BecomeFile every field of which
// ResolveBecome accepts, or an error; never a panic.
func FuzzDecodeBecomeFile(f *testing.F) {
	for _, s := range []string{"become:\n  enabled: true\n  user: root\n", "become:\n  flags: -H\n", "become: 1\n", "become:\n  method: su\n", "become:\n  user: '#0'\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		bf, err := decodeBecome(t, text)
		if err != nil {
			return
		}
		if _, err := ResolveBecome(Target{}, Become{Enabled: bf.Enabled, User: bf.User, Method: bf.Method, Exe: bf.Exe, Flags: bf.Flags}); err != nil {
			t.Fatalf("decoded %+v but ResolveBecome refuses it: %v", bf, err)
		}
	})
}

// FuzzResolveBecome: whatever an inventory host's become variables hold,
// ResolveBecome gives settings the sudo decorator accepts or a
// ConfigError naming the variable — never a panic, and never the
// password in the message.
func FuzzResolveBecome(f *testing.F) {
	f.Add("yes", "root", "sudo", "s3cret-pw", "", "-H")
	f.Add("maybe", "-u x", "su", "pw\nline", "/bin/sh -c", "--askpass")
	f.Add("True", "#0", "ansible.builtin.sudo", "", "/usr/bin/sudo", "-E --preserve-env=PATH")
	f.Add("", "", "", "x\x00y", "sudo", "$(id)")
	f.Fuzz(func(t *testing.T, enabled, user, method, password, exe, flags string) {
		vars := map[string]BecomeVar{}
		for k, v := range map[string]string{"enabled": enabled, "user": user, "method": method, "password": password, "exe": exe, "flags": flags} {
			if v != "" {
				vars[k] = BecomeVar{Name: "ansible_become_" + k, Value: v, Origin: "hosts.ini:1"}
			}
		}
		hb, err := ResolveBecome(Target{Name: "web1", BecomeVars: vars}, Become{})
		if err != nil {
			var ce ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "web1") || !strings.Contains(err.Error(), "ansible_become_") {
				t.Fatalf("not a ConfigError naming the host and variable: %v", err)
			}
			distinct := len(password) >= 6
			for _, other := range []string{enabled, user, method, exe, flags} {
				distinct = distinct && !strings.Contains(other, password)
			}
			if distinct && strings.Contains(err.Error(), password) {
				t.Fatalf("the password is in the error: %v", err)
			}
			return
		}
		if err := hb.Config.Validate(); err != nil {
			t.Fatalf("resolved %+v, which the decorator refuses: %v", hb.Config, err)
		}
		if hb.Config.Password != password {
			t.Fatalf("password %q resolved as %q", password, hb.Config.Password)
		}
	})
}
