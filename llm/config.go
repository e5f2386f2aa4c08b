package llm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Providers Resolve knows. Any other OpenAI-compatible server (vLLM, LM
// Studio, a proxy) is ProviderGeneric and needs a base URL and a model.
const (
	ProviderDeepSeek = "deepseek"
	ProviderOpenAI   = "openai"
	ProviderOllama   = "ollama"
	ProviderGeneric  = "generic"
)

// Defaults applied by Resolve.
const (
	DeepSeekBaseURL = "https://api.deepseek.com/v1"
	DeepSeekModel   = "deepseek-chat"
	OpenAIBaseURL   = "https://api.openai.com/v1"
	OpenAIModel     = "gpt-4o-mini" // cheap, fast, reliable function calling
	OllamaBaseURL   = "http://localhost:11434/v1"
	OllamaModel     = "qwen2.5:7b" // small, and good at tool calls
	DefaultTimeout  = 120 * time.Second
	DefaultRetries  = 3
)

// Config is the resolved endpoint. The zero Timeout means DefaultTimeout;
// MaxRetries is the number of retries after the first attempt (negative: 0).
type Config struct {
	BaseURL  string
	APIKey   string
	Model    string
	Provider string
	// EmbeddingModel is the model of the endpoint's embeddings API
	// (semantic_search); "" when the endpoint has none known.
	EmbeddingModel string
	Timeout        time.Duration
	MaxRetries     int
	// KeySource says where APIKey came from ("DEEPSEEK_API_KEY", "--api-key",
	// "config file api_key"), or which variable would hold it, for error
	// messages. Never the key.
	KeySource string
	// KeyWithheld, when not empty, says why a configured key is not sent:
	// a config-file key or a provider's variable is only sent to its own
	// endpoint. Never the key.
	KeyWithheld string
}

// String describes c with the key masked; fmt's %v and %+v use it too.
func (c Config) String() string {
	return fmt.Sprintf("provider=%s base_url=%s model=%s api_key=%s timeout=%s max_retries=%d",
		c.Provider, redactURL(c.BaseURL), c.Model, c.Redacted(), c.Timeout, c.MaxRetries)
}

// GoString keeps %#v from printing the key.
func (c Config) GoString() string { return "llm.Config{" + c.String() + "}" }

// Redacted is the API key masked for display: "sk-…abcd", "(none)", or "…"
// when the key is too short to show any of it.
func (c Config) Redacted() string { return mask(c.APIKey) }

func mask(key string) string {
	switch {
	case key == "":
		return "(none)"
	case len(key) < 12:
		return "…"
	case strings.HasPrefix(key, "sk-"):
		return "sk-…" + key[len(key)-4:]
	}
	return "…" + key[len(key)-4:]
}

// FileConfig is the "llm:" section of config.yaml. The key belongs in the
// environment: api_key_env names the variable. A literal api_key is
// accepted, but the file is then a secret (it ends up in backups, dotfile
// repositories and screen shares); keep it mode 0600 or use api_key_env.
type FileConfig struct {
	BaseURL    string   `yaml:"base_url"`
	Model      string   `yaml:"model"`
	Provider   string   `yaml:"provider"`
	APIKeyEnv  string   `yaml:"api_key_env"`
	APIKey     string   `yaml:"api_key"`
	Timeout    Duration `yaml:"timeout"`
	MaxRetries *int     `yaml:"max_retries"`
	// EmbeddingModel is the embeddings model semantic_search uses ("none":
	// rank lexically); default per provider (EmbeddingModelFor).
	EmbeddingModel string `yaml:"embedding_model"`
	// SendSecrets: step outputs go to the model with what looks like a
	// secret left in (--send-secrets for every run).
	SendSecrets bool `yaml:"send_secrets"`
	// Prices are what each model costs per million tokens, by model name:
	// agent sessions and the run summary show the cost of its usage.
	Prices map[string]Price `yaml:"prices"`
}

// Price is a model's price per million tokens, prompt (input) and
// completion (output), in the operator's currency.
type Price struct {
	Input  float64 `yaml:"input" json:"input"`
	Output float64 `yaml:"output" json:"output"`
}

// Cost is the price of prompt and completion tokens.
func (p Price) Cost(prompt, completion int) float64 {
	return (float64(prompt)*p.Input + float64(completion)*p.Output) / 1e6
}

// PriceOf is the price of model, if the config has one.
func (c *FileConfig) PriceOf(model string) (Price, bool) {
	if c == nil || model == "" {
		return Price{}, false
	}
	p, ok := c.Prices[model]
	return p, ok
}

// Duration is a YAML duration: "90s", "2m", or a number of seconds.
type Duration time.Duration

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if secs, err := strconv.ParseFloat(n.Value, 64); err == nil && n.Tag != "!!str" {
		*d = Duration(secs * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: timeout %q: want a duration like 90s or 2m", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// ParseFileConfig decodes a whole config.yaml and returns its "llm:" section,
// nil when there is none. Unknown keys inside the section are errors.
func ParseFileConfig(r io.Reader) (*FileConfig, error) {
	var f struct {
		LLM yaml.Node `yaml:"llm"`
	}
	if err := yaml.NewDecoder(r).Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config: %w", err)
	}
	if f.LLM.Kind == 0 {
		return nil, nil
	}
	return DecodeFileConfig(&f.LLM)
}

// DecodeFileConfig decodes the "llm:" section given as a YAML node (what
// safety.LoadConfigPolicy hands back for sections it does not own).
func DecodeFileConfig(n *yaml.Node) (*FileConfig, error) {
	b, err := yaml.Marshal(n)
	if err != nil {
		return nil, fmt.Errorf("config llm: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var fc FileConfig
	if err := dec.Decode(&fc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config llm (line numbers relative to the section): %w", err)
	}
	for m, p := range fc.Prices {
		if p.Input < 0 || p.Output < 0 || m == "" {
			return nil, fmt.Errorf("config llm: prices: %q: want a model name and prices of 0 or more per million tokens", m)
		}
	}
	return &fc, nil
}

// Resolve merges flags, the environment and the config file, in that order
// of precedence, field by field, then fills the defaults.
//
// Environment: AGENT_PROVIDER, AGENT_BASE_URL, AGENT_MODEL, AGENT_API_KEY
// act like flags below the command line. With neither a provider nor a base
// URL configured anywhere, DEEPSEEK_API_KEY selects DeepSeek, else
// OPENAI_API_KEY selects OpenAI (at OPENAI_BASE_URL if set), else the local
// Ollama is used without a key. The provider's own variable
// (DEEPSEEK_API_KEY, OPENAI_API_KEY) supplies the key when nothing above it
// does. flags.MaxRetries 0 means "not set"; negative means no retries.
//
// Which key goes where: --api-key and AGENT_API_KEY go to the effective
// endpoint, whatever it is. The config file's key (api_key_env or api_key)
// goes only to the file's endpoint (its base_url, or its provider's default),
// and DEEPSEEK_API_KEY / OPENAI_API_KEY only to their provider's host (or
// OPENAI_BASE_URL). So `--base-url http://elsewhere` never receives the
// stored key; Config.KeyWithheld says why none is sent.
func Resolve(flags Config, env func(string) string, file *FileConfig) (Config, error) {
	if env == nil {
		env = func(string) string { return "" }
	}
	if file == nil {
		file = &FileConfig{}
	}
	c := Config{
		Provider: strings.ToLower(first(flags.Provider, env("AGENT_PROVIDER"), file.Provider)),
		BaseURL:  first(flags.BaseURL, env("AGENT_BASE_URL"), file.BaseURL),
		Model:    first(flags.Model, env("AGENT_MODEL"), file.Model),
		Timeout:  flags.Timeout,
	}
	switch {
	case c.Provider != "":
	case c.BaseURL != "":
		c.Provider = providerOf(c.BaseURL)
	case env("DEEPSEEK_API_KEY") != "":
		c.Provider = ProviderDeepSeek
	case env("OPENAI_API_KEY") != "":
		c.Provider = ProviderOpenAI
	case flags.APIKey != "" || env("AGENT_API_KEY") != "":
		return Config{}, fmt.Errorf("%w: AGENT_API_KEY is set but names no endpoint: set --base-url or AGENT_BASE_URL (or run agent config set-llm), or put the key in DEEPSEEK_API_KEY/OPENAI_API_KEY", ErrNoModelConfig)
	default:
		c.Provider = ProviderOllama
	}
	var keyEnv string // the provider's own variable
	switch c.Provider {
	case ProviderDeepSeek:
		c.BaseURL, c.Model, keyEnv = first(c.BaseURL, DeepSeekBaseURL), first(c.Model, DeepSeekModel), "DEEPSEEK_API_KEY"
	case ProviderOpenAI:
		c.BaseURL, c.Model, keyEnv = first(c.BaseURL, env("OPENAI_BASE_URL"), OpenAIBaseURL), first(c.Model, OpenAIModel), "OPENAI_API_KEY"
	case ProviderOllama:
		c.BaseURL, c.Model = first(c.BaseURL, OllamaBaseURL), first(c.Model, OllamaModel)
	default:
		if c.BaseURL == "" {
			return Config{}, fmt.Errorf("%w: provider %q needs a base URL (--base-url, AGENT_BASE_URL or llm.base_url)", ErrNoModelConfig, c.Provider)
		}
		if c.Model == "" {
			return Config{}, fmt.Errorf("%w: no model for %s (--model, AGENT_MODEL or llm.model)", ErrNoModelConfig, redactURL(c.BaseURL))
		}
	}
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Config{}, fmt.Errorf("%w: base URL %q is not an http(s) URL", ErrNoModelConfig, redactURL(c.BaseURL))
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")

	// Keys: --api-key and AGENT_API_KEY are meant for whatever endpoint is
	// in effect. A key from the config file belongs to the file's endpoint,
	// and a provider's own variable to that provider's host: each is sent
	// only there, never to a base URL given elsewhere (a flag, AGENT_BASE_URL).
	fileBase := file.BaseURL
	if fileBase == "" {
		switch strings.ToLower(file.Provider) {
		case ProviderDeepSeek:
			fileBase = DeepSeekBaseURL
		case ProviderOpenAI:
			fileBase = first(env("OPENAI_BASE_URL"), OpenAIBaseURL)
		}
	}
	fileKeyOK := fileBase != "" && sameOrigin(fileBase, c.BaseURL)
	keyEnvOK := false
	switch keyEnv {
	case "DEEPSEEK_API_KEY":
		keyEnvOK = sameOrigin(c.BaseURL, DeepSeekBaseURL)
	case "OPENAI_API_KEY":
		keyEnvOK = sameOrigin(c.BaseURL, OpenAIBaseURL) || env("OPENAI_BASE_URL") != "" && sameOrigin(c.BaseURL, env("OPENAI_BASE_URL"))
	}
	withheld := func(what, owner string) string {
		return fmt.Sprintf("%s is for %s, not sent to %s; set AGENT_API_KEY for this endpoint", what, redactURL(owner), redactURL(c.BaseURL))
	}
	switch {
	case flags.APIKey != "":
		c.APIKey, c.KeySource = flags.APIKey, first(flags.KeySource, "--api-key")
	case env("AGENT_API_KEY") != "":
		c.APIKey, c.KeySource = env("AGENT_API_KEY"), "AGENT_API_KEY"
	case fileKeyOK && file.APIKeyEnv != "" && env(file.APIKeyEnv) != "":
		c.APIKey, c.KeySource = env(file.APIKeyEnv), file.APIKeyEnv
	case fileKeyOK && file.APIKey != "":
		c.APIKey, c.KeySource = file.APIKey, "config file llm.api_key"
	case keyEnvOK && env(keyEnv) != "":
		c.APIKey, c.KeySource = env(keyEnv), keyEnv
	default: // no key: name the variable that should hold one
		switch {
		case fileKeyOK || keyEnvOK && file.APIKeyEnv == "":
			c.KeySource = first(file.APIKeyEnv, keyEnv, "AGENT_API_KEY")
		case keyEnvOK:
			c.KeySource = keyEnv
		default:
			c.KeySource = "AGENT_API_KEY"
		}
		switch {
		case !fileKeyOK && (file.APIKey != "" || file.APIKeyEnv != "" && env(file.APIKeyEnv) != ""):
			owner := fileBase
			if owner == "" {
				owner = "no endpoint named in the file"
			}
			c.KeyWithheld = withheld("the config file's key", owner)
		case !keyEnvOK && keyEnv != "" && env(keyEnv) != "":
			owner := DeepSeekBaseURL
			if keyEnv == "OPENAI_API_KEY" {
				owner = first(env("OPENAI_BASE_URL"), OpenAIBaseURL)
			}
			c.KeyWithheld = withheld(keyEnv, owner)
		}
	}

	if c.Timeout == 0 {
		c.Timeout = time.Duration(file.Timeout)
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	switch {
	case flags.MaxRetries != 0:
		c.MaxRetries = flags.MaxRetries
	case file.MaxRetries != nil:
		c.MaxRetries = *file.MaxRetries
	default:
		c.MaxRetries = DefaultRetries
	}
	c.MaxRetries = max(c.MaxRetries, 0)
	c.EmbeddingModel = first(env("AGENT_EMBEDDING_MODEL"), file.EmbeddingModel, EmbeddingModelFor(c.Provider))
	if strings.EqualFold(c.EmbeddingModel, "none") {
		c.EmbeddingModel = ""
	}
	return c, nil
}

// Default embedding models per provider: OpenAI's small model, and the one
// Ollama documents. DeepSeek has no embeddings API; another endpoint's
// model is not known, so it needs llm.embedding_model.
const (
	OpenAIEmbeddingModel = "text-embedding-3-small"
	OllamaEmbeddingModel = "nomic-embed-text"
)

// EmbeddingModelFor is the default embeddings model of provider, "" when
// it has none.
func EmbeddingModelFor(provider string) string {
	switch provider {
	case ProviderOpenAI:
		return OpenAIEmbeddingModel
	case ProviderOllama:
		return OllamaEmbeddingModel
	}
	return ""
}

// sameOrigin reports whether two URLs name the same scheme, host and port.
func sameOrigin(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil || ua.Host == "" {
		return false
	}
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Hostname(), ub.Hostname()) && port(ua) == port(ub)
}

// providerOf guesses the provider from a base URL.
func providerOf(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ProviderGeneric
	}
	switch h := u.Hostname(); {
	case h == "api.deepseek.com":
		return ProviderDeepSeek
	case h == "api.openai.com":
		return ProviderOpenAI
	case u.Port() == "11434":
		return ProviderOllama
	}
	return ProviderGeneric
}

func first(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// redactURL drops user:password from a URL and masks the values of
// query parameters that carry credentials (?api-key=, ?key=, ?token=,
// ?access_token=, ?sig=).
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	changed := u.User != nil
	u.User = nil
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, kv := range parts {
			k, _, ok := strings.Cut(kv, "=")
			if ok && secretQueryKey(k) {
				parts[i], changed = k+"=[REDACTED]", true
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	if !changed {
		return s
	}
	return u.String()
}

// secretQueryKey reports a query parameter name that carries a credential.
func secretQueryKey(k string) bool {
	k = strings.ToLower(k)
	if k == "sig" || k == "code" {
		return true
	}
	for _, w := range []string{"key", "token", "secret", "password", "passwd", "auth", "signature"} {
		if strings.HasSuffix(k, w) {
			return true
		}
	}
	return false
}
