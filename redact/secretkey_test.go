package redact

import "testing"

// SecretKey's ASCII path says what the regular expressions say.
func TestSecretKeyLikeRegexps(t *testing.T) {
	for _, name := range []string{"", "PASSWORD", "db_password", "MYSQL_PWD", "PWD", "pwd", "x.pwd", "xpwd",
		"PASS", "pass", "SSH_PASS", "bypass", "passphrase", "KEY_PASSPHRASE", "mypassphrase", "pass_file",
		"GITHUB_TOKEN", "tokens", "API_KEY", "apikey", "api-key", "Api_Key_Id", "apix_key", "AUTHORIZATION",
		"private_key", "PRIVATEKEY", "private-key", "privat_key", "client_secret", "HOME", "PATH",
		"paſſword", "\u212aEY", "API_\u212aEY", "ſecret", "ab\xffpass", "SUPER_LONG_NAME_OF_MORE_THAN_SIXTY_FOUR_BYTES_THAT_ENDS_IN_A_PASSWORD"} {
		want := secretKeyRE.MatchString(name) || passKeyRE.MatchString(name)
		if got := SecretKey(name); got != want {
			t.Errorf("SecretKey(%q) = %v, the regular expressions say %v", name, got, want)
		}
	}
}

func FuzzSecretKey(f *testing.F) {
	for _, s := range []string{"PASSWORD", "MYSQL_PWD", "x-pass", "API-KEY", "paſſword", "\u212aEY"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		want := secretKeyRE.MatchString(name) || passKeyRE.MatchString(name)
		if got := SecretKey(name); got != want {
			t.Fatalf("SecretKey(%q) = %v, the regular expressions say %v", name, got, want)
		}
	})
}

// BenchmarkSecretKey is SecretKey over an environment's names.
func BenchmarkSecretKey(b *testing.B) {
	names := []string{"HOME", "PATH", "TERM", "LANG", "SHELL", "USER", "XDG_STATE_HOME", "GOPATH", "OPENAI_API_KEY", "BENCH_TOKEN_1"}
	for b.Loop() {
		for _, n := range names {
			SecretKey(n)
		}
	}
}

// BenchmarkSecretKeyRegexps is BenchmarkSecretKey by the regular
// expressions alone: SecretKey before its ASCII path.
func BenchmarkSecretKeyRegexps(b *testing.B) {
	names := []string{"HOME", "PATH", "TERM", "LANG", "SHELL", "USER", "XDG_STATE_HOME", "GOPATH", "OPENAI_API_KEY", "BENCH_TOKEN_1"}
	for b.Loop() {
		for _, n := range names {
			_ = secretKeyRE.MatchString(n) || passKeyRE.MatchString(n)
		}
	}
}
