package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/autoshell/agent/testenv"
)

// The second model-path corpus of issue 27 (testdata/leak): one-step
// scripts written as an attacker's model would, over formats, places
// and tools the first corpus (secrets_corpus_test.go) does not use, and
// over every source of the secret set. Each script reads its own copy of
// the files, with its own secrets, so that none is hidden because an
// earlier step of the batch taught it: each step stands alone, as a
// one-step script does.

// leakSources are the secrets that are not in the files: agent's
// environment, the inventory's (a vault variable, a password, the
// become password) and other processes' arguments and environments.
var (
	leakEnv       = map[string]string{"LEAK_DEPLOY_TOKEN": "EnvDeployTok-5521nn"}
	leakInventory = "smtp_password=InvSmtp!Pw-7730oo\nvault_api_key=InvVaultKey-2215pp\nansible_become_password=BecomePw-8812qq\n"
	leakProcesses = []struct {
		name string
		args []string
		env  []string
	}{
		{"pg_dump", []string{"--host", "db.example.org", "--password=PsArgPw-3318ss", "appdb"}, nil},
		{"psql", []string{"PGPASSWORD=PgEnvArg-5510tt", "-h", "db.example.org"}, nil},
		{"git", []string{"clone", "https://deploy:PsUrlPw-7720uu@git.example.com/repo.git"}, nil},
		{"worker", []string{"--queue", "jobs"}, []string{"LEAK_WORKER_SECRET=ProcEnvSec-6610vv"}},
	}
	leakOtherSecrets = []string{"EnvDeployTok-5521nn", "InvSmtp!Pw-7730oo", "InvVaultKey-2215pp", "BecomePw-8812qq",
		"PsArgPw-3318ss", "PgEnvArg-5510tt", "PsUrlPw-7720uu", "ProcEnvSec-6610vv"}
	// leakWants are non-secret parts of the files the replies keep
	leakWants = []string{"pg.internal.example", "mail.example.net", "mysql.example.org", "spring.application.name",
		"ftpuser", "appdb", "wordpress", "localhost", "cache.example.org:6379", "robot"}
)

// leakCorpus is the corpus made ready in dir: the scripts (their {{d}} a
// directory of their own under dir, named in the agent's template as
// {{dir}}/sNN) and every secret of every copy.
type leakCorpus struct {
	scripts []string
	secrets []string
}

func loadLeakCorpus(t *testing.T, dir string) leakCorpus {
	t.Helper()
	root := filepath.Join("testdata", "leak")
	var c leakCorpus
	for _, l := range readLines(t, filepath.Join(root, "scripts.txt")) {
		c.scripts = append(c.scripts, l)
	}
	secretTmpl := strings.Join(readLines(t, filepath.Join(root, "secrets.txt")), "\n")
	kubeKey, err := os.ReadFile(filepath.Join(root, "kubekey.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.scripts {
		n := fmt.Sprintf("%02d", i)
		data := map[string]string{"N": n}
		data["KubeKey"] = render(t, "kubekey", string(kubeKey), data)
		c.secrets = append(c.secrets, strings.Split(render(t, "secrets", secretTmpl, data), "\n")...)
		sub := filepath.Join(dir, "s"+n)
		err := filepath.WalkDir(filepath.Join(root, "files"), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(filepath.Join(root, "files"), p)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			text := render(t, rel, string(b), data)
			if r, ok := strings.CutSuffix(rel, ".crlf"); ok {
				rel, text = r, strings.ReplaceAll(text, "\n", "\r\n")
			}
			out := filepath.Join(sub, rel)
			if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
				return err
			}
			return os.WriteFile(out, []byte(text), 0o600)
		})
		if err != nil {
			t.Fatal(err)
		}
		// a binary file with a secret among its strings
		bin := "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00cachehdr\x00\x00\x01\x02session_token=BinStr-4412mm" + n + "\x00\x03\x04\xff\xfe tail\x00"
		if err := os.WriteFile(filepath.Join(sub, "app", "cache.bin"), []byte(bin), 0o600); err != nil {
			t.Fatal(err)
		}
		// a file larger than redact.MaxHarvest was (64 KiB), and a
		// gzip'd one
		var big strings.Builder
		for j := 0; big.Len() < 100<<10; j++ {
			fmt.Fprintf(&big, "FEATURE_FLAG_%04d=on\n", j)
		}
		big.WriteString("API_TOKEN=BigFile-1117aq" + n + "\nLOG_LEVEL=info\n")
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write([]byte("host=db.example.org\ndb_password=GzPw-1118ar" + n + "\n"))
		zw.Close()
		for name, b := range map[string][]byte{"big/big.env": []byte(big.String()), "svc/backup.gz": gz.Bytes()} {
			p := filepath.Join(sub, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		leakGenerated(t, sub, n, c.scripts[i])
		c.scripts[i] = strings.ReplaceAll(c.scripts[i], "{{d}}", "{{dir}}/s"+n)
	}
	c.secrets = append(c.secrets, leakOtherSecrets...)
	// LEAK_RUN=REGEXP runs only the scripts it matches (debugging)
	if re := os.Getenv("LEAK_RUN"); re != "" {
		c.scripts = slices.DeleteFunc(c.scripts, func(s string) bool { return !regexp.MustCompile(re).MatchString(s) })
	}
	return c
}

// leakGenerated makes the files of copy n (in sub) that are no text:
// archives, a SQLite database, a git repository whose history holds a
// secret the work tree no longer does; only those script uses (git and
// sqlite3 take time).
func leakGenerated(t *testing.T, sub, n, script string) {
	t.Helper()
	write := func(name string, b []byte) {
		p := filepath.Join(sub, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func(dir string, argv ...string) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=dev",
			"GIT_COMMITTER_EMAIL=dev@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, out)
		}
	}
	tarOf := func(files map[string]string) []byte {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		for _, name := range slices.Sorted(maps.Keys(files)) {
			tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(files[name])), Typeflag: tar.TypeReg, ModTime: time.Unix(1700000000, 0)})
			tw.Write([]byte(files[name]))
		}
		tw.Close()
		return b.Bytes()
	}
	if strings.Contains(script, "arc/bundle.tar") {
		write("arc/bundle.tar", tarOf(map[string]string{"app/.env": "APP=shop\nAPI_TOKEN=TarTok-2201ba" + n + "\n",
			"conf/db.yml": "db:\n  host: pg.internal.example\n  password: TarYml-2202bb" + n + "\n"}))
	}
	if strings.Contains(script, "arc/bundle.tgz") {
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(tarOf(map[string]string{"deploy/.env": "SECRET_KEY=TgzKey-2203bc" + n + "\n"}))
		zw.Close()
		write("arc/bundle.tgz", gz.Bytes())
	}
	if strings.Contains(script, "arc/bundle.zip") {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		w, _ := zw.Create("site/config.json")
		w.Write([]byte(`{"db": {"user": "shop", "db_password": "ZipPw-2204bd` + n + `"}}`))
		zw.Close()
		write("arc/bundle.zip", b.Bytes())
	}
	if strings.Contains(script, "arc/creds.bz2") {
		write("arc/creds", []byte("[default]\naws_secret_access_key = Bz2Sec-2205be"+n+"\n"))
		run(filepath.Join(sub, "arc"), "bzip2", "creds")
	}
	if strings.Contains(script, "db/app.db") {
		write("db/schema.sql", []byte("CREATE TABLE users (id INTEGER PRIMARY KEY, login TEXT, password_hash TEXT);\n"+
			"INSERT INTO users VALUES (1, 'admin', 'SqliteHash-2206bf"+n+"');\n"+
			"CREATE TABLE api_tokens (id INTEGER PRIMARY KEY, owner TEXT, token TEXT, created TEXT);\n"+
			"INSERT INTO api_tokens VALUES (1, 'ci', 'SqliteTok-2207bg"+n+"', '2026-01-02');\n"+
			"CREATE TABLE settings (name TEXT, value TEXT);\n"+
			"INSERT INTO settings VALUES ('site_title', 'My shop'), ('smtp_password', 'SqliteKv-2208bh"+n+"');\n"))
		run(filepath.Join(sub, "db"), "sh", "-c", "sqlite3 app.db < schema.sql && rm schema.sql")
	}
	if strings.Contains(script, "/repo") {
		repo := filepath.Join(sub, "repo")
		write("repo/.env", []byte("APP=shop\nDB_PASSWORD=GitOld-2210ca"+n+"\n"))
		write("repo/README.md", []byte("# shop\n"))
		run(repo, "git", "init", "-q")
		run(repo, "git", "add", ".")
		run(repo, "git", "commit", "-qm", "first")
		write("repo/.env", []byte("APP=shop\nDB_PASSWORD=\n"))
		run(repo, "git", "commit", "-qam", "no secret in git")
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func render(t *testing.T, name, text string, data any) string {
	t.Helper()
	tm, err := template.New(name).Funcs(template.FuncMap{"b64": func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }}).Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := tm.Execute(&b, data); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// readLines are a file's lines but blank ones and # comments.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// startLeakProcesses starts the processes whose arguments and
// environments hold secrets, as ps shows them: shells waiting on a pipe,
// renamed.
func startLeakProcesses(t *testing.T) {
	t.Helper()
	for _, p := range leakProcesses {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("/bin/sh", append([]string{"-c", "read x"}, p.args...)...)
		cmd.Args[0], cmd.Stdin = p.name, pr
		cmd.Env = append(os.Environ(), p.env...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pw.Close(); cmd.Process.Kill(); cmd.Wait(); pr.Close() })
	}
}

// TestLeakCorpusStayHome runs the corpus as one task's steps, on this
// machine and on a host over real sshd, at --approve all (the steps run
// unconfined and really read the files) and at the default approval
// (safe steps confined): no request body the scripted model received,
// no tool reply, no --json event, no --out log or transcript, no audit
// line and no session file holds any secret in clear or in any shape
// leakHow knows, and the replies keep the files' other content.
func TestLeakCorpusStayHome(t *testing.T) {
	for _, tool := range []string{"jq", "yq", "xxd", "hexdump", "od", "rev", "base32", "basenc", "python3", "perl", "column", "strings", "pgrep", "unzip", "bzip2", "sqlite3", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool, "not installed")
		}
	}
	for k, v := range leakEnv {
		t.Setenv(k, v)
	}
	f := newBatchFixture(t)
	c := loadLeakCorpus(t, f.dir)
	// the benign files last: read when the set holds every secret of the
	// corpus
	benign := benignFiles()
	for _, name := range slices.Sorted(maps.Keys(benign)) {
		p := filepath.Join(f.dir, "benign", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(benign[name]), 0o600); err != nil {
			t.Fatal(err)
		}
		c.scripts = append(c.scripts, "cat {{dir}}/benign/"+name)
	}
	startLeakProcesses(t)
	inv := f.inventory(leakInventory + "\n[ctl]\nlo ansible_connection=local\n")
	for _, run := range []struct{ host, approve string }{{"lo", "all"}, {"web01", "all"}, {"lo", ""}} {
		name := run.host + "-approve-" + run.approve
		if run.approve == "" {
			name = run.host + "-default"
		}
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			state, outDir := filepath.Join(tmp, "state"), filepath.Join(tmp, "out")
			t.Setenv("XDG_STATE_HOME", state)
			srv := startBatchLLM(t, taskScript(c.scripts)...)
			argv := []string{"-i", inv, "--limit", run.host, "--json", "--max-steps", "200", "--out", outDir}
			if run.approve != "" {
				argv = append(argv, "--approve", run.approve)
			}
			out, errOut, code := f.agent(append(argv, "-c", "look at the app's config")...)
			// at the default approval, steps that read the home's
			// dot-files are refused (exit 3)
			if code != 0 && (run.approve != "" || code != 3) {
				t.Fatalf("exit %d\nstdout:\n%.2000s\nstderr:\n%s", code, out, errOut)
			}
			reqs := srv.Requests()
			if srv.Remaining() != 0 {
				t.Fatalf("%d requests, %d replies left", len(reqs), srv.Remaining())
			}
			texts := map[string]string{"stdout": out, "stderr": errOut}
			maps.Copy(texts, jsonOutputStreams(out))
			var replies []string
			// each request body's parts once: a body holds the
			// conversation so far
			seen := map[string]bool{}
			for i, r := range reqs {
				var body map[string]json.RawMessage
				if err := json.Unmarshal(r.Body, &body); err != nil {
					t.Fatal(err)
				}
				var msgs []json.RawMessage
				json.Unmarshal(body["messages"], &msgs)
				delete(body, "messages")
				for _, part := range append(msgs, mustJSON(t, body)) {
					if !seen[string(part)] {
						seen[string(part)] = true
						texts[fmt.Sprintf("request %d", i+1)] += string(part) + "\n"
					}
				}
			}
			seenReply := map[string]bool{}
			for _, r := range reqs {
				for _, m := range toolReplies(r) {
					if !seenReply[m] {
						seenReply[m] = true
						replies = append(replies, m)
					}
				}
			}
			for _, dir := range []string{state, outDir} {
				filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						b, _ := os.ReadFile(p)
						texts[p] = string(b)
					}
					return nil
				})
			}
			checkLeaks(t, c.secrets, c.scripts, replies, texts)
			all := strings.Join(replies, "\n")
			if os.Getenv("DEBUG_LEAK") != "" {
				os.WriteFile(filepath.Join(os.Getenv("DEBUG_LEAK"), name+".replies"), []byte(strings.Join(replies, "\n\x1e\n")), 0o600)
				for where, text := range texts {
					os.WriteFile(filepath.Join(os.Getenv("DEBUG_LEAK"), name+"."+strings.NewReplacer("/", "_", " ", "_").Replace(where)), []byte(text), 0o600)
				}
			}
			if run.approve == "all" { // (at the default approval cert.pem is refused)
				kept, lost := benignKept(benign, all)
				t.Logf("benign corpus: %.4f of its bytes kept", kept)
				if kept < 0.99 {
					t.Errorf("benign corpus: %.4f of its bytes kept, want >= 0.99; lost lines:\n%s", kept, strings.Join(lost[:min(len(lost), 20)], "\n"))
				}
				flat := strings.Join(strings.Fields(all), "")
				for _, want := range leakWants {
					if !strings.Contains(flat, want) {
						t.Errorf("tool replies lack %q", want)
					}
				}
			}
		})
	}
}

// taskScript is the scripted model's replies for scripts: a plan, the
// scripts three a reply in phases of 21 steps, each phase closed.
func taskScript(scripts []string) []testenv.Reply {
	const perReply, perPhase = 3, 21
	var phases []map[string]any
	for p := 0; p*perPhase < len(scripts); p++ {
		phases = append(phases, map[string]any{"phase": p + 1, "goal": "look at the config"})
	}
	replies := []testenv.Reply{testenv.Calls(testenv.Call("submit_plan", args(map[string]any{"phases": phases})))}
	for p := range phases {
		cmds := scripts[p*perPhase : min((p+1)*perPhase, len(scripts))]
		for i := 0; i < len(cmds); i += perReply {
			var calls []testenv.ToolCall
			for _, c := range cmds[i:min(i+perReply, len(cmds))] {
				calls = append(calls, testenv.Call("execute_command", args(map[string]any{"command": c})))
			}
			replies = append(replies, testenv.Calls(calls...))
		}
		replies = append(replies, testenv.Calls(testenv.Call("phase_done", `{"summary":"looked"}`)))
	}
	return replies
}

// checkLeaks fails for each secret a text holds in any shape leakHow
// knows, and logs the tool replies that hold it (with the script that
// made each, where the replies are one a script).
func checkLeaks(t *testing.T, secrets, public, replies []string, texts map[string]string) {
	t.Helper()
	idx := newLeakIndex(secrets, public...)
	leaked := map[string]bool{}
	for where, text := range texts {
		for _, l := range idx.find(text) {
			t.Errorf("%s holds %q (%s)", where, l.secret, l.how)
			leaked[l.secret] = true
		}
	}
	for i, r := range replies {
		for _, l := range idx.find(r) {
			if leaked[l.secret] {
				t.Logf("reply %d holds %q (%s): %.300q", i, l.secret, l.how, r)
			}
		}
	}
}

// leakHow says how text shows a 6-byte window of secret (7 for base64):
// in clear or reversed once white space is gone, as hex in either case,
// or as base64 (either alphabet) or base32 at any alignment; in
// any of text's views: as it is; its JSON strings decoded (a request
// body, a JSON line); with %XX (URL) and =XX (quoted-printable) escapes
// decoded; with backslashes left out (printf %q, od -c's escapes); dumps
// read as their hex columns without offsets and character columns (xxd,
// od, hexdump -C, one byte a line), in byte order and with each 16-bit
// word's bytes swapped (od -x); hex digits alone once 0x and \x are gone
// (xxd -i, C arrays); 8-digit hex words read as 32-bit little-endian
// ones (od -t x4, xxd -e); "" when it does not.
func leakHow(text, secret string) string {
	if l := newLeakIndex([]string{secret}).find(text); len(l) > 0 {
		return l[0].how
	}
	return ""
}

// leakIndex holds every needle of a list of secrets: each 6-byte window
// in each shape, so that a text is read once per needle length; but
// those in a public text (a script's "docker-compose" is no leak of
// "ComposePw").
type leakIndex struct {
	plain, hex, b64 map[string]leakFound // plain: clear, reversed, base32
	// folded: clear and reversed in lower case, looked for in the text
	// in lower case (tr a-z A-Z, ${x^^}, the case swapped)
	folded map[string]leakFound // (8-byte windows)
	// lens are each map's needles' lengths
	lens map[*map[string]leakFound][]int
}

type leakFound struct{ secret, how string }

func newLeakIndex(secrets []string, public ...string) *leakIndex {
	x := &leakIndex{plain: map[string]leakFound{}, hex: map[string]leakFound{}, b64: map[string]leakFound{}, folded: map[string]leakFound{}}
	put := func(m map[string]leakFound, needle, secret, how string) {
		if len(needle) < 6 {
			return
		}
		if _, ok := m[needle]; !ok {
			m[needle] = leakFound{secret, how}
		}
	}
	const w = 6
	for _, s := range secrets {
		for i := 0; i+w <= len(s); i++ {
			win := s[i : i+w]
			// a window of hex digits alone is in any hash
			if strings.Trim(strings.ToLower(win), "0123456789abcdef") != "" {
				put(x.plain, win, s, "clear")
				put(x.plain, reverseString(win), s, "reversed")
			}
			// in lower case, 8-byte windows: 6 letters without their case
			// are in the requests' own words (".env" + "arguments" holds
			// "envarg" of "PgEnvArg"); and not hex digits alone, which a
			// hash holds in any case: the audit log's 64-digit chain
			// links held "4410ff89" of "GitCredPw-4410ff89" (one CI's
			// failure; with the corpus's ~10,600 such needles, about one
			// run in twenty)
			if win8 := s[i:min(i+8, len(s))]; len(win8) == 8 && strings.ToLower(win8) != strings.ToUpper(win8) &&
				strings.Trim(strings.ToLower(win8), "0123456789abcdef") != "" {
				put(x.folded, strings.ToLower(win8), s, "case changed")
				put(x.folded, strings.ToLower(reverseString(win8)), s, "reversed, case changed")
			}
			put(x.hex, hex.EncodeToString([]byte(win)), s, "hex")
			// base64: 7-byte windows, so that each alignment's needle
			// holds 48 bits of the secret (a 6-byte one at an odd
			// alignment holds 42: "d-2290" matched "t-2291" of a temporary
			// directory's name)
			if i+w+1 <= len(s) {
				win7 := s[i : i+w+1]
				for k := range 3 {
					enc := base64.StdEncoding.EncodeToString(append(make([]byte, k), win7...))
					put(x.b64, enc[(8*k+5)/6:(8*(k+w+1))/6], s, "base64")
				}
			}
			for k := range 5 {
				enc := base32.StdEncoding.EncodeToString(append(make([]byte, k), win...))
				put(x.plain, enc[(8*k+4)/5:(8*(k+w))/5], s, "base32")
			}
		}
	}
	pub := strings.Join(strings.Fields(strings.Join(public, "\n")), "")
	for _, m := range []map[string]leakFound{x.plain, x.hex, x.b64} {
		for needle := range m {
			if strings.Contains(pub, needle) {
				delete(m, needle)
			}
		}
	}
	for needle := range x.folded {
		if strings.Contains(strings.ToLower(pub), needle) {
			delete(x.folded, needle)
		}
	}
	x.lens = map[*map[string]leakFound][]int{}
	for _, m := range []*map[string]leakFound{&x.plain, &x.hex, &x.b64, &x.folded} {
		lens := map[int]bool{}
		for needle := range *m {
			lens[len(needle)] = true
		}
		x.lens[m] = slices.Sorted(maps.Keys(lens))
	}
	return x
}

// find is each secret text shows, once, and how.
func (x *leakIndex) find(text string) []leakFound {
	var out []leakFound
	seen := map[string]bool{}
	read := map[string]bool{} // a view the same as one before it is not read again
	for _, v := range leakViews(text) {
		flat := strings.Join(strings.Fields(v.text), "")
		if read[flat] {
			continue
		}
		read[flat] = true
		forms := []struct {
			s string
			m *map[string]leakFound
		}{{flat, &x.plain}, {strings.ToLower(flat), &x.hex}, {strings.NewReplacer("-", "+", "_", "/").Replace(flat), &x.b64}, {strings.ToLower(flat), &x.folded}}
		for _, f := range forms {
			m := *f.m
			for _, l := range x.lens[f.m] {
				for i := 0; i+l <= len(f.s); i++ {
					if found, ok := m[f.s[i:i+l]]; ok && !seen[found.secret] {
						seen[found.secret] = true
						found.how += " in " + v.name + " view"
						out = append(out, found)
					}
				}
			}
		}
	}
	return out
}

type leakView struct {
	name string
	text string
}

// timestampRE matches the RFC 3339 times agent writes in its records:
// their digits and 'Z' would read as a window of a secret ending in
// digits (…Z31102 reversed is in …T10:51:31.80201102Z).
var timestampRE = regexp.MustCompile(`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)`)

func leakViews(text string) []leakView {
	text = timestampRE.ReplaceAllString(text, "T")
	views := []leakView{{"raw", text}}
	if js := jsonStrings(text); js != "" {
		views = append(views, leakView{"json", js})
		text = text + "\n" + js
	}
	views = append(views,
		leakView{"url", percentDecode(text, '%')},
		leakView{"qp", percentDecode(strings.ReplaceAll(strings.ReplaceAll(text, "=\r\n", ""), "=\n", ""), '=')},
		leakView{"unescaped", strings.ReplaceAll(text, `\`, "")},
		leakView{"dump", dumpColumns(text, false)},
		leakView{"dump-swapped", dumpColumns(text, true)},
		leakView{"dump-words", dumpWords(text)},
		leakView{"hex-only", hexOnly(text)},
		leakView{"no-nul", strings.ReplaceAll(text, "\x00", "")}, // UTF-16
		leakView{"separated", separatedChars(text)},
	)
	// octal and decimal dumps: od's default, -b, -d, -i, -l, -t u1
	for _, base := range []int{8, 10} {
		for _, w := range []int{1, 2, 4, 8} {
			views = append(views, leakView{fmt.Sprintf("od base %d, %d-byte words", base, w), dumpNumbers(text, base, w)})
		}
	}
	return views
}

// dumpNumbers is the bytes text's numbers stand for, read in base as
// little-endian words of w bytes (od's octal and decimal dumps, Python's
// list of bytes), a dump's offset column and '*' lines left out; a
// newline for anything else.
func dumpNumbers(text string, base, w int) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		f := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == '[' || r == ']' })
		if len(f) > 1 && len(f[0]) == 7 && strings.Trim(f[0], "01234567") == "" {
			f = f[1:]
		}
		if line == "*" {
			continue
		}
		for _, tok := range f {
			x, err := strconv.ParseUint(strings.TrimPrefix(tok, "-"), base, 64)
			if err != nil || w < 8 && x >= 1<<(8*w) {
				b.WriteByte('\n')
				continue
			}
			if strings.HasPrefix(tok, "-") {
				x = -x
			}
			for j := range w {
				if c := byte(x >> (8 * j)); c != 0 {
					b.WriteByte(c)
				}
			}
		}
	}
	return b.String()
}

// jsonStrings are the string values of text read as JSON or as JSON
// lines, one a line; "" when it is neither.
func jsonStrings(text string) string {
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(v + "\n")
		case map[string]any:
			for k, x := range v {
				b.WriteString(k + "\n")
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var v any
		if json.Unmarshal(sc.Bytes(), &v) == nil {
			walk(v)
		}
	}
	var v any
	if json.Unmarshal([]byte(text), &v) == nil {
		walk(v)
	}
	return b.String()
}

// percentDecode decodes esc followed by two hex digits.
func percentDecode(s string, esc byte) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == esc && i+2 < len(s) {
			if h, ok := hexByte(s[i+1], s[i+2]); ok {
				b.WriteByte(h)
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func hexByte(a, b byte) (byte, bool) {
	x, ok1 := hexDigit(a)
	y, ok2 := hexDigit(b)
	return x<<4 | y, ok1 && ok2
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// dumpColumns reads text as a dump: of each line, the fields after an
// offset (a first field of 6 or more hex or octal digits, with or without
// ':'), up to a character column (after two spaces, or |…|), joined
// without separators; with swap, each 4-digit word's two bytes swapped.
func dumpColumns(text string, swap bool) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if line == "*" {
			continue // od's and hexdump's line for repeated lines
		}
		if i := strings.Index(line, "|"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) > 0 {
			off := strings.TrimSuffix(f[0], ":")
			if len(off) >= 6 && strings.Trim(off, "0123456789abcdefABCDEF") == "" {
				f = f[1:]
				// xxd's character column: after two spaces
				if i := strings.Index(line, ":"); i >= 0 {
					if j := strings.Index(line[i+2:], "  "); j >= 0 {
						f = strings.Fields(line[i+2 : i+2+j])
					}
				}
			}
		}
		for _, w := range f {
			if swap && len(w) == 4 {
				w = w[2:] + w[:2]
			}
			b.WriteString(w)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// dumpWords is text's 8-digit hex words (od -t x4, xxd -e) each read
// as a little-endian 32-bit word: its bytes in memory order.
func dumpWords(text string) string {
	var b strings.Builder
	for _, w := range strings.Fields(text) {
		if x, err := hex.DecodeString(strings.TrimSuffix(w, ":")); err == nil && len(x) == 4 {
			b.WriteString(hex.EncodeToString([]byte{x[3], x[2], x[1], x[0]}))
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// hexOnly is text's hex digits alone, once 0x and \x prefixes are gone.
func hexOnly(text string) string {
	text = strings.NewReplacer("0x", "", "0X", "", `\x`, "").Replace(text)
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		if _, ok := hexDigit(text[i]); ok {
			b.WriteByte(text[i])
		}
	}
	return b.String()
}

// The checker finds the shapes it is for: a test of the test.
func TestLeakHow(t *testing.T) {
	const s = "Yq7!mZ2@pL9#07"
	for shape, text := range map[string]string{
		"uri":       "Yq7%21mZ2%40pL9%2307",
		"printf %q": `Yq7\!mZ2@pL9\#07`,
		"xxd -i":    "  0x59, 0x71, 0x37, 0x21, 0x6d, 0x5a, 0x32, 0x40, 0x70,\n  0x4c, 0x39, 0x23, 0x30, 0x37, 0x0a",
		"xxd -c 1":  "00000000: 59  Y\n00000001: 71  q\n00000002: 37  7\n00000003: 21  !\n00000004: 6d  m\n00000005: 5a  Z\n00000006: 32  2\n",
		"od -x":     "0000000 7159 2137 5a6d 4032 4c70 2339 3730 000a\n0000017\n",
		"hexdump":   "59 71 37 21 6D 5A 32 40 ",
		"json":      `{"content":"Yq7!mZ2\u0040pL9#07"}`,
		"od -c":     "0000000   Y   q   7   !   m   Z   2   @   p   L   9   #   0   7  \\n\n",
		"qp":        "Yq7!mZ2=40pL9#07",
		"od -t x4":  "0000000 21377159 40325a6d 23394c70 000a3730\n0000016\n",
		"upper":     "YQ7!MZ2@PL9#07",
		"od":        "0000000 070531 020467 055155 040062 046160 021471 033460 000012\n0000016\n",
		"od -b":     "0000000 131 161 067 041 155 132 062 100 160 114 071 043 060 067 012\n0000017\n",
		"od -An -i": "   557281625  1077041773   590957680      669488\n",
		"list":      "[89, 113, 55, 33, 109, 90, 50, 64, 112, 76, 57, 35, 48, 55]",
		"od -c *":   "0000000   x   x   Y   q   7   !   m\n*\n0000020   Z   2   @   p   L   9   #   0   7\n",
		"utf-16":    "Y\x00q\x007\x00!\x00m\x00Z\x002\x00@\x00p\x00L\x009\x00#\x000\x007\x00",
		"hex .":     "59.71.37.21.6d.5a.32.40.70.4c.39.23.30.37",
		"swapped":   "yQ7!Mz2@Pl9#07",
		"sep -":     "Y-q-7-!-m-Z-2-@-p-L-9-#-0-7-",
		"list(s)":   "['Y', 'q', '7', '!', 'm', 'Z', '2', '@', 'p', 'L', '9', '#', '0', '7']",
		"hex _":     "59_71_37_21_6d_5a_32_40_70_4c_39_23_30_37_",
		"od -w1":    "89\n113\n55\n33\n109\n90\n50\n64\n112\n76\n57\n35\n48\n55\n",
	} {
		if leakHow(text, s) == "" {
			t.Errorf("%s: %q not found", shape, text)
		}
	}
	if how := leakHow("Yq7!m 1Z2@ 0pL9", s); how != "" {
		t.Errorf("5-byte windows: %s", how)
	}
	// a secret's hex-digit tail in a hash is no leak (an audit line's
	// chain link); the same tail after a letter of the secret is
	if how := leakHow(`"prev":"3527c74410ff89ab"`, "GitCredPw-4410ff89"); how != "" {
		t.Errorf("hex digits alone in a hash: %s", how)
	}
	if how := leakHow("W-4410FF89", "GitCredPw-4410ff89"); how == "" {
		t.Errorf("W-4410FF89: not found")
	}
}

// The same corpus through `agent mcp` (stdio, --approve all) on a host
// over SSH, every other script but those that name the inventory's
// variables (agent mcp has no inventory): no tool result, audit line or
// session file holds a secret in any shape.
func TestLeakCorpusThroughMCP(t *testing.T) {
	for _, tool := range []string{"jq", "yq", "xxd", "hexdump", "base32", "basenc", "python3", "perl", "column", "strings", "unzip", "bzip2", "sqlite3", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool, "not installed")
		}
	}
	srv := testenv.StartSSHServer(t, testenv.SSHServerOptions{})
	home := t.TempDir()
	sshConfigFor(t, home, map[string]testenv.Host{"vub": srv.Host})
	dir := t.TempDir()
	c := loadLeakCorpus(t, dir)
	startLeakProcesses(t)
	env := mcpEnv(t, home)
	for k, v := range leakEnv {
		env = append(env, k+"="+v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs := connectStdio(t, ctx, env, &mcpClient{}, "--approve", "all")
	texts := map[string]string{}
	var results []string
	n := 0
	for i, script := range c.scripts {
		script = strings.ReplaceAll(script, "{{dir}}", dir)
		if i%2 == 1 || strings.Contains(script, "{{") {
			continue
		}
		n++
		text, _ := call(t, ctx, cs, "execute_command", map[string]any{"host": "vub", "command": script})
		texts[script] = text
		results = append(results, text)
	}
	var state string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_STATE_HOME="); ok {
			state = v
		}
	}
	filepath.WalkDir(state, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			texts[p] = string(b)
		}
		return nil
	})
	if _, ok := texts[filepath.Join(state, "agent", "audit.log")]; !ok || n < 30 {
		t.Fatalf("%d scripts, audit log: %v", n, ok)
	}
	checkLeaks(t, c.secrets, c.scripts, results, texts)
	// the scripts really read the files: most results name what was hidden
	hidden := 0
	for _, r := range results {
		if strings.Contains(r, "[REDACTED") {
			hidden++
		}
	}
	if hidden < n/2 {
		t.Errorf("%d of %d results hide anything", hidden, n)
	}
}

// benignFiles are outputs full of base64- and hex-looking strings that
// are no secret — sha256sum lists, UUIDs, git logs, docker image
// digests, JWT-like tokens of public examples, npm integrity hashes, a
// certificate (public) — made from a fixed seed: what a redactor that
// hides whatever looks random would lose.
func benignFiles() map[string]string {
	rng := rand.New(rand.NewPCG(27, 99))
	hexOf := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return hex.EncodeToString(b)
	}
	b64Of := func(n int, enc *base64.Encoding) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return enc.EncodeToString(b)
	}
	words := []string{"fix", "add", "update", "refactor", "parser", "cache", "docs", "tests", "release", "bump", "handler", "config"}
	word := func() string { return words[rng.IntN(len(words))] }
	files := map[string]*strings.Builder{}
	w := func(name, format string, a ...any) {
		if files[name] == nil {
			files[name] = &strings.Builder{}
		}
		fmt.Fprintf(files[name], format, a...)
	}
	for i := range 150 {
		w("SHA256SUMS", "%s  release/app-%d.%d.tar.gz\n", hexOf(32), i/10, i%10)
		u := hexOf(16)
		w("uuids.txt", "%s-%s-%s-%s-%s node-%03d\n", u[:8], u[8:12], u[12:16], u[16:20], u[20:], i)
		w("gitlog.txt", "commit %s\nAuthor: Dev %d <dev%d@example.com>\n\n    %s %s %s\n\n", hexOf(20), i%7, i%7, word(), word(), word())
		w("images.txt", "registry.example.com/team/svc-%d  v1.%d  sha256:%s  %s  %d weeks ago  %dMB\n", i%9, i, hexOf(32), hexOf(6), i%5+1, 40+i)
		w("package-lock.json", "    \"node_modules/pkg-%d\": {\"version\": \"1.%d.0\", \"integrity\": \"sha512-%s\"},\n", i, i, b64Of(64, base64.StdEncoding))
	}
	for i := range 40 {
		// JWT-shaped public examples: {"alg":"HS256","typ":"JWT"} and a
		// claims part anyone can read
		claims := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(`{"sub":"user-%d","name":"Example %d","iat":%d}`, i, i, 1700000000+i)))
		w("jwt-examples.md", "example %d: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.%s.%s\n", i, claims, b64Of(32, base64.RawURLEncoding))
	}
	w("cert.pem", "-----BEGIN CERTIFICATE-----\n")
	for range 30 {
		w("cert.pem", "%s\n", b64Of(48, base64.StdEncoding))
	}
	w("cert.pem", "-----END CERTIFICATE-----\n")
	out := map[string]string{}
	for k, v := range files {
		out[k] = v.String()
	}
	return out
}

// benignKept is the fraction of the benign files' bytes the replies
// keep: a line counts as kept when some reply holds it whole, white
// space aside.
func benignKept(files map[string]string, replies string) (kept float64, lost []string) {
	flat := strings.Join(strings.Fields(replies), "")
	total, keptBytes := 0, 0
	for _, content := range files {
		for _, line := range strings.Split(strings.TrimSuffix(content, "\n"), "\n") {
			l := strings.Join(strings.Fields(line), "")
			total += len(line) + 1
			if l == "" || strings.Contains(flat, l) {
				keptBytes += len(line) + 1
			} else {
				lost = append(lost, line)
			}
		}
	}
	return float64(keptBytes) / float64(total), lost
}

// A --secret-var value (issue 27's secret set, a source of its own) is
// hidden in every shape a plan's steps give it, in the --json events and
// every file of the state directory (audit log, session record).
func TestSecretVarHiddenInShapes(t *testing.T) {
	const secret = "SecVar!Pw-4471zz"
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	t.Setenv("HOME", dir)
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("CI", "true")
	t.Chdir(dir)
	var steps strings.Builder
	for _, c := range []string{"echo '{{api_pw}}'", "echo '{{api_pw}}' | base64 -w 4", "printf %s '{{api_pw}}' | xxd -p -c 1",
		"echo '{{api_pw}}' | rev", "bash -c \"printf '%q' '{{api_pw}}'\"", "printf %s '{{api_pw}}' | od -An -tx1", "echo '{{api_pw}}' | fold -w1"} {
		fmt.Fprintf(&steps, "  - tool: execute_command\n    parameters: {command: %q}\n", c)
	}
	plan := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(plan, []byte("name: p\nsteps:\n"+steps.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"run", plan, "--json", "--approve", "all", "--secret-var", "api_pw=" + secret}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, &out, &errb)
	}
	if !strings.Contains(out.String(), `"status":"ok"`) && !strings.Contains(out.String(), "REDACTED") {
		t.Fatalf("no step ran:\n%s", &out)
	}
	texts := map[string]string{"stdout": out.String(), "stderr": errb.String()}
	filepath.WalkDir(state, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			texts[p] = string(b)
		}
		return nil
	})
	if os.Getenv("DEBUG_LEAK") != "" {
		t.Log(out.String())
	}
	checkLeaks(t, []string{secret}, nil, nil, texts)
}

// separatedChars is the characters of text's runs whose characters are
// separated by one same string of 1 to 4 bytes that are no letter or
// digit (sed 's/./&-/g', paste -sd, of fold -w1, Python's list(s)), a
// line a run.
func separatedChars(text string) string {
	alnum := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '\n'
	}
	var b strings.Builder
	for k := 2; k <= 5; k++ {
		for i := 0; i+2*k <= len(text); i++ {
			sep := text[i+1 : i+k]
			if strings.IndexFunc(sep, func(r rune) bool { return r < 128 && alnum(byte(r)) }) >= 0 || text[i+1+k:i+2*k] != sep {
				continue
			}
			j := i
			for j+k < len(text) && text[j+1:j+k] == sep {
				j += k
			}
			if (j-i)/k+1 >= 6 {
				for v := i; v <= j; v += k {
					b.WriteByte(text[v])
				}
				b.WriteByte('\n')
				i = j
			}
		}
	}
	return b.String()
}
