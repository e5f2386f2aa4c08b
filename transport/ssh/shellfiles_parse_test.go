package ssh

import (
	"io/fs"
	"strings"
	"testing"
)

func TestParseStat(t *testing.T) {
	fi, err := parseStat("x", "81a4 5 1700000000 1000 100")
	if err != nil || fi.Mode() != 0o644 || fi.Size() != 5 || fi.ModTime().Unix() != 1700000000 || fi.IsDir() {
		t.Fatalf("%v %v", fi, err)
	}
	fi, err = parseStat("d", "43ff 4096 1 0 0")
	if err != nil || fi.Mode() != fs.ModeDir|fs.ModeSticky|0o777 {
		t.Fatalf("sticky dir: %v %v", fi.Mode(), err)
	}
	fi, err = parseStat("s", "89ed 1 1 0 0")
	if err != nil || fi.Mode() != fs.ModeSetuid|0o755 {
		t.Fatalf("setuid: %v %v", fi.Mode(), err)
	}
	for _, bad := range []string{"", "81a4 5 1 1", "zz 5 1 1 1", "81a4 -5 1 1 1", "81a4 5 1 1 1 1", "81a4 5 x 1 1", "81a4 5 1 -1 1"} {
		if _, err := parseStat("x", bad); err == nil {
			t.Errorf("parseStat(%q): no error", bad)
		}
	}
}

func TestParseDirListing(t *testing.T) {
	fis, err := parseDirListing("81a4 5 1 0 0 a b\x00a1ff 4 1 0 0 l\x00")
	if err != nil || len(fis) != 2 || fis[0].Name() != "a b" || fis[1].Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("%v %v", fis, err)
	}
	if fis, err := parseDirListing(""); err != nil || len(fis) != 0 {
		t.Errorf("empty: %v %v", fis, err)
	}
	for _, bad := range []string{"81a4 5 1 0 0 a", "81a4 5 1 0 0 \x00", "81a4 5 1 0 0 a/b\x00", "x\x00", "81a4 5 1 0 a\x00"} {
		if _, err := parseDirListing(bad); err == nil {
			t.Errorf("parseDirListing(%q): no error", bad)
		}
	}
}

func TestSumLine(t *testing.T) {
	if got := sumLine("noise\nagent-sum 12 abc\n"); got != "12 abc" {
		t.Errorf("%q", got)
	}
	for _, bad := range []string{"", "agent-sum 12\n", "agent-sum\n", "x agent-sum 1 2\n"} {
		if got := sumLine(bad); got != "" {
			t.Errorf("sumLine(%q) = %q", bad, got)
		}
	}
}

func FuzzParseDirListing(f *testing.F) {
	f.Add("81a4 5 1 0 0 a b\x00a1ff 4 1 0 0 l\x00")
	f.Add("")
	f.Add("x\x00")
	f.Fuzz(func(t *testing.T, s string) {
		fis, err := parseDirListing(s)
		if err != nil {
			return
		}
		for _, fi := range fis {
			if fi.Name() == "" || strings.Contains(fi.Name(), "/") || fi.Size() < 0 {
				t.Fatalf("entry %q size %d from %q", fi.Name(), fi.Size(), s)
			}
		}
	})
}

func FuzzParseStat(f *testing.F) {
	f.Add("81a4 5 1700000000 1000 100")
	f.Add("43ff 4096 1 0 0")
	f.Fuzz(func(t *testing.T, s string) {
		fi, err := parseStat("x", s)
		if err == nil && fi.Size() < 0 {
			t.Fatalf("negative size from %q", s)
		}
	})
}

func FuzzGatedDropbear(f *testing.F) {
	for _, s := range []string{"SSH-2.0-dropbear_2022.83", "SSH-2.0-dropbear_2024.84", "SSH-2.0-OpenSSH_9.2p1", "SSH-2.0-dropbear"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if gatedDropbear(v) && !strings.HasPrefix(v, "SSH-2.0-dropbear") {
			t.Fatalf("%q gated", v)
		}
	})
}
