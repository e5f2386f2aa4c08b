package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport/ssh"
)

// searchTargets are this machine, the in-process SSH server and a real
// OpenSSH sshd, each with a scratch directory.
func searchTargets(t *testing.T) []target {
	t.Helper()
	tgs := targets(t)
	d := testenv.StartSSHD(t, testenv.SSHDOptions{})
	h := d.Host
	cfg := &ssh.HostConfig{
		Alias: h.Alias, HostName: "127.0.0.1", Port: h.Port, User: h.User,
		IdentityFiles: []string{h.IdentityFile}, IdentitiesOnly: true, IdentityAgent: "none",
		ConnectTimeout: 10 * time.Second, StrictHostKeyChecking: "yes", UserKnownHostsFiles: []string{h.KnownHosts},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := ssh.Dial(ctx, cfg, ssh.Options{})
	if err != nil {
		t.Fatalf("dial sshd: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	dir, err := os.MkdirTemp(h.Home, "search-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return append(tgs, target{"sshd", st, dir})
}

// searchCorpus copies semsearch's test corpus into dir/corpus, with a
// secret the policy protects (.env, *.key) and one it does not know is
// secret (a password assignment in a note).
func searchCorpus(t *testing.T, dir string) string {
	t.Helper()
	root := filepath.Join(dir, "corpus")
	if err := os.CopyFS(root, os.DirFS("../semsearch/testdata/corpus")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, ".env"), "DB_PASSWORD=envsecret-1\nrestore the database\n", 0o600)
	writeFile(t, filepath.Join(root, "deploy", "tls.key"), "-----BEGIN PRIVATE KEY-----\nrestore the database\n", 0o600)
	writeFile(t, filepath.Join(root, "docs", "notes.md"), "# Restore notes\nrestore the database with the admin account\ndb_password = notesecret-2\n", 0o644)
	return root
}

func embeddingClient(srv *testenv.LLMServer, model string) *llm.Client {
	return llm.New(llm.Config{BaseURL: srv.URL, Model: "gpt-4o-mini", Provider: llm.ProviderGeneric, EmbeddingModel: model})
}

// TestSemanticSearch searches the corpus on every target through the
// scripted server's embeddings: the known answer first, protected files
// skipped and named, secrets scrubbed from what is embedded, a second
// search embedding only the query, a changed file embedded alone.
func TestSemanticSearch(t *testing.T) {
	srv := testenv.StartLLMServer(t)
	emb, _ := embeddingClient(srv, "nomic-embed-text").Embedder()
	for _, tg := range searchTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			root := searchCorpus(t, tg.dir)
			cache := t.TempDir()
			reg := Default(testPolicy(), WithEmbedder(emb, ""), WithSearchCache(cache))
			before := srv.EmbeddedInputs()
			params := map[string]any{"query": "max_connections database clients", "path": root}
			out := runTool(t, tg.tr, reg, SemanticSearchName, params)
			if out.IsError {
				t.Fatalf("semantic_search: %s", out.Observation)
			}
			pg := filepath.Join(root, "etc/postgresql/postgresql.conf")
			first := strings.Index(out.Stdout, "\n1. ")
			if !strings.HasPrefix(out.Stdout, "Ranked by embeddings (nomic-embed-text): ") || first < 0 ||
				!strings.HasPrefix(out.Stdout[first+4:], pg+":1-") || !strings.Contains(out.Stdout, "max_connections = 200") {
				t.Fatalf("semantic_search:\n%s", out.Stdout)
			}
			for _, want := range []string{"2 protected by the safety policy (not read)", "1 binary"} {
				if !strings.Contains(out.Stdout, want) {
					t.Errorf("result lacks %q:\n%s", want, out.Stdout)
				}
			}
			for _, r := range srv.EmbeddingRequests() {
				for _, in := range r.Inputs {
					if strings.Contains(in, "envsecret-1") || strings.Contains(in, "notesecret-2") || strings.Contains(in, "PRIVATE KEY") {
						t.Fatalf("a secret was sent to the embeddings endpoint: %q", in)
					}
				}
			}
			firstInputs := srv.EmbeddedInputs() - before
			if firstInputs < 12 {
				t.Fatalf("first search embedded %d inputs", firstInputs)
			}

			before = srv.EmbeddedInputs()
			out = runTool(t, tg.tr, reg, SemanticSearchName, params)
			if got := srv.EmbeddedInputs() - before; got != 1 || !strings.Contains(out.Stdout, "0 files embedded now, 11 from the cache") {
				t.Fatalf("second search embedded %d inputs (want the query only):\n%s", got, out.Stdout)
			}

			p := filepath.Join(root, "docs/oncall.md")
			writeFile(t, p, "# On-call\n\nThe pager rotates weekly.\n", 0o644)
			future := time.Now().Add(time.Hour)
			os.Chtimes(p, future, future)
			before = srv.EmbeddedInputs()
			out = runTool(t, tg.tr, reg, SemanticSearchName, params)
			if got := srv.EmbeddedInputs() - before; got != 2 || !strings.Contains(out.Stdout, "1 files embedded now, 10 from the cache") {
				t.Fatalf("after one change: %d inputs embedded (want the query and the file's one passage):\n%s", got, out.Stdout)
			}
			srv.CheckNoRejections(t)
		})
	}
}

// TestSemanticSearchLexical: with no embeddings model (none configured,
// or the endpoint has none) the search ranks by BM25 and says why in its
// first line.
func TestSemanticSearchLexical(t *testing.T) {
	srv := testenv.StartLLMServer(t).SetEmbeddingModels()
	emb, _ := embeddingClient(srv, "nomic-embed-text").Embedder()
	tg := targets(t)[1] // over SSH
	root := searchCorpus(t, tg.dir)
	for _, c := range []struct {
		name string
		reg  *Registry
		line string
	}{
		{"none configured", Default(testPolicy()), "Ranked lexically (BM25), not by meaning: " + NoEmbedderReason + "."},
		{"endpoint without it", Default(testPolicy(), WithEmbedder(emb, "")), "Ranked lexically (BM25), not by meaning: the embeddings model nomic-embed-text failed: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := runTool(t, tg.tr, c.reg, SemanticSearchName, map[string]any{"query": "delete old compressed logs", "path": root, "top_k": 2, "glob": "*.sh"})
			if out.IsError || !strings.HasPrefix(out.Stdout, c.line) || !strings.Contains(out.Stdout, filepath.Join(root, "scripts/rotate.sh")+":1-") ||
				strings.Count(out.Stdout, " score ") != 1 {
				t.Fatalf("semantic_search:\n%s", out.Stdout)
			}
		})
	}
	if len(srv.EmbeddingRequests()) != 1 || srv.EmbeddingRequests()[0].Status != 404 {
		t.Fatalf("embedding requests %+v", srv.EmbeddingRequests())
	}
}

// TestSemanticSearchBadInput: each is a clear tool error and leaves no
// cache behind.
func TestSemanticSearchBadInput(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			root := searchCorpus(t, tg.dir)
			cache := t.TempDir()
			reg := Default(testPolicy(), WithSearchCache(cache))
			for _, c := range []struct {
				params map[string]any
				want   string
			}{
				{map[string]any{"query": "x", "path": filepath.Join(root, "logs/app.log")}, "is not a directory"},
				{map[string]any{"query": "x", "path": filepath.Join(root, "nope")}, "no such file or directory"},
				{map[string]any{"query": "  ", "path": root}, "query is empty"},
				{map[string]any{"path": root}, "query"},
				{map[string]any{"query": "x"}, "path"},
				{map[string]any{"query": "x", "path": root, "top_k": 500}, "top_k 500"},
				{map[string]any{"query": "x", "path": root, "glob": "[a-"}, "glob"},
				{map[string]any{"query": "x", "path": "~/.ssh"}, "does not read what the policy protects"},
				{map[string]any{"query": "x", "path": root + "/../.."}, ".."},
				{map[string]any{"query": "x", "path": "a\x00b"}, "NUL"},
			} {
				out := runTool(t, tg.tr, reg, SemanticSearchName, c.params)
				if !out.IsError || !strings.Contains(out.Observation, c.want) {
					t.Errorf("%v: %+v, want an error with %q", c.params, out, c.want)
				}
			}
			if ents, _ := os.ReadDir(cache); len(ents) != 0 {
				t.Errorf("bad input left %d cache entries", len(ents))
			}
		})
	}
}

func TestSemanticSearchTouches(t *testing.T) {
	call, err := Default(testPolicy()).Prepare(SemanticSearchName, map[string]any{"query": "x", "path": "~/src"})
	if err != nil {
		t.Fatal(err)
	}
	eff, ok, err := call.Touches()
	if err != nil || !ok || len(eff.Files) != 1 || eff.Files[0] != (Access{Op: safety.FileRead, Path: "~/src"}) {
		t.Fatalf("touches %+v %v %v", eff, ok, err)
	}
}
