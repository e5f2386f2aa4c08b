package redact

import (
	"regexp"
	"strings"
)

// SQL dumps (mysqldump, pg_dump, sqlite3 .dump) hold a table's rows
// without a name beside each value: the column names are in the table's
// CREATE TABLE, an INSERT's column list or a COPY's. harvestSQL names
// each row's values by their columns, so that a password column's values
// are learnt like a settings file's secret-named keys (`grep INSERT
// dump.sql | cut -d"'" -f4` then shows none of them).

var (
	// CREATE TABLE `users` ( … ): the table and the text after "("
	sqlCreateRE = regexp.MustCompile("(?i)\\bCREATE\\s+TABLE\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?([`\"\\[\\]\\w.]+)\\s*\\(")
	// INSERT INTO `users` (`id`,`pw`) VALUES … ; the column list optional
	sqlInsertRE = regexp.MustCompile("(?i)\\bINSERT\\s+(?:IGNORE\\s+|OR\\s+\\w+\\s+)?INTO\\s+([`\"\\[\\]\\w.]+)\\s*(\\([^()]*\\))?\\s*VALUES\\s*")
	// COPY public.accounts (id, email, pwd) FROM stdin;
	sqlCopyRE = regexp.MustCompile("(?i)^COPY\\s+([`\"\\w.]+)\\s*\\(([^()]*)\\)\\s+FROM\\s+stdin")
)

// maxSQLRows bounds the rows of one statement read: a dump's data, not a
// settings file, past that.
const maxSQLRows = 4096

// harvestSQL calls add for the values of the secret-named columns of
// text's INSERT and COPY rows; nothing when text holds no such statement.
func harvestSQL(text string, add func(key, value string)) {
	if !strings.Contains(text, "INSERT") && !strings.Contains(text, "insert") && !strings.Contains(text, "COPY ") {
		return
	}
	tables := map[string][]string{}
	for _, m := range sqlCreateRE.FindAllStringSubmatchIndex(text, -1) {
		tables[sqlIdent(text[m[2]:m[3]])] = sqlColumns(text[m[1]:])
	}
	for _, m := range sqlInsertRE.FindAllStringSubmatchIndex(text, -1) {
		cols := tables[sqlIdent(text[m[2]:m[3]])]
		if m[4] >= 0 {
			cols = splitIdents(text[m[4]+1 : m[5]-1])
		}
		table := sqlIdent(text[m[2]:m[3]])
		if !anySecretName(cols) && !sqlNamedValues(table, cols) {
			continue
		}
		rest := text[m[1]:]
		for n := 0; n < maxSQLRows; n++ {
			rest = strings.TrimLeft(rest, " \t\r\n,")
			if !strings.HasPrefix(rest, "(") {
				break
			}
			vals, used := sqlTuple(rest)
			if used == 0 {
				break
			}
			rest = rest[used:]
			sqlRow(table, cols, vals, add)
		}
	}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		m := sqlCopyRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		cols := splitIdents(m[2])
		for n := 0; i+1 < len(lines) && n < maxSQLRows; n++ {
			i++
			row := strings.TrimSuffix(lines[i], "\r")
			if row == `\.` {
				break
			}
			if !anySecretName(cols) {
				continue
			}
			for j, v := range strings.Split(row, "\t") {
				if j < len(cols) && SecretName(cols[j]) && v != `\N` {
					add(cols[j], v)
				}
			}
		}
	}
}

// sqlColumns are the column names of a CREATE TABLE's body (text after
// its "("): each definition's first word, constraints left out.
func sqlColumns(body string) []string {
	depth, start := 0, 0
	var defs []string
	for i := 0; i < len(body) && i < 1<<16; i++ {
		switch body[i] {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				defs = append(defs, body[start:i])
				i = len(body)
				continue
			}
			depth--
		case ',':
			if depth == 0 {
				defs = append(defs, body[start:i])
				start = i + 1
			}
		case '\'':
			if j := strings.IndexByte(body[i+1:], '\''); j >= 0 {
				i += j + 1
			}
		}
	}
	var cols []string
	for _, d := range defs {
		f := strings.Fields(d)
		if len(f) == 0 {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "PRIMARY", "UNIQUE", "KEY", "INDEX", "CONSTRAINT", "FOREIGN", "CHECK", "FULLTEXT", "SPATIAL":
			continue
		}
		cols = append(cols, sqlIdent(f[0]))
	}
	return cols
}

// splitIdents splits "`a`, b, \"c\"" into its names.
func splitIdents(list string) []string {
	var out []string
	for _, c := range strings.Split(list, ",") {
		out = append(out, sqlIdent(strings.TrimSpace(c)))
	}
	return out
}

// sqlIdent is a name without its quotes and schema: `db`.`users` → users.
func sqlIdent(s string) string {
	s = strings.Trim(s, "`\"[] ")
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		s = strings.Trim(s[i+1:], "`\"[] ")
	}
	return strings.ToLower(s)
}

func anySecretName(cols []string) bool {
	for _, c := range cols {
		if SecretName(c) {
			return true
		}
	}
	return false
}

// sqlTuple reads one "(v1, 'v2', …)" off s: its values (strings without
// their quotes, doubled and backslashed quotes unescaped) and the bytes it used; 0 when s
// holds no whole tuple.
func sqlTuple(s string) (vals []string, used int) {
	var cur strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"':
			for i++; i < len(s); i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
					cur.WriteByte(s[i])
				} else if s[i] == c && i+1 < len(s) && s[i+1] == c {
					i++
					cur.WriteByte(c)
				} else if s[i] == c {
					break
				} else {
					cur.WriteByte(s[i])
				}
			}
		case ',':
			vals = append(vals, strings.TrimSpace(cur.String()))
			cur.Reset()
		case ')':
			return append(vals, strings.TrimSpace(cur.String())), i + 1
		case '(':
			return nil, 0 // a function call's value: not read
		default:
			cur.WriteByte(c)
		}
	}
	return nil, 0
}
