package executor

import (
	"slices"
	"strings"
	"testing"
)

// The words of a command that read as paths, wherever they are: a
// script's operand, a path inside its code, a redirection; but the
// kernel's files and words that are no path.
func TestPathWords(t *testing.T) {
	for cmd, want := range map[string][]string{
		`python3 -c 'import tomllib,sys; print(tomllib.load(open(sys.argv[1],"rb")))' /srv/app/settings.toml`: {"/srv/app/settings.toml"},
		`python3 -c "import json;print(json.load(open('/srv/app.json'))['db'])"`:                              {"/srv/app.json"},
		`perl -ne 'print' ~/.netrc ./local.env ../up.ini`:                                                     {"~/.netrc", "./local.env", "../up.ini"},
		`cat </etc/app.conf; tr '\0' '\n' < /proc/self/environ; ls /var/lib/`:                                 {"/etc/app.conf", "/var/lib"},
		`echo a/b c:/d 1/2 http://x/y`:                                                                        {"/d"},
		`python3 -c "import glob; print([open(f).read() for f in glob.glob('/srv/app/*.json')])"`:             {"/srv/app/*.json"},
		``: nil,
	} {
		if got := pathWords(cmd); !slices.Equal(got, want) {
			t.Errorf("pathWords(%q) = %q, want %q", cmd, got, want)
		}
	}
	if got := pathWords(strings.Repeat("cat /a/b ", 20)); len(got) != maxPathWords {
		t.Errorf("%d paths, want at most %d", len(got), maxPathWords)
	}
}

func FuzzPathWords(f *testing.F) {
	f.Add(`python3 -c 'open("/x/y")' /a/b`)
	f.Add("cat ~/.env ./a ../b /proc/1/environ")
	f.Fuzz(func(t *testing.T, cmd string) {
		got := pathWords(cmd)
		if len(got) > maxPathWords {
			t.Fatalf("%d paths", len(got))
		}
		for _, w := range got {
			if !strings.Contains(cmd, w) || !strings.Contains(w, "/") || strings.HasSuffix(w, "/") {
				t.Fatalf("%q from %q", w, cmd)
			}
		}
	})
}

// The commands whose paths are computed as they run, and those that
// list names to read: their directories are read as trees (harvest).
func TestComputesPaths(t *testing.T) {
	for cmd, want := range map[string][2]bool{ // computesPaths, substitutes
		`d=~/app; cat $d/settings.toml | rev`:       {true, false},
		`cat "${d}/x"`:                              {true, false},
		`cd ~/app && cat $(ls -a | grep env) | rev`: {true, true},
		"cat `ls`": {true, true},
		`ls ~/app | while read f; do cat "$f"; done`: {true, true},
		`for f in ~/app/*; do rev "$f"; done`:        {true, true},
		`find ~/app -name '*.env' -exec cat {} \;`:   {true, true},
		`echo ~/app/x | xargs cat`:                   {true, true},
		`cat ~/app/.{env,ini}`:                       {true, false},
		`eval cat ~/app/.env`:                        {true, false},
		`awk '{print $2}' ~/app/app.ini`:             {false, false},
		`cat ~/app/.env | base64`:                    {false, false},
		`jq '{a: .b}' ~/x.json`:                      {false, false},
		`grep -E 'for|while' ~/x`:                    {false, false},
		`price=$5`:                                   {false, false},
	} {
		if got := [2]bool{computesPaths.MatchString(cmd), substitutes.MatchString(cmd)}; got != want {
			t.Errorf("%s: computesPaths, substitutes = %v, want %v", cmd, got, want)
		}
	}
}
