package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/autoshell/agent/engine"
	"github.com/autoshell/agent/inventory"
	"github.com/autoshell/agent/planner"
)

// TestDocsShardsJob checks docs/shards-job.yaml: an Indexed Job with as
// many completions as parts, whose container command, run for every
// index, asks agent for each part once; the ConfigMap's inventory and
// plan load.
func TestDocsShardsJob(t *testing.T) {
	data, err := os.ReadFile("../../docs/shards-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Kind string            `yaml:"kind"`
		Data map[string]string `yaml:"data"`
	}
	var job struct {
		Kind string `yaml:"kind"`
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int    `yaml:"completions"`
			Parallelism    int    `yaml:"parallelism"`
			Template       struct {
				Spec struct {
					Containers []struct {
						Command []string `yaml:"command"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(false)
	if err := dec.Decode(&cm); err != nil {
		t.Fatal(err)
	}
	if err := dec.Decode(&job); err != nil {
		t.Fatal(err)
	}
	if var3 := dec.Decode(new(any)); !errors.Is(var3, io.EOF) {
		t.Fatalf("a third document: %v", var3)
	}
	if cm.Kind != "ConfigMap" || job.Kind != "Job" || job.Spec.CompletionMode != "Indexed" ||
		job.Spec.Completions < 2 || job.Spec.Parallelism != job.Spec.Completions || len(job.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("manifest: %+v / %+v", cm.Kind, job)
	}
	n := job.Spec.Completions

	// The inventory and the plan of the ConfigMap.
	dir := t.TempDir()
	for name, body := range cm.Data {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	inv, err := inventory.Load(filepath.Join(dir, "hosts.ini"))
	if err != nil {
		t.Fatal(err)
	}
	hosts, err := inv.Limit("")
	if err != nil || len(hosts) != 60 {
		t.Fatalf("inventory: %d hosts, %v", len(hosts), err)
	}
	if _, err := planner.ParseFile(filepath.Join(dir, "disk.yaml")); err != nil {
		t.Fatal(err)
	}

	// Each pod's command, with a stand-in agent that prints its arguments.
	bin := t.TempDir()
	fake := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$ARGS_OUT\"\n"
	if err := os.WriteFile(filepath.Join(bin, "agent"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	cmdv := job.Spec.Template.Spec.Containers[0].Command
	seen := map[int]bool{}
	for k := range n {
		argsOut := filepath.Join(dir, "args"+strconv.Itoa(k))
		script := strings.ReplaceAll(cmdv[len(cmdv)-1], "/results/", dir+"/")
		c := exec.Command(cmdv[0], append(cmdv[1:len(cmdv)-1], script)...)
		c.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "JOB_COMPLETION_INDEX="+strconv.Itoa(k), "ARGS_OUT="+argsOut)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("index %d: %v\n%s", k, err, out)
		}
		b, err := os.ReadFile(argsOut)
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Split(strings.TrimSpace(string(b)), "\n")
		i := slices.Index(args, "--shard")
		if i < 0 || i+1 >= len(args) || slices.Index(args, "--json") < 0 {
			t.Fatalf("index %d: agent %q", k, args)
		}
		sh, err := engine.ParseShard(args[i+1])
		if err != nil || sh.N != n {
			t.Fatalf("index %d: --shard %s: %v", k, args[i+1], err)
		}
		if seen[sh.K] {
			t.Fatalf("part %d twice", sh.K)
		}
		seen[sh.K] = true
		if _, err := os.Stat(filepath.Join(dir, "part-"+strconv.Itoa(k)+".jsonl")); err != nil {
			t.Errorf("index %d writes no part file: %v", k, err)
		}
	}
}
