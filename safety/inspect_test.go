package safety

import (
	"fmt"
	"strings"
	"testing"
	"text/template"
)

// TestContainerSecretsHigh: the container commands that print
// environments, command lines or a compose project's .env values are
// high (session 13: `docker inspect web` was safe and showed
// POSTGRES_PASSWORD to the model, the redactor alone between them);
// exec and cp into a container are high (no undo, no confinement);
// formats naming only other fields, listings and other objects stay safe.
func TestContainerSecretsHigh(t *testing.T) {
	p := DefaultPolicy()
	high := []string{"docker inspect web", "docker container inspect web", "podman inspect web", "docker image inspect img",
		"docker inspect -f '{{.Config.Env}}' web", "docker inspect --format '{{json .}}' web", "docker inspect -f '{{.}}' web",
		"docker inspect --format '{{index . \"Config\"}}' web", "docker inspect -f '{{$.Config}}' web", "docker inspect --format json web",
		"docker inspect -f '{{json .Config}}' web", "docker inspect -f '{{range .Config.Env}}{{.}}{{end}}' web",
		"docker inspect -f '{{.Args}}' web", "docker inspect -f '{{.Path}} {{.State.Pid}}' web", "docker inspect -f '{{with .State}}{{$}}{{end}}' web",
		"docker inspect -f '{{template \"x\"}}' web", "docker inspect -f '{{printf \"%v\" .}}' web", "docker inspect -f '{{.State}}}}{{.Config}}' web",
		"docker inspect -f \"{{.Config.Labels}}\" web", "docker inspect -f '{{.ContainerConfig.Env}}' img", "docker inspect -f {{.Config.Env}} web",
		"docker inspect -f \"$F\" web", "docker inspect --format='{{.State.Status}}' --format='{{.Config.Env}}' web",
		"docker inspect -f '{{.State.Status}}' -f '{{json .}}' web", "docker compose config", "docker-compose config", "docker compose config -o x.yml",
		"docker exec web env", "docker container exec web cat /run/secrets/db", "docker cp web:/run/secrets/db /tmp/x",
		"docker cp /tmp/x web:/etc/x", "docker compose exec web env", "docker export web", "podman exec web env",
	}
	safe := []string{"docker inspect -f '{{.State.Status}}' web", "docker inspect --format='{{range .Mounts}}{{.Source}} {{end}}' web",
		"docker inspect -f '{{json .NetworkSettings.Networks}}' web", "docker inspect -f '{{.Name}} {{.RestartCount}} {{.State.StartedAt}}' web",
		"docker inspect -f '{{if .State.Running}}up{{else}}down{{end}}' web", "docker network inspect n", "docker volume inspect v",
		"docker compose config --services", "docker-compose config --volumes", "docker ps --format '{{.Names}}'", "docker logs --tail 50 web",
		"systemctl cat nginx", "systemctl show -p ActiveState sshd",
	}
	for _, c := range high {
		if a := p.ClassifyCommandAt(c, "/home/u"); a.Level < High {
			t.Errorf("%s: %s, want high", c, a)
		}
	}
	for _, c := range safe {
		if a := p.ClassifyCommandAt(c, "/home/u"); a.Level != Safe {
			t.Errorf("%s: %s, want safe", c, a)
		}
	}
}

func TestSafeInspectFormat(t *testing.T) {
	for f, want := range map[string]bool{
		"{{.State.Status}}": true, "{{ .Name }}": true, "{{- .Id -}}": true, `{{join .Foo ","}}`: true, "x {{.A}} y {{.B}}": true,
		"": false, "json": false, "{{.}}": false, "{{ . }}": false, "{{.Config}}": false, "{{$x := .State}}": false, "{{/* c */}}": false,
		"{{.State": false, "}}{{.A}}": true, "{{.A}}}}": true, "{{.A}}{{": false, `{{printf "\x41" .A}}`: false, "{{.A..B}}": false, "{{call .A}}": false,
		"{{.A.Env}}": false, "{{(.A).Cmd}}": false, "{{.Config.Image}}": true, "{{json .Config}}": false, "{{.Config}}x": false,
		"{{with .Config}}{{.Env}}{{end}}": false, "{{.Config.Healthcheck}}": false, "{{index .A 0}}": false, "{{..}}": false,
	} {
		if got := safeInspectFormat(f); got != want {
			t.Errorf("safeInspectFormat(%q) = %v, want %v", f, got, want)
		}
	}
}

// FuzzSafeInspectFormat: a format rated safe, run by Go's text/template
// (docker's) over an object whose secret fields hold a marker, prints no
// marker.
func FuzzSafeInspectFormat(f *testing.F) {
	f.Add("{{.State.Status}}")
	f.Add("{{range .Mounts}}{{.Source}}{{end}}")
	f.Add(`{{if .State.Running}}{{json .State}}{{else}}{{printf "%v" .Name}}{{end}}`)
	funcs := template.FuncMap{"json": func(v any) string { return fmt.Sprint(v) }, "upper": strings.ToUpper, "lower": strings.ToLower,
		"title": strings.ToUpper, "join": func(v any, s string) string { return fmt.Sprint(v) + s }, "truncate": func(v any, n int) string { return fmt.Sprint(v) },
		"split": strings.Split, "pad": func(v any, a, b int) string { return fmt.Sprint(v) }, "table": func(v any) string { return fmt.Sprint(v) }}
	secret := "S3CR3T"
	obj := map[string]any{"Id": "abc", "Name": "/web", "RestartCount": 1, "Image": "sha256:1",
		"State":  map[string]any{"Status": "running", "Running": true, "Pid": 7},
		"Mounts": []map[string]any{{"Source": "/data", "Destination": "/d"}},
		"Config": map[string]any{"Image": "img", "Env": []string{"PW=" + secret}, "Cmd": []string{secret}, "Labels": map[string]string{"k": secret}},
		"Args":   []string{"-p" + secret}, "Path": secret, "ContainerConfig": map[string]any{"Env": []string{secret}},
		"NetworkSettings": map[string]any{"Networks": map[string]any{"b": map[string]any{"IPAddress": "10.0.0.2"}}}}
	f.Fuzz(func(t *testing.T, s string) {
		if !safeInspectFormat(s) {
			return
		}
		tpl, err := template.New("f").Funcs(funcs).Option("missingkey=zero").Parse(s)
		if err != nil {
			return
		}
		var out strings.Builder
		tpl.Execute(&out, obj)
		if strings.Contains(out.String(), secret) && !strings.Contains(s, secret) {
			t.Fatalf("safe format %q printed a secret: %q", s, out.String())
		}
	})
}

// TestToolHolesSession14: the fresh pass's holes, each high now: git
// configuration that makes a later safe git run a program (a textconv
// driver for `git diff`, a merge driver, an include of another file, a
// submodule's update command, a remote's upload-pack), the credential
// helper's answers, a helm release's values and manifests. Their
// neighbours keep their levels.
func TestToolHolesSession14(t *testing.T) {
	p := DefaultPolicy()
	for _, c := range []string{"git config diff.pdf.textconv 'sh -c x'", "git -C /tmp/r config diff.x.command x", "git config merge.ours.driver 'rm -rf ~'",
		"git config include.path /tmp/evil.cfg", "git config includeIf.gitdir:/.path /tmp/x", "git config submodule.m.update '!sh -c x'",
		"git config remote.origin.uploadpack 'sh -c x'", "git config remote.origin.vcs evil", "git config core.worktree /home/u/.ssh",
		"git config core.attributesFile /tmp/attrs", "git config protocol.ext.allow always", "git config trailer.x.command 'sh -c y'",
		"git config gpg.ssh.defaultKeyCommand x", "printf 'protocol=https\\nhost=github.com\\n' | git credential fill",
		"git credential-store get", "git credential-cache exit", "helm get values db", "helm get manifest db", "helm get all db", "helm get hooks db",
		"kubectl get pod x -o yaml", "kubectl get deploy/x -ojson", "kubectl describe pod x", "kubectl get all -o yaml",
		"kubectl get pods -o jsonpath='{.items[*].spec.containers[*].env}'", "kubectl get --output=yaml sts x", "kubectl get pods,svc -o yaml"} {
		if a := p.ClassifyCommandAt(c, "/home/u"); a.Level < High {
			t.Errorf("%s: %s, want high", c, a)
		}
	}
	for c, want := range map[string]Level{"git config user.name x": High, "git config diff.renames true": High, // issue 26: undo does not keep .git/config
		"git config --get remote.origin.url": Safe, "helm get notes db": Medium, "git status": Safe,
		"kubectl get pods -A": Medium, "kubectl get po -o wide": Medium, "kubectl describe node x": Medium, "kubectl get svc -o yaml": Medium} {
		if a := p.ClassifyCommandAt(c, "/home/u"); a.Level != want {
			t.Errorf("%s: %s, want %s", c, a, want)
		}
	}
}

// TestOtherAccountDotWrites: writing a dot-entry at the top of another
// account's home (/etc/passwd's, a service's usual one, /home/X) is high
// from the classifier alone, as the kernel denies it; the operator's own
// and the accounts' ordinary files keep their levels.
func TestOtherAccountDotWrites(t *testing.T) {
	p := DefaultPolicy()
	for c, want := range map[string]Level{
		"echo x > /var/www/.env": High, "echo x >> /home/bob/.foo": High, "cp a /home/bob/.config/x": High,
		"echo x > /var/www/html/index.html": Medium, "echo x > /home/bob/notes": Medium, "echo x > ~/work/.x": Medium,
		"echo x > /home/u/work/.x": Medium, "echo x > /tmp/.x": Medium,
	} {
		if a := p.ClassifyCommandAt(c, "/home/u"); a.Level != want {
			t.Errorf("%s: %s, want %s", c, a, want)
		}
	}
}
