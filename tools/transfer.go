package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/autoshell/agent/safety"
	"github.com/autoshell/agent/transport"
)

// Names of the transfer tools.
const (
	UploadFileName   = "upload_file"
	DownloadFileName = "download_file"
)

// TransferParams are upload_file's and download_file's parameters.
type TransferParams struct {
	LocalPath  string `json:"local_path" description:"Path on the operator's machine."`
	RemotePath string `json:"remote_path" description:"Path on the target."`
	Overwrite  bool   `json:"overwrite,omitempty" description:"Replace an existing local_path (download)."`
}

func (p *TransferParams) check() error {
	if p.LocalPath == "" || p.RemotePath == "" {
		return errors.New("local_path and remote_path are required")
	}
	return nil
}

// Transfer copies a file between the operator's machine and the target,
// streaming (never holding the whole file) and atomically at the
// destination. The policy's path rules apply to the remote path (and the
// ".." rules to the local one); its size caps do not: transfers are for big
// files. Progress goes to the WithProgress hook.
type Transfer struct {
	base[TransferParams]
	c      *config
	upload bool
}

// NewUploadFile returns upload_file.
func NewUploadFile(policy safety.Policy, opts ...Option) *Transfer {
	return newUploadFile(newConfig(policy, opts))
}

// NewDownloadFile returns download_file.
func NewDownloadFile(policy safety.Policy, opts ...Option) *Transfer {
	return newDownloadFile(newConfig(policy, opts))
}

func newUploadFile(c *config) *Transfer {
	return &Transfer{c: c, upload: true, base: newBase[TransferParams](UploadFileName,
		"Copy local_path from the operator's machine to remote_path on the target.")}
}

func newDownloadFile(c *config) *Transfer {
	return &Transfer{c: c, base: newBase[TransferParams](DownloadFileName,
		"Copy remote_path from the target to local_path on the operator's machine.")}
}

// Run transfers the file.
func (t *Transfer) Run(ctx context.Context, tr transport.Transport, raw json.RawMessage) (Output, error) {
	return t.do(ctx, tr, raw, true)
}

// Preview checks the transfer as Run would and describes it without
// copying anything. For upload_file, FilesChanged[0].OldSHA256 is the
// destination's digest (AbsentSHA when it does not exist), for
// WithExpectedContent.
func (t *Transfer) Preview(ctx context.Context, tr transport.Transport, raw json.RawMessage) (Output, error) {
	return t.do(ctx, tr, raw, false)
}

func (t *Transfer) do(ctx context.Context, tr transport.Transport, raw json.RawMessage, write bool) (Output, error) {
	p, err := t.params(raw)
	if err != nil {
		return invalid(t.name, err), nil
	}
	return t.doTyped(ctx, tr, p, write)
}

func (t *Transfer) run(ctx context.Context, tr transport.Transport, p TransferParams) (Output, error) {
	return t.doTyped(ctx, tr, p, true)
}

func (t *Transfer) preview(ctx context.Context, tr transport.Transport, p TransferParams) (Output, error) {
	return t.doTyped(ctx, tr, p, false)
}

// Touches reports the remote file (Files[0]) and the local one of the
// transfer: upload_file writes remote_path and reads local_path,
// download_file reads remote_path and writes local_path. Either is at
// least medium: it moves data between the target and this machine.
func (t *Transfer) Touches(raw json.RawMessage) (Effects, error) {
	p, err := t.params(raw)
	if err != nil {
		return Effects{}, err
	}
	return t.touches(p), nil
}

func (t *Transfer) touches(p TransferParams) Effects {
	if t.upload {
		return Effects{
			Files: []Access{{Op: safety.FileWrite, Path: p.RemotePath},
				{Op: safety.FileRead, Path: p.LocalPath, Local: true}},
			Min:    safety.Medium,
			Reason: fmt.Sprintf("%s: copies %s from this machine to the host", UploadFileName, p.LocalPath),
		}
	}
	local := downloadTo(p)
	return Effects{
		Files: []Access{{Op: safety.FileRead, Path: p.RemotePath},
			{Op: safety.FileWrite, Path: local, Local: true}},
		Min:    safety.Medium,
		Reason: fmt.Sprintf("%s: writes %s on this machine", DownloadFileName, local),
	}
}

// downloadTo is the operator's file a download writes, as written (a
// "~/…", absolute or relative path): local_path, or the remote file's
// name inside it when local_path is a directory on this machine. Touches
// and the download use it alike, so the file the rules judge is the file
// written.
func downloadTo(p TransferParams) string {
	abs, err := localPath(p.LocalPath)
	if err != nil {
		return p.LocalPath
	}
	if st, err := os.Stat(abs); err == nil && st.IsDir() {
		return strings.TrimSuffix(p.LocalPath, "/") + "/" + path.Base(path.Clean(p.RemotePath))
	}
	return p.LocalPath
}

func (t *Transfer) doTyped(ctx context.Context, tr transport.Transport, p TransferParams, write bool) (Output, error) {
	lp := p.LocalPath
	if !t.upload {
		lp = downloadTo(p)
	}
	local, err := localPath(lp)
	if err != nil {
		return ErrorOutput("%s: %v", t.name, err), nil
	}
	var out Output
	if t.upload {
		out, err = t.up(ctx, tr, local, p.RemotePath, write)
	} else {
		out, err = t.down(ctx, tr, local, p, write)
	}
	return finish(t.name, out, err)
}

func localPath(p string) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("local home directory: %w", err)
	}
	if !strings.HasPrefix(p, "~") && !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("local working directory: %w", err)
		}
		return safety.ResolvePath(p, wd)
	}
	return safety.ResolvePath(p, home)
}

func (t *Transfer) up(ctx context.Context, tr transport.Transport, local, remote string, write bool) (Output, error) {
	path, err := t.c.resolve(ctx, tr, safety.FileWrite, remote)
	if err != nil {
		return Output{}, err
	}
	f, err := os.Open(local)
	if err != nil {
		return Output{}, fail("%s: %v", local, unwrapPath(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return Output{}, fail("%s is not a regular file", local)
	}
	_, expect := expectedContent(ctx, path)
	cur, oldSHA, err := t.destination(ctx, tr, path, !write || expect)
	if err != nil {
		return Output{}, err
	}
	fc := FileChange{Path: path, Existed: cur.existed, OldSHA256: oldSHA, OldMode: cur.mode}
	if !write {
		out := TextOutput(fmt.Sprintf("would upload %s to %s (%d bytes)\n", local, path, fi.Size()))
		out.FilesChanged = []FileChange{fc}
		return out, nil
	}
	if err := checkExpected(ctx, path, oldSHA); err != nil {
		return Output{}, err
	}
	if t.c.beforeChange != nil {
		if err := t.c.beforeChange(ctx, tr, fc, cur.data); err != nil {
			return Output{}, fmt.Errorf("undo journal for %s: %w", path, err)
		}
	}
	h := sha256.New()
	r := &progressReader{r: io.TeeReader(f, h), total: fi.Size(), report: t.report(path)}
	n, err := tr.WriteFile(ctx, path, r, fi.Mode().Perm())
	if err != nil {
		return Output{}, fileErr(ctx, "upload to", path, err)
	}
	fc.NewSHA256, fc.Size = hex.EncodeToString(h.Sum(nil)), n
	out := TextOutput(fmt.Sprintf("uploaded %s to %s (%d bytes)\n", local, path, n))
	out.FilesChanged = []FileChange{fc}
	return out, nil
}

// destination looks at the file an upload replaces. With the undo hook
// set, its content is read for the journal, and an upload over a file
// whose content cannot be captured (over MaxWriteBytes, unreadable) is
// refused: undo would otherwise empty it. Its digest is computed when the
// content is read or hash is set; else the digest is "" for an existing
// file.
func (t *Transfer) destination(ctx context.Context, tr transport.Transport, path string, hash bool) (current, string, error) {
	fi, err := tr.Stat(ctx, path)
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist) && !infraError(ctx, err):
		return current{}, AbsentSHA, nil
	case err != nil:
		return current{}, "", fileErr(ctx, "stat", path, err)
	case fi.IsDir():
		return current{}, "", fail("%s is a directory; give the file's full path", path)
	case !fi.Mode().IsRegular():
		return current{}, "", fail("%s exists and is not a regular file", path)
	}
	if t.c.beforeChange == nil {
		cur := current{existed: true, mode: fi.Mode().Perm()}
		if !hash {
			return cur, "", nil
		}
		sum, err := hashRemote(ctx, tr, path)
		return cur, sum, err
	}
	if limit := t.c.policy.MaxWriteBytes; limit > 0 && fi.Size() > limit {
		return current{}, "", fail("%s cannot be undone: existing file is %d bytes, over the journal limit of %d bytes; remove it first or raise max_write_bytes",
			path, fi.Size(), limit)
	}
	cur, err := t.c.readCurrent(ctx, tr, safety.FileWrite, path, true)
	var fl *failure
	if errors.As(err, &fl) {
		return current{}, "", fail("%s cannot be undone: the existing file could not be read for the undo journal (%s); remove it first", path, fl.msg)
	}
	if err != nil {
		return current{}, "", err
	}
	if cur.existed && cur.data == nil {
		return current{}, "", fail("%s cannot be undone: the existing content could not be captured", path)
	}
	return cur, contentSHA(cur), nil
}

func (t *Transfer) down(ctx context.Context, tr transport.Transport, local string, p TransferParams, write bool) (Output, error) {
	path, err := t.c.resolve(ctx, tr, safety.FileRead, p.RemotePath)
	if err != nil {
		return Output{}, err
	}
	fi, err := tr.Stat(ctx, path)
	if err != nil {
		return Output{}, fileErr(ctx, "stat", path, err)
	}
	if !fi.Mode().IsRegular() {
		return Output{}, fail("%s is not a regular file", path)
	}
	// Never replace an operator's file unless asked to (and approved:
	// the executor rates it high); the undo journal saves it first.
	if st, err := os.Lstat(local); err == nil {
		if !p.Overwrite {
			return Output{}, fail("%s already exists on this machine; set overwrite to true to replace it or choose another local_path", local)
		}
		if st.IsDir() {
			return Output{}, fail("%s is a directory", local)
		}
	}
	if !write {
		return TextOutput(fmt.Sprintf("would download %s to %s (%d bytes)\n", path, local, fi.Size())), nil
	}
	fc, err := t.journalLocal(ctx, tr, local)
	if err != nil {
		return Output{}, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(local), "."+filepath.Base(local)+".agent-*")
	if err != nil {
		return Output{}, fail("%v", unwrapPath(err))
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	_, lerr := os.Lstat(local)
	replaces := lerr == nil
	w := &progressWriter{w: tmp, sum: sha256.New(), total: fi.Size(), report: t.report(path)}
	n, err := tr.ReadFile(ctx, path, w)
	if err == nil && replaces {
		// The replaced file's content must survive a crash until the new
		// one is on disk; a new name loses nothing (scp does not sync).
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Output{}, fileErr(ctx, "download", path, err)
	}
	if err := os.Chmod(tmp.Name(), fi.Mode().Perm()); err != nil {
		return Output{}, fmt.Errorf("download %s: %w", local, err)
	}
	if err := os.Rename(tmp.Name(), local); err != nil {
		return Output{}, fail("%v", unwrapPath(err))
	}
	out := TextOutput(fmt.Sprintf("downloaded %s to %s (%d bytes)\n", path, local, n))
	fc.NewSHA256, fc.Size = hex.EncodeToString(w.sum.Sum(nil)), n
	out.FilesChanged = []FileChange{fc}
	return out, nil
}

// journalLocal hands the operator's file a download is about to write
// (its content when it exists, bounded as a target's is) to the undo
// hook, so that agent undo removes or restores it. An existing file
// whose content cannot be captured is not replaced.
func (t *Transfer) journalLocal(ctx context.Context, tr transport.Transport, local string) (FileChange, error) {
	fc := FileChange{Path: local, OldSHA256: AbsentSHA, Local: true}
	var old []byte
	st, err := os.Lstat(local)
	switch {
	case err == nil && !st.Mode().IsRegular():
		return fc, fail("%s exists on this machine and is not a regular file", local)
	case err == nil:
		if limit := t.c.policy.MaxWriteBytes; limit > 0 && st.Size() > limit {
			return fc, fail("%s cannot be undone: existing file is %d bytes, over the journal limit of %d bytes; choose another local_path",
				local, st.Size(), limit)
		}
		if old, err = os.ReadFile(local); err != nil {
			return fc, fail("%s cannot be undone: %v", local, unwrapPath(err))
		}
		fc.Existed, fc.OldMode, fc.OldSHA256 = true, st.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky), sha(old)
	case !errors.Is(err, fs.ErrNotExist):
		return fc, fail("%v", unwrapPath(err))
	}
	if t.c.beforeChange != nil {
		if err := t.c.beforeChange(ctx, tr, fc, old); err != nil {
			return fc, fmt.Errorf("undo journal for %s on this machine: %w", local, err)
		}
	}
	return fc, nil
}

func (t *Transfer) report(path string) func(done, total int64) {
	if t.c.progress == nil {
		return nil
	}
	return func(done, total int64) { t.c.progress(t.name, path, done, total) }
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}

type progressReader struct {
	r           io.Reader
	done, total int64
	report      func(done, total int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.done += int64(n)
	if p.report != nil && n > 0 {
		p.report(p.done, p.total)
	}
	return n, err
}

type progressWriter struct {
	w           io.Writer
	sum         hash.Hash
	done, total int64
	report      func(done, total int64)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.sum.Write(b[:n])
	p.done += int64(n)
	if p.report != nil && n > 0 {
		p.report(p.done, p.total)
	}
	return n, err
}
