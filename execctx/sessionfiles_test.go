package execctx

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func touched(c *Context, host, p string, op FileEvent, size int64, at time.Time) {
	c.Touch(SessionFile{Host: host, Path: p, Ops: []FileEvent{op}, Size: size, When: at})
}

func paths(fs []SessionFile) string {
	var s []string
	for _, f := range fs {
		s = append(s, f.Path)
	}
	return strings.Join(s, " ")
}

// TestFindFilesReferences: this, these, previous and all across two
// tasks, by type and by name.
func TestFindFilesReferences(t *testing.T) {
	c := New()
	t0 := time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)
	c.BeginTask()
	touched(c, "web", "/etc/nginx/nginx.conf", FileRead, 1200, t0)
	touched(c, "web", "/var/log/app.log", FileDownloaded, 5000, t0.Add(time.Second))
	c.BeginTask()
	touched(c, "web", "/tmp/a.log", FileUploaded, 10, t0.Add(2*time.Second))
	touched(c, "web", "/tmp/b.log.1", FileUploaded, 20, t0.Add(3*time.Second))
	touched(c, "web", "/srv/app/config.yaml", FileEdited, 300, t0.Add(4*time.Second))
	touched(c, "web", "/srv/app/config.yaml", FileRead, -1, t0.Add(5*time.Second))

	for _, tc := range []struct {
		q    FileQuery
		want string
	}{
		{FileQuery{Reference: RefThis}, "/srv/app/config.yaml"},
		{FileQuery{Reference: RefThis, FileType: "log"}, "/tmp/b.log.1"},
		{FileQuery{Reference: RefThese, FileType: "log", Count: 2}, "/tmp/b.log.1 /tmp/a.log"},
		{FileQuery{Reference: RefThese, FileType: "log"}, "/tmp/b.log.1 /tmp/a.log"},
		{FileQuery{Reference: RefThese}, "/srv/app/config.yaml /tmp/b.log.1 /tmp/a.log"},
		{FileQuery{Reference: RefPrevious}, "/var/log/app.log"},
		{FileQuery{Reference: RefPrevious, FileType: "config"}, "/etc/nginx/nginx.conf"},
		{FileQuery{Reference: RefAll, FileType: "config"}, "/srv/app/config.yaml /etc/nginx/nginx.conf"},
		{FileQuery{Reference: RefAll, FileType: "yaml"}, "/srv/app/config.yaml"},
		{FileQuery{Reference: RefAll, Name: "*.log"}, "/tmp/a.log /var/log/app.log"},
		{FileQuery{Name: "NGINX"}, "/etc/nginx/nginx.conf"},
		{FileQuery{Reference: RefAll, Count: 1}, "/srv/app/config.yaml"},
		{FileQuery{FileType: "archive"}, ""},
	} {
		got, err := c.FindFiles(tc.q)
		if err != nil || paths(got) != tc.want {
			t.Errorf("%+v: %q %v, want %q", tc.q, paths(got), err, tc.want)
		}
	}
	all := c.SessionFiles()
	cfg := all[0]
	if cfg.Size != 300 || fmt.Sprint(cfg.Ops) != "[edited read]" || !cfg.First.Equal(t0.Add(4*time.Second)) || !cfg.When.Equal(t0.Add(5*time.Second)) {
		t.Errorf("merged entry %+v", cfg)
	}
	// One task only: previous is the one before this.
	c2 := New()
	touched(c2, "h", "/a", FileRead, 1, t0)
	touched(c2, "h", "/b", FileRead, 1, t0)
	if got, _ := c2.FindFiles(FileQuery{Reference: RefPrevious}); paths(got) != "/a" {
		t.Errorf("previous in one task: %q", paths(got))
	}
}

func TestFindFilesBadQuery(t *testing.T) {
	c := New()
	for _, q := range []FileQuery{
		{Reference: "that"}, {Count: -1}, {Count: MaxFileQueryCount + 1}, {Reference: RefThis, Count: 2},
		{Name: "[a-"}, {FileType: "a\x00b"},
	} {
		if _, err := c.FindFiles(q); err == nil {
			t.Errorf("%+v: no error", q)
		}
	}
}

// TestSessionFilesSummary: the summary shows the newest entries within its
// bound, newest last, with a count of the others.
func TestSessionFilesSummary(t *testing.T) {
	c := New()
	for i := 0; i < MaxSessionFiles+50; i++ {
		touched(c, "web01", fmt.Sprintf("/data/f%04d.log", i), FileUploaded, int64(i*1000), time.Unix(int64(i), 0))
	}
	if n := len(c.SessionFiles()); n != MaxSessionFiles {
		t.Fatalf("%d entries, want %d", n, MaxSessionFiles)
	}
	s := c.Summary(4000)
	if len(s) > 4000 || !strings.Contains(s, "Files of this session") || !strings.Contains(s, "uploaded /data/f1049.log (on web01, 1.0 MiB") ||
		strings.Contains(s, "/data/f0000.log") || !strings.Contains(s, "earlier\n") {
		t.Fatalf("summary:\n%s", s)
	}
	if strings.Index(s, "f1048.log") > strings.Index(s, "f1049.log") {
		t.Errorf("newest not last:\n%s", s)
	}
}

// FuzzFileQuery: any parameters give a result or an error, never a
// panic, and never more files than asked.
func FuzzFileQuery(f *testing.F) {
	f.Add("this", "log", "", 0)
	f.Add("these", "", "*.conf", 2)
	f.Add("previous", "config", "[", 1)
	f.Add("all", ".YAML", "app", 300)
	f.Fuzz(func(t *testing.T, ref, typ, name string, count int) {
		c := New()
		c.BeginTask()
		touched(c, "h", "/a/app.log", FileRead, 1, time.Unix(1, 0))
		c.BeginTask()
		touched(c, "h", "/b/app.conf", FileEdited, 2, time.Unix(2, 0))
		touched(c, "h", "/c/x.yaml", FileUploaded, 3, time.Unix(3, 0))
		got, err := c.FindFiles(FileQuery{Reference: ref, FileType: typ, Name: name, Count: count})
		if err != nil {
			return
		}
		if count > 0 && len(got) > count || ref == RefThis && len(got) > 1 {
			t.Fatalf("%d files for count %d ref %q", len(got), count, ref)
		}
		_ = c.Summary(500)
	})
}
