package safety

import (
	"path"
	"slices"
	"strings"
)

// downloadNames reads where curl and wget write a download whose name
// comes from the URL: curl -O / --remote-name / --remote-name-all writes
// the URL's last segment in --output-dir (or the working directory), over
// a file of that name; wget without -O writes it in -P's directory (or the
// working directory), as NAME.1 when NAME exists. Those names (NAME and
// NAME.1) are write targets. A name the server gives (curl -J, wget
// --content-disposition, a recursive or list download) is known only when
// it runs: high, since undo could not remove it.
func (c *classifier) downloadNames(name string, s scanned, args []arg, r role) {
	remote, serverName, noClobber, hasOut := false, false, false, false
	dir := arg{val: ".", static: true}
	for _, i := range s.opts {
		for _, f := range s.forms(args, i) {
			short := len(f) > 1 && f[0] == '-' && f[1] != '-'
			switch name {
			case "curl":
				if f == "--remote-name" || f == "--remote-name-all" || short && inCluster(f, 'O', "oXHdeEKmruwxyYzAbcDFTCQ") || f == "-O" {
					remote = true
				}
				if f == "--remote-header-name" || short && inCluster(f, 'J', "oXHdeEKmruwxyYzAbcDFTCQ") || f == "-J" {
					serverName = true
				}
				if f == "-o" || f == "--output" || strings.HasPrefix(f, "--output=") || short && inCluster(f, 'o', "XHdeEKmruwxyYzAbcDFTCQ") {
					hasOut = true
				}
			case "wget":
				if f == "-O" || f == "--output-document" || strings.HasPrefix(f, "--output-document=") || short && inCluster(f, 'O', "oaPUetTi") {
					hasOut = true
				}
				if f == "-nc" || f == "--no-clobber" || f == "-N" || f == "--timestamping" {
					noClobber = true
				}
				if f == "--content-disposition" || strings.HasPrefix(f, "--trust-server-names") {
					serverName = true
				}
				if f == "-r" || f == "--recursive" || f == "-m" || f == "--mirror" || f == "-p" || f == "--page-requisites" || f == "-i" || f == "--input-file" || strings.HasPrefix(f, "--input-file=") {
					serverName = true // many files, named by the site
				}
			}
		}
		for _, opt := range map[string][]string{"curl": {"--output-dir"}, "wget": {"-P", "--directory-prefix"}}[name] {
			if v, _, ok := s.value(args, i, opt); ok {
				dir = v
			}
		}
	}
	if name == "curl" && !remote {
		return // output to stdout or -o FILE (a write option)
	}
	if name == "wget" && hasOut {
		return
	}
	if serverName {
		c.add(High, "%s: the file it writes is named by the server or the site when it runs, so undo could not remove it", name)
		return
	}
	for _, i := range s.operands {
		if slices.Contains(r.values, i) {
			continue
		}
		u := args[i]
		if !u.static || !strings.Contains(u.val, "://") {
			continue
		}
		rest := u.val[strings.Index(u.val, "://")+3:]
		rest, _, _ = strings.Cut(rest, "?")
		rest, _, _ = strings.Cut(rest, "#")
		_, p, _ := strings.Cut(rest, "/")
		base := path.Base("/" + p)
		if base == "/" || base == "." || base == ".." || p == "" || strings.HasSuffix(p, "/") {
			c.add(High, "%s %s: the URL names no file, so the file it writes is named when it runs", name, u.text)
			continue
		}
		out := strings.TrimRight(dir.val, "/") + "/" + base
		c.write(name, arg{val: out, text: u.text + " (as " + base + ")", static: dir.static, tilde: dir.tilde}, wContent)
		if name == "wget" && !noClobber {
			// NAME taken: wget writes NAME.1 (NAME.2 … when those are
			// taken too: not covered).
			c.write(name, arg{val: out + ".1", text: u.text + " (as " + base + ".1)", static: dir.static, tilde: dir.tilde}, wContent)
		}
	}
}
