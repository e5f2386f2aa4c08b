package confine

import (
	"slices"
	"testing"
)

func TestStepEnviron(t *testing.T) {
	in := []string{"PATH=/bin", "GITHUB_TOKEN=t", "AWS_SECRET_ACCESS_KEY=k", "PWD=/h", "OLDPWD=/", "DB_PASSWORD=p",
		"JAVA_HOME=/j", "SSH_AUTH_SOCK=/s", "api_key=x", "LD_LIBRARY_PATH=/l", "noequals"}
	want := []string{"PATH=/bin", "PWD=/h", "OLDPWD=/", "JAVA_HOME=/j", "LD_LIBRARY_PATH=/l", "noequals"}
	if got := stepEnviron(in); !slices.Equal(got, want) {
		t.Errorf("stepEnviron = %q, want %q", got, want)
	}
}
