// Command searchbench measures semantic_search (package semsearch): its
// recall@5 on the known answers of semsearch/testdata, ranked by the
// scripted server's embeddings and by BM25, and the cost of indexing
// 10,000 lines over SSH (a real OpenSSH sshd on loopback): the first
// search (every passage embedded), a repeated one (the cache: only the
// query), one with a file changed, and BM25 — against `ssh grep -rl` of
// one word over the same files, the lexical peer an operator would use.
// Medians of -n runs; the load average before and after (the machine is
// shared).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/semsearch"
	"github.com/autoshell/agent/testenv"
	"github.com/autoshell/agent/transport"
	sshtr "github.com/autoshell/agent/transport/ssh"
)

func main() {
	n := flag.Int("n", 5, "runs per measure")
	lines := flag.Int("lines", 10000, "lines to index over SSH")
	data := flag.String("testdata", "semsearch/testdata", "the corpus and its queries")
	flag.Parse()
	if err := run(*data, *n, *lines); err != nil {
		fmt.Fprintln(os.Stderr, "searchbench:", err)
		os.Exit(1)
	}
}

func run(data string, n, lines int) error {
	fmt.Printf("load average before: %s\n", loadavg())
	srv, err := testenv.NewLLMServer()
	if err != nil {
		return err
	}
	defer srv.Close()
	client := llm.New(llm.Config{BaseURL: srv.URL, Model: "gpt-4o-mini", EmbeddingModel: "nomic-embed-text", Provider: llm.ProviderGeneric})
	emb, _ := client.Embedder()
	if err := recall(data, emb); err != nil {
		return err
	}

	d, err := testenv.NewSSHD(testenv.SSHDOptions{})
	if err != nil {
		return err
	}
	defer d.Close()
	ctx := context.Background()
	tr, err := dial(ctx, d.Host)
	if err != nil {
		return err
	}
	defer tr.Close()
	dir, err := os.MkdirTemp(d.Host.Home, "searchbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	files := writeCorpus(dir, lines)
	cache, err := os.MkdirTemp("", "searchbench-cache")
	if err != nil {
		return err
	}
	defer os.RemoveAll(cache)

	query := "rotate the compressed logs of the payment service"
	search := func(e semsearch.Embedder, cacheDir string) (*semsearch.Result, time.Duration, error) {
		start := time.Now()
		res, err := semsearch.Search(ctx, files2{tr}, semsearch.Options{Root: dir, Query: query, Embedder: e, NoEmbedder: "bench", CacheDir: cacheDir, Host: "bench"})
		return res, time.Since(start), err
	}
	var cold, warm, changed, lexical, peer []time.Duration
	var inputs int
	for i := 0; i < n; i++ {
		os.RemoveAll(cache)
		before := srv.EmbeddedInputs()
		_, t, err := search(emb, cache)
		if err != nil {
			return err
		}
		cold, inputs = append(cold, t), srv.EmbeddedInputs()-before
		before = srv.EmbeddedInputs()
		res, t, err := search(emb, cache)
		if err != nil {
			return err
		}
		if res.Embedded != 0 || srv.EmbeddedInputs()-before != 1 {
			return fmt.Errorf("a repeated search embedded %d files", res.Embedded)
		}
		warm = append(warm, t)
		f := filepath.Join(dir, fmt.Sprintf("svc%02d", i%10), "notes.md")
		os.WriteFile(f, []byte(fmt.Sprintf("changed %d\nrotate logs\n", i)), 0o644)
		future := time.Now().Add(time.Duration(i+1) * time.Hour)
		os.Chtimes(f, future, future)
		if res, t, err = search(emb, cache); err != nil {
			return err
		} else if res.Embedded != 1 {
			return fmt.Errorf("one file changed, %d embedded", res.Embedded)
		}
		changed = append(changed, t)
		if _, t, err = search(nil, ""); err != nil {
			return err
		}
		lexical = append(lexical, t)
		start := time.Now()
		out, err := exec.Command("ssh", "-F", d.Host.SSHConfig, d.Host.Alias, "grep", "-rl", "compressed", dir).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ssh grep: %v: %s", err, out)
		}
		peer = append(peer, time.Since(start))
	}
	fmt.Printf("load average after:  %s\n", loadavg())
	fmt.Printf("\nindexing %d lines in %d files over SSH (real sshd, loopback), %d runs:\n", lines, files.count, n)
	fmt.Printf("%-44s %10s %10s %10s\n", "", "p25", "median", "p75")
	for _, r := range []struct {
		name string
		d    []time.Duration
	}{
		{fmt.Sprintf("semantic, cold (%d passages embedded)", inputs-1), cold},
		{"semantic, cached (the query only)", warm},
		{"semantic, one file changed", changed},
		{"BM25 (reads every file)", lexical},
		{"peer: ssh grep -rl (one word)", peer},
	} {
		fmt.Printf("%-44s %10s %10s %10s\n", r.name, q(r.d, 25), q(r.d, 50), q(r.d, 75))
	}
	fmt.Printf("ratio semantic cold / ssh grep = %.2f; cached / ssh grep = %.2f; BM25 / ssh grep = %.2f\n",
		ratio(cold, peer), ratio(warm, peer), ratio(lexical, peer))
	return nil
}

// recall prints recall@5 of both rankings on the known answers.
func recall(data string, emb semsearch.Embedder) error {
	root, err := filepath.Abs(filepath.Join(data, "corpus"))
	if err != nil {
		return err
	}
	f, err := os.Open(filepath.Join(data, "queries.tsv"))
	if err != nil {
		return err
	}
	defer f.Close()
	type query struct {
		text, file string
		line       int
	}
	var qs []query
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.Split(sc.Text(), "\t")
		l, err := strconv.Atoi(p[len(p)-1])
		if len(p) != 3 || err != nil {
			return fmt.Errorf("queries.tsv: bad line %q", sc.Text())
		}
		qs = append(qs, query{p[0], p[1], l})
	}
	fmt.Printf("recall@5 on %d known answers (%s):\n", len(qs), data)
	for _, mode := range []struct {
		name string
		e    semsearch.Embedder
	}{{"embeddings (scripted server)", emb}, {"BM25", nil}} {
		found := 0
		for _, q := range qs {
			res, err := semsearch.Search(context.Background(), localFiles{}, semsearch.Options{Root: root, Query: q.text, Embedder: mode.e, NoEmbedder: "bench"})
			if err != nil {
				return err
			}
			for _, h := range res.Hits {
				if h.Path == filepath.Join(root, q.file) && h.Start <= q.line && q.line <= h.End {
					found++
					break
				}
			}
		}
		fmt.Printf("  %-30s %d/%d = %.2f\n", mode.name, found, len(qs), float64(found)/float64(len(qs)))
	}
	return nil
}

type corpus struct{ count int }

// writeCorpus writes lines lines of service configuration, scripts and
// notes in 10 directories of 10 files.
func writeCorpus(dir string, lines int) corpus {
	words := strings.Fields("service payment order user cache queue worker retry timeout backup restore rotate compressed logs disk memory cpu latency replica primary certificate token session database index")
	per := max(lines/100, 1)
	c := corpus{}
	for d := 0; d < 10; d++ {
		sub := filepath.Join(dir, fmt.Sprintf("svc%02d", d))
		os.MkdirAll(sub, 0o755)
		for f := 0; f < 10; f++ {
			var b strings.Builder
			for l := 0; l < per; l++ {
				k := d*7919 + f*104729 + l*31
				fmt.Fprintf(&b, "%s_%d = %s %s %s # line %d\n", words[k%len(words)], l, words[(k/3)%len(words)], words[(k/7)%len(words)], words[(k/11)%len(words)], l+1)
			}
			name := fmt.Sprintf("file%02d.conf", f)
			if f == 9 {
				name = "notes.md"
			}
			os.WriteFile(filepath.Join(sub, name), []byte(b.String()), 0o644)
			c.count++
		}
	}
	return c
}

func dial(ctx context.Context, h testenv.Host) (transport.Transport, error) {
	cfg := &sshtr.HostConfig{
		Alias: h.Alias, HostName: "127.0.0.1", Port: h.Port, User: h.User,
		IdentityFiles: []string{h.IdentityFile}, IdentitiesOnly: true, IdentityAgent: "none",
		ConnectTimeout: 10 * time.Second, StrictHostKeyChecking: "yes", UserKnownHostsFiles: []string{h.KnownHosts},
	}
	return sshtr.Dial(ctx, cfg, sshtr.Options{})
}

// files2 lists and reads through a transport.
type files2 struct{ tr transport.Transport }

func (f files2) ReadDir(ctx context.Context, dir string) ([]fs.FileInfo, error) {
	return transport.ReadDir(ctx, f.tr, dir)
}

func (f files2) ReadFile(ctx context.Context, name string, w io.Writer) (int64, error) {
	return f.tr.ReadFile(ctx, name, w)
}

// localFiles reads this machine's files.
type localFiles struct{}

func (localFiles) ReadDir(_ context.Context, dir string) ([]fs.FileInfo, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []fs.FileInfo
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			out = append(out, fi)
		}
	}
	return out, nil
}

func (localFiles) ReadFile(_ context.Context, name string, w io.Writer) (int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return io.Copy(w, f)
}

func q(d []time.Duration, pct int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*pct/100].Round(100 * time.Microsecond)
}

func ratio(a, b []time.Duration) float64 { return float64(q(a, 50)) / float64(q(b, 50)) }

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}
