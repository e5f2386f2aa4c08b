package statedir

import (
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"
)

func TestDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/xdg/state")
	t.Setenv("HOME", "/home/u")
	for _, tc := range []struct {
		f    func() (string, error)
		want string
	}{
		{Dir, "/xdg/state/agent"},
		{AuditPath, "/xdg/state/agent/audit.log"},
		{SessionsDir, "/xdg/state/agent/sessions"},
	} {
		if got, err := tc.f(); err != nil || got != tc.want {
			t.Errorf("got %q, %v; want %q", got, err, tc.want)
		}
	}
	for _, v := range []string{"", "relative/state"} {
		t.Setenv("XDG_STATE_HOME", v)
		if got, err := Dir(); err != nil || got != filepath.FromSlash("/home/u/.local/state/agent") {
			t.Errorf("XDG_STATE_HOME=%q: %q, %v", v, got, err)
		}
	}
}

func TestSessionID(t *testing.T) {
	id := newSessionID(mustTime(t, "2026-11-21T09:01:02+02:00"))
	if !regexp.MustCompile(`^20261121T070102Z-[0-9a-f]{6}$`).MatchString(id) {
		t.Errorf("id %q", id)
	}
	var ids []string
	for i := range 5 {
		ids = append(ids, newSessionID(mustTime(t, "2026-11-21T09:01:02Z").Add(time.Duration(i)*time.Hour*30)))
	}
	if !slices.IsSorted(ids) {
		t.Errorf("not sorted by time: %q", ids)
	}
	if err := CheckSessionID(NewSessionID()); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"", "..", "a/b", "-x", "a b", "é"} {
		if err := CheckSessionID(bad); !errors.Is(err, ErrBadSessionID) {
			t.Errorf("CheckSessionID(%q) = %v", bad, err)
		}
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
