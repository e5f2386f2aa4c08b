package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"
	"gopkg.in/yaml.v3"

	"github.com/autoshell/agent/llm"
	"github.com/autoshell/agent/redact"
)

// runConfig is `agent config set-llm|show`.
func runConfig(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return usagef("config: want set-llm or show")
	}
	switch {
	case isHelp(args[0]):
		fmt.Fprint(a.stdout, "Usage: agent config set-llm [flags]   set up the model endpoint (agent config set-llm --help)\n"+
			"       agent config show              print the effective model settings, where each\n"+
			"                                      comes from, and what is missing (key masked)\n")
		return pflag.ErrHelp
	case len(args) > 1 && args[0] == "show" && isHelp(args[1]):
		fmt.Fprint(a.stdout, "Usage: agent config show\n\nPrint the effective model settings (flags, environment, config file,\n"+
			"defaults), where each comes from, and what is missing; the key is masked.\n")
		return pflag.ErrHelp
	}
	switch args[0] {
	case "set-llm":
		return runSetLLM(ctx, a, args[1:])
	case "show":
		return runConfigShow(ctx, a, args[1:])
	}
	return usagef("config: unknown sub-command %q (want set-llm or show)", args[0])
}

// providerChoice is one line of set-llm's menu.
type providerChoice struct {
	name, label, baseURL, model, keyEnv string
}

var providerChoices = []providerChoice{
	{llm.ProviderOllama, "Ollama (local, no key)", llm.OllamaBaseURL, llm.OllamaModel, ""},
	{llm.ProviderDeepSeek, "DeepSeek", llm.DeepSeekBaseURL, llm.DeepSeekModel, "DEEPSEEK_API_KEY"},
	{llm.ProviderOpenAI, "OpenAI", llm.OpenAIBaseURL, llm.OpenAIModel, "OPENAI_API_KEY"},
	{llm.ProviderGeneric, "Other OpenAI-compatible endpoint (vLLM, LM Studio, a proxy…)", "", "", "AGENT_API_KEY"},
}

// parseProvider reads a provider given by name or by its number in the menu.
func parseProvider(s string) (providerChoice, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	for i, c := range providerChoices {
		if s == c.name || s == fmt.Sprint(i+1) || c.name == llm.ProviderGeneric && (s == "other" || s == "custom") {
			return c, nil
		}
	}
	return providerChoice{}, fmt.Errorf("unknown provider %q (want ollama, deepseek, openai or generic, or 1–4)", s)
}

// validBaseURL checks a base URL the way llm.Resolve will.
func validBaseURL(s string) error {
	if s == "" {
		return errors.New("a base URL is needed, e.g. http://localhost:8000/v1")
	}
	_, err := llm.Resolve(llm.Config{Provider: llm.ProviderGeneric, BaseURL: s, Model: "m"}, nil, nil)
	if err != nil {
		return fmt.Errorf("base URL %q is not an http(s) URL", s)
	}
	return nil
}

// validEnvName checks the name of an environment variable.
func validEnvName(s string) error {
	if s == "" {
		return errors.New("empty variable name")
	}
	for i, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return fmt.Errorf("%q is not an environment variable name", s)
		}
	}
	return nil
}

// setLLM is what set-llm writes.
type setLLM struct {
	provider providerChoice
	baseURL  string
	model    string
	keyEnv   string // api_key_env
	key      string // api_key: stored in the file (mode 0600) only when typed or piped in
}

// runSetLLM is `agent config set-llm`: the model's endpoint, asked
// question by question (from the terminal, or answers line by line on
// stdin), or given with flags; the connection is tested, then the config
// file's "llm:" section is written, keeping everything else in the file.
//
// The key: by default the file names the environment variable that holds
// it (api_key_env), so the file holds no secret. A key typed at the
// (hidden) prompt, or given with --key-stdin, is stored as api_key, and the
// file is then written with mode 0600. The key is never printed.
func runSetLLM(ctx context.Context, a *app, args []string) error {
	fs := pflag.NewFlagSet("config set-llm", pflag.ContinueOnError)
	provider := fs.String("provider", "", "`NAME`: ollama, deepseek, openai or generic (any OpenAI-compatible server)")
	baseURL := fs.String("base-url", "", "the endpoint `URL` (default: the provider's)")
	model := fs.String("model", "", "the model `NAME` (default: the provider's)")
	keyEnv := fs.String("key-env", "", "the environment `VARIABLE` that holds the key (default: the provider's, e.g. DEEPSEEK_API_KEY)")
	keyStdin := fs.Bool("key-stdin", false, "read the key from stdin and store it in the config file (mode 0600)")
	noTest := fs.Bool("no-test", false, "save without testing the connection")
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: agent config set-llm [flags]\n\nSet up the model endpoint: asked question by question without flags.\n"+
			"The key is never a flag: it stays in an environment variable (--key-env) or\ncomes from stdin (--key-stdin).\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := a.parseFlags(fs, args, usage); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("config set-llm takes no arguments (got %q)", fs.Args())
	}
	path, _, err := a.configPath()
	if err != nil {
		return usageError{err}
	}
	in := bufio.NewReader(a.stdin)
	var s setLLM
	if *provider == "" && !*keyStdin && *baseURL == "" && *model == "" && *keyEnv == "" {
		if s, err = askLLM(a, in); err != nil {
			return err
		}
	} else {
		if *provider == "" {
			*provider = llm.ProviderGeneric
			if *baseURL == "" {
				return usagef("config set-llm: give --provider, or --base-url and --model")
			}
		}
		if s.provider, err = parseProvider(*provider); err != nil {
			return usagef("--provider: %v", err)
		}
		s.baseURL, s.model, s.keyEnv = firstNonEmpty(*baseURL, s.provider.baseURL), firstNonEmpty(*model, s.provider.model), *keyEnv
		if s.baseURL == "" || s.model == "" {
			return usagef("config set-llm: provider %s needs --base-url and --model", s.provider.name)
		}
		if err := validBaseURL(s.baseURL); err != nil {
			return usagef("--base-url: %v", err)
		}
		if s.keyEnv != "" {
			if err := validEnvName(s.keyEnv); err != nil {
				return usagef("--key-env: %v", err)
			}
		}
		if *keyStdin {
			// At a terminal the key is read without echo, as the
			// questions read it; from a pipe, the first line.
			prompt := ""
			if f, ok := a.stdin.(*os.File); ok && isTerminal(f) {
				prompt = "API key (input hidden): "
			}
			line, err := readSecret(a, in, prompt)
			if s.key = strings.TrimSpace(line); s.key == "" {
				return usagef("--key-stdin: no key on stdin (%v)", err)
			}
			s.keyEnv = ""
		} else if s.keyEnv == "" {
			s.keyEnv = s.provider.keyEnv
		}
	}
	if !*noTest {
		if err := testLLM(ctx, a, s); err != nil {
			return fmt.Errorf("%w\nnothing was saved; fix it, or save anyway with --no-test", err)
		}
	}
	if err := writeLLMSection(path, s); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "✓ Configuration saved to %s\n", path)
	for _, v := range []string{"AGENT_PROVIDER", "AGENT_BASE_URL", "AGENT_MODEL", "AGENT_API_KEY"} {
		if os.Getenv(v) != "" {
			fmt.Fprintf(a.stderr, "agent: note: %s is set in the environment and overrides the file (see agent config show)\n", v)
		}
	}
	return nil
}

// askLLM asks the questions of set-llm on stdout and reads the answers
// from in (line by line; the key hidden when stdin is a terminal).
func askLLM(a *app, in *bufio.Reader) (setLLM, error) {
	var s setLLM
	ask := func(q, def string, check func(string) error) (string, error) {
		for tries := 0; ; tries++ {
			if def != "" {
				fmt.Fprintf(a.stdout, "%s [%s]: ", q, def)
			} else {
				fmt.Fprintf(a.stdout, "%s: ", q)
			}
			line, err := in.ReadString('\n')
			if err != nil && line == "" {
				fmt.Fprintln(a.stdout)
				return "", usagef("config set-llm: no answer (%v)", err)
			}
			ans := firstNonEmpty(strings.TrimSpace(line), def)
			cerr := check(ans)
			if cerr == nil {
				return ans, nil
			}
			fmt.Fprintf(a.stdout, "  %v\n", cerr)
			if tries == 4 {
				return "", usageError{cerr}
			}
		}
	}
	fmt.Fprintln(a.stdout, "Select LLM provider:")
	for i, c := range providerChoices {
		fmt.Fprintf(a.stdout, "  %d) %s\n", i+1, c.label)
	}
	choice, err := ask("Choice", "1", func(s string) error { _, err := parseProvider(s); return err })
	if err != nil {
		return s, err
	}
	s.provider, _ = parseProvider(choice)
	if s.baseURL, err = ask("Base URL", s.provider.baseURL, validBaseURL); err != nil {
		return s, err
	}
	nonEmpty := func(v string) error {
		if v == "" {
			return errors.New("a model name is needed")
		}
		return nil
	}
	if s.model, err = ask("Model", s.provider.model, nonEmpty); err != nil {
		return s, err
	}
	if s.provider.name == llm.ProviderOllama {
		return s, nil
	}
	key, err := readSecret(a, in, "API key (input hidden; paste it to store it in the config file with mode 0600,\n  or press Enter to read it from an environment variable): ")
	if err != nil {
		return s, usagef("config set-llm: %v", err)
	}
	if s.key = strings.TrimSpace(key); s.key != "" {
		return s, nil
	}
	s.keyEnv, err = ask("Environment variable holding the key", s.provider.keyEnv, validEnvName)
	if err == nil && os.Getenv(s.keyEnv) == "" {
		fmt.Fprintf(a.stdout, "  %s is not set here: export it before running agent\n", s.keyEnv)
	}
	return s, err
}

// readSecret reads one line without echo when stdin is a terminal.
func readSecret(a *app, in *bufio.Reader, prompt string) (string, error) {
	if f, ok := a.stdin.(*os.File); ok && isTerminal(f) && in.Buffered() == 0 {
		// Echo goes off before the prompt is shown: a key pasted the
		// moment the prompt appears is never echoed (ReadPassword alone
		// turns echo off only after the prompt is out).
		// (Raw output has no newline translation: the prompt's lines end
		// in \r\n while it is.)
		fd := int(f.Fd())
		old, rawErr := term.MakeRaw(fd)
		fmt.Fprint(a.stdout, strings.ReplaceAll(prompt, "\n", "\r\n"))
		b, err := term.ReadPassword(fd)
		if rawErr == nil {
			term.Restore(fd, old)
		}
		fmt.Fprintln(a.stdout)
		return string(b), err
	}
	fmt.Fprint(a.stdout, prompt)
	line, err := in.ReadString('\n')
	if err != nil && line == "" {
		return "", fmt.Errorf("no answer (%v)", err)
	}
	return line, nil
}

// testLLM probes the endpoint with the new settings only (the AGENT_*
// variables are not consulted).
func testLLM(ctx context.Context, a *app, s setLLM) error {
	key := s.key
	if key == "" && s.keyEnv != "" {
		key = os.Getenv(s.keyEnv)
	}
	if key == "" && (s.provider.name == llm.ProviderDeepSeek || s.provider.name == llm.ProviderOpenAI) {
		fmt.Fprintf(a.stdout, "Connection not tested: %s is not set.\n", s.keyEnv)
		return nil
	}
	cfg, err := llm.Resolve(llm.Config{Provider: s.provider.name, BaseURL: s.baseURL, Model: s.model, APIKey: key, KeySource: firstNonEmpty(s.keyEnv, "the key given")}, nil, nil)
	if err != nil {
		return usageError{err}
	}
	fmt.Fprintf(a.stdout, "Testing connection to %s… ", displayURL(cfg.BaseURL))
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := llm.New(cfg).Probe(pctx); err != nil {
		fmt.Fprintln(a.stdout, "failed")
		return err
	}
	fmt.Fprintln(a.stdout, "OK")
	return nil
}

// writeLLMSection sets the "llm:" section of the config file at path to s,
// keeping the file's other sections and the section's other keys (timeout,
// max_retries), and writes it atomically: mode 0600 when it holds a key,
// else the file's mode (0644 for a new file).
func writeLLMSection(path string, s setLLM) error {
	old, err := os.ReadFile(path)
	mode := fs.FileMode(0o644)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("config: %w", err)
	default:
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	set := [][2]string{{"provider", s.provider.name}, {"base_url", s.baseURL}, {"model", s.model}}
	// The old key never carries over to the new endpoint: a key stored for
	// DeepSeek must not follow a switch to Ollama.
	drop := []string{"api_key", "api_key_env"}
	if s.key != "" {
		set, drop = append(set, [2]string{"api_key", s.key}), []string{"api_key_env"}
		mode = 0o600
	} else if s.keyEnv != "" {
		set, drop = append(set, [2]string{"api_key_env", s.keyEnv}), []string{"api_key"}
	}
	out, err := updateLLMSection(old, set, drop...)
	if err != nil {
		return usagef("config %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.yaml")
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("config: %w", err)
	}
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return fmt.Errorf("config: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

// updateLLMSection returns the YAML document doc with the keys of set put
// into its "llm:" mapping (created when missing) and the key drop removed;
// the other sections, keys and comments are kept. doc must be empty or a
// mapping.
func updateLLMSection(doc []byte, set [][2]string, drop ...string) ([]byte, error) {
	var root yaml.Node
	if len(bytes.TrimSpace(doc)) > 0 {
		if err := yaml.Unmarshal(doc, &root); err != nil {
			return nil, err
		}
		var check map[string]any // what a node tree lets through: duplicate keys
		if err := yaml.Unmarshal(doc, &check); err != nil {
			return nil, err
		}
	}
	if root.Kind == 0 {
		root = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("the file is not a YAML mapping of sections")
	}
	top := root.Content[0]
	var sec *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "llm" {
			sec = top.Content[i+1]
		}
	}
	if sec == nil || sec.Kind == yaml.ScalarNode && sec.Tag == "!!null" {
		if sec == nil {
			sec = &yaml.Node{}
			top.Content = append(top.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "llm"}, sec)
		}
		*sec = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	if sec.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: the llm section is not a mapping", sec.Line)
	}
	for _, kv := range set {
		found := false
		for i := 0; i+1 < len(sec.Content); i += 2 {
			if sec.Content[i].Value == kv[0] {
				sec.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: kv[1]}
				found = true
			}
		}
		if !found {
			sec.Content = append(sec.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: kv[0]},
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: kv[1]})
		}
	}
	for i := 0; i+1 < len(sec.Content); {
		if slices.Contains(drop, sec.Content[i].Value) {
			sec.Content = append(sec.Content[:i], sec.Content[i+2:]...)
			continue
		}
		i += 2
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// runConfigShow is `agent config show`: the effective model settings
// (flags > environment > config file > defaults, as llm.Resolve merges
// them) with where each came from, and the key masked.
func runConfigShow(ctx context.Context, a *app, args []string) error {
	if len(args) > 0 {
		return usagef("config show takes no arguments (got %q)", args)
	}
	path, _, err := a.configPath()
	if err != nil {
		return usageError{err}
	}
	_, file, err := a.loadConfig()
	if err != nil {
		return err
	}
	flags := llm.Config{Model: a.task.model, BaseURL: a.task.baseURL}
	state := "not found: the defaults and the environment apply"
	if _, err := os.Stat(path); err == nil {
		state = "found"
		if file == nil {
			state = "found, no llm section"
		}
	}
	fmt.Fprintf(a.stdout, "config file: %s (%s)\n", path, state)
	cfg, err := llm.Resolve(flags, os.Getenv, file)
	if err != nil {
		// Show is where one looks when the settings are incomplete: print
		// what is set and what is missing, exit 0.
		showIncomplete(a, flags, file, err)
		return nil
	}
	src := configSources(flags, os.Getenv, file, cfg)
	rows := [][3]string{
		{"provider", cfg.Provider, src.provider},
		{"base_url", displayURL(cfg.BaseURL), src.baseURL},
		{"model", cfg.Model, src.model},
		{"api_key", cfg.Redacted(), src.key},
		{"timeout", cfg.Timeout.String(), src.timeout},
		{"max_retries", fmt.Sprint(cfg.MaxRetries), src.retries},
		{"embedding_model", firstNonEmpty(cfg.EmbeddingModel, "none: semantic_search ranks by BM25"), embeddingSource(file)},
	}
	for _, r := range rows {
		fmt.Fprintf(a.stdout, "%-12s %-40s (%s)\n", r[0]+":", r[1], r[2])
	}
	return nil
}

// showIncomplete prints the model settings that are set (flags,
// environment, config file) when llm.Resolve refused them, then what is
// missing and how to set it.
func showIncomplete(a *app, flags llm.Config, file *llm.FileConfig, err error) {
	if file == nil {
		file = &llm.FileConfig{}
	}
	env := os.Getenv
	pick := func(cands ...[2]string) (string, string) {
		for _, c := range cands {
			if c[0] != "" {
				return c[0], c[1]
			}
		}
		return "(not set)", "missing"
	}
	prov, provSrc := pick([2]string{flags.Provider, "--provider"}, [2]string{env("AGENT_PROVIDER"), "AGENT_PROVIDER"}, [2]string{file.Provider, "config file"})
	base, baseSrc := pick([2]string{flags.BaseURL, "--base-url"}, [2]string{env("AGENT_BASE_URL"), "AGENT_BASE_URL"}, [2]string{file.BaseURL, "config file"})
	if baseSrc != "missing" {
		base = displayURL(base)
	}
	model, modelSrc := pick([2]string{flags.Model, "--model"}, [2]string{env("AGENT_MODEL"), "AGENT_MODEL"}, [2]string{file.Model, "config file"})
	key, keySrc := "(none)", "not set"
	for _, k := range []string{"AGENT_API_KEY", file.APIKeyEnv, "DEEPSEEK_API_KEY", "OPENAI_API_KEY"} {
		if k != "" && env(k) != "" {
			key, keySrc = llm.Config{APIKey: env(k)}.Redacted(), k
			break
		}
	}
	if keySrc == "not set" && file.APIKey != "" {
		key, keySrc = llm.Config{APIKey: file.APIKey}.Redacted(), "config file"
	}
	for _, r := range [][3]string{
		{"provider", prov, provSrc}, {"base_url", base, baseSrc}, {"model", model, modelSrc}, {"api_key", key, keySrc},
	} {
		fmt.Fprintf(a.stdout, "%-12s %-40s (%s)\n", r[0]+":", r[1], r[2])
	}
	msg := strings.TrimPrefix(err.Error(), llm.ErrNoModelConfig.Error()+": ")
	fmt.Fprintf(a.stdout, "missing:     %s\n", msg)
	fmt.Fprintln(a.stdout, "             (agent config set-llm sets up an endpoint and keeps it in the config file)")
}

// sources says where each effective setting came from.
type sources struct{ provider, baseURL, model, key, timeout, retries string }

// configSources follows llm.Resolve's precedence to name the source of each
// value of cfg.
func configSources(flags llm.Config, env func(string) string, file *llm.FileConfig, cfg llm.Config) sources {
	if file == nil {
		file = &llm.FileConfig{}
	}
	pick := func(def string, cands ...[2]string) string {
		for _, c := range cands {
			if c[0] != "" {
				return c[1]
			}
		}
		return def
	}
	var s sources
	s.provider = pick("default: nothing configured, local Ollama",
		[2]string{flags.Provider, "--provider"}, [2]string{env("AGENT_PROVIDER"), "AGENT_PROVIDER"},
		[2]string{file.Provider, "config file"}, [2]string{firstNonEmpty(flags.BaseURL, env("AGENT_BASE_URL"), file.BaseURL), "from the base URL"},
		[2]string{env("DEEPSEEK_API_KEY"), "DEEPSEEK_API_KEY is set"}, [2]string{env("OPENAI_API_KEY"), "OPENAI_API_KEY is set"})
	openaiURL := ""
	if cfg.Provider == llm.ProviderOpenAI {
		openaiURL = env("OPENAI_BASE_URL")
	}
	s.baseURL = pick("default for "+cfg.Provider,
		[2]string{flags.BaseURL, "--base-url"}, [2]string{env("AGENT_BASE_URL"), "AGENT_BASE_URL"},
		[2]string{file.BaseURL, "config file"}, [2]string{openaiURL, "OPENAI_BASE_URL"})
	s.model = pick("default for "+cfg.Provider,
		[2]string{flags.Model, "--model"}, [2]string{env("AGENT_MODEL"), "AGENT_MODEL"}, [2]string{file.Model, "config file"})
	switch {
	case cfg.APIKey == "" && cfg.KeyWithheld != "":
		s.key = "none sent: " + cfg.KeyWithheld
	case cfg.APIKey == "":
		s.key = "not set; would be read from " + cfg.KeySource
	case cfg.KeySource == "config file llm.api_key":
		s.key = "config file"
	default:
		s.key = cfg.KeySource
	}
	s.timeout = "default"
	if flags.Timeout > 0 {
		s.timeout = "flag"
	} else if file.Timeout > 0 {
		s.timeout = "config file"
	}
	s.retries = "default"
	if flags.MaxRetries != 0 {
		s.retries = "flag"
	} else if file.MaxRetries != nil {
		s.retries = "config file"
	}
	return s
}

// firstNonEmpty returns the first of s that is not empty.
func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// displayURL is u with any password and credential query parameter
// (?api-key=, ?key=, ?token=) masked.
func displayURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return redact.String(u)
	}
	return redact.String(p.Redacted())
}

// embeddingSource says where llm.embedding_model's value came from.
func embeddingSource(file *llm.FileConfig) string {
	switch {
	case os.Getenv("AGENT_EMBEDDING_MODEL") != "":
		return "AGENT_EMBEDDING_MODEL"
	case file != nil && file.EmbeddingModel != "":
		return "config file"
	}
	return "default for the provider"
}
