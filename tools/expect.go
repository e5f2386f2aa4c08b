package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"

	"github.com/autoshell/agent/transport"
)

// AbsentSHA stands for the content of a file that does not exist, in
// FileChange.OldSHA256 and for WithExpectedContent.
const AbsentSHA = "absent"

type expectedKey struct{}

// WithExpectedContent returns a ctx under which write_file, edit_file and
// upload_file refuse to change the file at path (the resolved absolute
// path, as in FileChange.Path) unless its current content still has the
// SHA-256 sha256hex (hex; AbsentSHA: the file must not exist). The value to
// pass is the FileChanges[i].OldSHA256 of the Preview that was approved, so
// that what runs is what was shown: a file changed in between fails with a
// tool error ("file changed since the change was approved; run again").
// Calls for several paths accumulate.
func WithExpectedContent(ctx context.Context, path string, sha256hex string) context.Context {
	old, _ := ctx.Value(expectedKey{}).(map[string]string)
	m := make(map[string]string, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[cleanPath(path)] = strings.ToLower(sha256hex)
	return context.WithValue(ctx, expectedKey{}, m)
}

func cleanPath(p string) string {
	if p == "" {
		return p
	}
	return path.Clean(p)
}

// expectedContent returns the SHA-256 ctx expects for the file at p.
func expectedContent(ctx context.Context, p string) (string, bool) {
	m, _ := ctx.Value(expectedKey{}).(map[string]string)
	sha, ok := m[cleanPath(p)]
	return sha, ok
}

// checkExpected fails when ctx expects other content at p than the
// digest got (AbsentSHA for a missing file).
func checkExpected(ctx context.Context, p, got string) error {
	if want, ok := expectedContent(ctx, p); ok && want != got {
		return fail("%s: file changed since the change was approved; run again", p)
	}
	return nil
}

// contentSHA is the digest of cur for FileChange.OldSHA256 and
// WithExpectedContent.
func contentSHA(cur current) string {
	if !cur.existed {
		return AbsentSHA
	}
	return sha(cur.data)
}

// hashRemote streams the file at p through SHA-256 without holding it.
func hashRemote(ctx context.Context, tr transport.Transport, p string) (string, error) {
	h := sha256.New()
	if _, err := tr.ReadFile(ctx, p, h); err != nil {
		return "", fileErr(ctx, "read", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
