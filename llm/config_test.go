package llm

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func intp(n int) *int { return &n }

func TestResolvePrecedence(t *testing.T) {
	file := &FileConfig{BaseURL: "http://file:8000/v1", Model: "file-model", APIKeyEnv: "MY_KEY", Timeout: Duration(30 * time.Second), MaxRetries: intp(0)}
	tests := []struct {
		name  string
		flags Config
		env   []string
		file  *FileConfig
		want  Config // compared field by field where set
	}{
		{name: "nothing: local ollama", want: Config{Provider: "ollama", BaseURL: OllamaBaseURL, Model: OllamaModel, KeySource: "AGENT_API_KEY", Timeout: DefaultTimeout, MaxRetries: 3}},
		{name: "deepseek key", env: []string{"DEEPSEEK_API_KEY", "sk-deepseek-0001"},
			want: Config{Provider: "deepseek", BaseURL: DeepSeekBaseURL, Model: DeepSeekModel, APIKey: "sk-deepseek-0001", KeySource: "DEEPSEEK_API_KEY"}},
		{name: "deepseek beats openai", env: []string{"DEEPSEEK_API_KEY", "sk-d", "OPENAI_API_KEY", "sk-o"},
			want: Config{Provider: "deepseek", APIKey: "sk-d"}},
		{name: "openai key and base url", env: []string{"OPENAI_API_KEY", "sk-o", "OPENAI_BASE_URL", "https://proxy.example/v1/"},
			want: Config{Provider: "openai", BaseURL: "https://proxy.example/v1", Model: OpenAIModel, APIKey: "sk-o", KeySource: "OPENAI_API_KEY"}},
		{name: "file over defaults", file: file, env: []string{"MY_KEY", "k-file", "DEEPSEEK_API_KEY", "sk-d"},
			want: Config{Provider: "generic", BaseURL: "http://file:8000/v1", Model: "file-model", APIKey: "k-file", KeySource: "MY_KEY", Timeout: 30 * time.Second, MaxRetries: 0}},
		{name: "env over file", file: file, env: []string{"MY_KEY", "k-file", "AGENT_BASE_URL", "http://env:1/v1", "AGENT_MODEL", "env-model", "AGENT_API_KEY", "k-env"},
			want: Config{BaseURL: "http://env:1/v1", Model: "env-model", APIKey: "k-env", KeySource: "AGENT_API_KEY"}},
		{name: "flags over env", file: file, flags: Config{BaseURL: "http://flag:2/v1", Model: "flag-model", APIKey: "k-flag", Timeout: time.Second, MaxRetries: 5},
			env:  []string{"AGENT_BASE_URL", "http://env:1/v1", "AGENT_MODEL", "env-model", "AGENT_API_KEY", "k-env"},
			want: Config{BaseURL: "http://flag:2/v1", Model: "flag-model", APIKey: "k-flag", KeySource: "--api-key", Timeout: time.Second, MaxRetries: 5}},
		{name: "negative retries flag means none", flags: Config{MaxRetries: -1}, want: Config{MaxRetries: 0}},
		{name: "provider flag picks its defaults", flags: Config{Provider: "DeepSeek"}, env: []string{"OPENAI_API_KEY", "sk-o"},
			want: Config{Provider: "deepseek", BaseURL: DeepSeekBaseURL, APIKey: "", KeySource: "DEEPSEEK_API_KEY"}},
		{name: "provider inferred from url", flags: Config{BaseURL: "https://api.openai.com/v1"}, env: []string{"OPENAI_API_KEY", "sk-o"},
			want: Config{Provider: "openai", Model: OpenAIModel, APIKey: "sk-o"}},
		{name: "ollama port inferred", flags: Config{BaseURL: "http://gpu:11434/v1"}, want: Config{Provider: "ollama", Model: OllamaModel}},
		{name: "literal api_key in file", file: &FileConfig{Provider: "openai", APIKey: "sk-literal-key"},
			want: Config{APIKey: "sk-literal-key", KeySource: "config file llm.api_key"}},
		{name: "file key env unset names it", file: &FileConfig{Provider: "deepseek", APIKeyEnv: "TEAM_KEY"},
			want: Config{APIKey: "", KeySource: "TEAM_KEY"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.flags, envOf(tt.env...), tt.file)
			if err != nil {
				t.Fatal(err)
			}
			w := tt.want
			check := func(field, got, want string) {
				if want != "" && got != want {
					t.Errorf("%s = %q, want %q", field, got, want)
				}
			}
			check("Provider", got.Provider, w.Provider)
			check("BaseURL", got.BaseURL, w.BaseURL)
			check("Model", got.Model, w.Model)
			check("KeySource", got.KeySource, w.KeySource)
			if (w.APIKey != "" || strings.Contains(tt.name, "flag picks")) && got.APIKey != w.APIKey {
				t.Errorf("APIKey = %q, want %q", got.APIKey, w.APIKey)
			}
			if w.Timeout != 0 && got.Timeout != w.Timeout {
				t.Errorf("Timeout = %v, want %v", got.Timeout, w.Timeout)
			}
			if (w.MaxRetries != 0 || strings.Contains(tt.name, "retries") || tt.file == file && tt.flags.MaxRetries == 0) && got.MaxRetries != w.MaxRetries {
				t.Errorf("MaxRetries = %d, want %d", got.MaxRetries, w.MaxRetries)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	for name, c := range map[string]struct {
		flags Config
		env   []string
		file  *FileConfig
	}{
		"key without endpoint": {env: []string{"AGENT_API_KEY", "k"}},
		"generic without url":  {flags: Config{Provider: "vllm"}},
		"url without model":    {flags: Config{BaseURL: "http://localhost:8000/v1"}},
		"not a url":            {flags: Config{BaseURL: "localhost:8000", Model: "m"}},
	} {
		_, err := Resolve(c.flags, envOf(c.env...), c.file)
		if !errors.Is(err, ErrNoModelConfig) {
			t.Errorf("%s: err = %v, want ErrNoModelConfig", name, err)
		}
	}
}

func TestParseFileConfig(t *testing.T) {
	fc, err := ParseFileConfig(strings.NewReader("safety:\n  commands: {}\nllm:\n  provider: deepseek\n  model: deepseek-reasoner\n  api_key_env: DS_KEY\n  timeout: 90s\n  max_retries: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if fc.Provider != "deepseek" || fc.Model != "deepseek-reasoner" || fc.APIKeyEnv != "DS_KEY" || time.Duration(fc.Timeout) != 90*time.Second || *fc.MaxRetries != 1 {
		t.Errorf("got %+v", *fc)
	}
	fc, err = ParseFileConfig(strings.NewReader("llm:\n  timeout: 45\n"))
	if err != nil || time.Duration(fc.Timeout) != 45*time.Second {
		t.Errorf("timeout as seconds: %v %v", fc, err)
	}
	if fc, err := ParseFileConfig(strings.NewReader("safety: {}\n")); fc != nil || err != nil {
		t.Errorf("no llm section: %v %v", fc, err)
	}
	if _, err := ParseFileConfig(strings.NewReader("llm:\n  apikey: x\n")); err == nil {
		t.Error("unknown key accepted")
	}
	if _, err := ParseFileConfig(strings.NewReader("llm:\n  timeout: soon\n")); err == nil {
		t.Error("bad timeout accepted")
	}
}

func TestConfigNeverPrintsKey(t *testing.T) {
	const key = "sk-supersecretvalue1234abcd"
	c := Config{Provider: "openai", BaseURL: "https://user:pw@api.example/v1", APIKey: key, Model: "m"}
	for _, s := range []string{c.String(), fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s", c, c, c, c)} {
		if strings.Contains(s, key) || strings.Contains(s, "secretvalue") || strings.Contains(s, "pw@") {
			t.Errorf("key or password printed: %s", s)
		}
	}
	if got := c.Redacted(); got != "sk-…abcd" {
		t.Errorf("Redacted = %q", got)
	}
	for k, want := range map[string]string{"": "(none)", "short": "…", "ollama-long-key-wxyz": "…wxyz"} {
		if got := (Config{APIKey: k}).Redacted(); got != want {
			t.Errorf("Redacted(%q) = %q, want %q", k, got, want)
		}
	}
}

// A key is sent only where it belongs: the config file's key to the file's
// endpoint, a provider's variable to that provider's host; AGENT_API_KEY
// and --api-key to whatever endpoint is in effect.
func TestResolveKeyStaysWithItsEndpoint(t *testing.T) {
	deepseekFile := &FileConfig{Provider: "deepseek", APIKey: "sk-file-key-0123456789"}
	tests := []struct {
		name         string
		flags        Config
		env          []string
		file         *FileConfig
		wantKey      string
		wantWithheld bool
	}{
		{name: "file key, file endpoint", file: deepseekFile, wantKey: "sk-file-key-0123456789"},
		{name: "file key, flag base url elsewhere", file: deepseekFile, flags: Config{BaseURL: "http://127.0.0.1:18777/v1", Model: "qwen"}, wantWithheld: true},
		{name: "file key, AGENT_BASE_URL elsewhere", file: deepseekFile, env: []string{"AGENT_BASE_URL", "http://127.0.0.1:18777/v1", "AGENT_MODEL", "m"}, wantWithheld: true},
		{name: "file key, other provider flag", file: deepseekFile, flags: Config{Provider: "openai"}, wantWithheld: true},
		{name: "file key env, flag base url elsewhere", file: &FileConfig{Provider: "deepseek", APIKeyEnv: "DEEPSEEK_API_KEY"},
			env: []string{"DEEPSEEK_API_KEY", "sk-d"}, flags: Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m"}, wantWithheld: true},
		{name: "file key, same endpoint given by flag", file: &FileConfig{BaseURL: "http://gpu:8000/v1", Model: "m", APIKey: "k-file"},
			flags: Config{BaseURL: "http://gpu:8000/v1/"}, wantKey: "k-file"},
		{name: "file key, no endpoint in file", file: &FileConfig{APIKeyEnv: "MY_KEY"}, env: []string{"MY_KEY", "k", "AGENT_BASE_URL", "http://x:1/v1", "AGENT_MODEL", "m"}, wantWithheld: true},
		{name: "deepseek var, deepseek provider at a proxy", flags: Config{Provider: "deepseek", BaseURL: "http://proxy:9/v1"}, env: []string{"DEEPSEEK_API_KEY", "sk-d"}, wantWithheld: true},
		{name: "openai var, openai host", flags: Config{BaseURL: "https://api.openai.com/v1"}, env: []string{"OPENAI_API_KEY", "sk-o"}, wantKey: "sk-o"},
		{name: "AGENT_API_KEY goes anywhere", file: deepseekFile, flags: Config{BaseURL: "http://127.0.0.1:18777/v1", Model: "m"}, env: []string{"AGENT_API_KEY", "k-agent"}, wantKey: "k-agent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.flags, envOf(tt.env...), tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if got.APIKey != tt.wantKey {
				t.Errorf("APIKey = %q, want %q", got.APIKey, tt.wantKey)
			}
			if (got.KeyWithheld != "") != tt.wantWithheld {
				t.Errorf("KeyWithheld = %q, want withheld=%v", got.KeyWithheld, tt.wantWithheld)
			}
			if tt.wantWithheld && (strings.HasPrefix(got.KeySource, "config file") || !strings.Contains(got.KeyWithheld, "AGENT_API_KEY")) {
				t.Errorf("KeySource = %q, KeyWithheld = %q: want a variable meant for this endpoint", got.KeySource, got.KeyWithheld)
			}
			if strings.Contains(got.KeyWithheld, "sk-") || strings.Contains(got.KeyWithheld, "k-file") {
				t.Errorf("KeyWithheld shows the key: %q", got.KeyWithheld)
			}
		})
	}
}

// TestRedactURLQuery: credentials in a base URL's query (Azure-style
// ?api-key=, Google-style ?key=) are masked wherever redactURL shows the
// URL (config show, errors), as are user:password@.
func TestRedactURLQuery(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://x.example/v1?api-key=SECRET1", "https://x.example/v1?api-key=[REDACTED]"},
		{"https://x.example/v1?key=SECRET2&alt=json", "https://x.example/v1?key=[REDACTED]&alt=json"},
		{"https://x.example/v1?a=1&token=SECRET3", "https://x.example/v1?a=1&token=[REDACTED]"},
		{"https://x.example/v1?access_token=SECRET4", "https://x.example/v1?access_token=[REDACTED]"},
		{"https://bob:pw@x.example/v1?api-version=2024", "https://x.example/v1?api-version=2024"},
		{"https://x.example/v1?api-version=2024-02-01", "https://x.example/v1?api-version=2024-02-01"},
		{"http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"},
	} {
		if got := redactURL(tc.in); got != tc.want {
			t.Errorf("redactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
