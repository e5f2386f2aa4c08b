package tools

import (
	"reflect"
	"strings"
)

// A file whose name is not UTF-8 is shown to the model with each such byte
// as \xHH (executor: JSON cannot carry the byte); a path parameter takes
// \xHH with HH in 80–ff back as that byte, after the JSON decoding that
// would have lost it, so the path the safety checks, the journal and the
// tool see is the file's real name. \xHH below 80 is left as written: it
// is never how agent shows a byte, and a real name may hold it.

// pathParameters are the parameters that name a path.
var pathParameters = []string{"file_path", "remote_path", "local_path", "path"}

// DecodeHighBytes turns each \xHH with HH in 80–ff back into its byte.
func DecodeHighBytes(p string) string {
	if !strings.Contains(p, `\x`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) && p[i+1] == 'x' {
			if h, ok := hexByte(p[i+2:]); ok && h >= 0x80 {
				b.WriteByte(h)
				i += 3
				continue
			}
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// hexByte reads two hex digits at the start of s.
func hexByte(s string) (byte, bool) {
	if len(s) < 2 {
		return 0, false
	}
	v := 0
	for _, c := range []byte(s[:2]) {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return byte(v), true
}

// decodePaths applies DecodeHighBytes to p's string fields whose JSON
// name is a path parameter (p: a pointer to a params struct).
func decodePaths(p any) {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return
	}
	v = v.Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Type.Kind() != reflect.String || !v.Field(i).CanSet() {
			continue
		}
		for _, pp := range pathParameters {
			if name == pp {
				v.Field(i).SetString(DecodeHighBytes(v.Field(i).String()))
			}
		}
	}
}
