package redact

import (
	"encoding/binary"
	"strconv"
	"strings"
)

// SQLite databases (an app's app.db, a browser's or a tool's store) hold
// a table's rows with their column names in the schema only, as a SQL
// dump does: `sqlite3 app.db 'select token from api_tokens' | rev` shows
// values with no name beside them. harvestSQLite reads the database file
// itself (the file format, https://www.sqlite.org/fileformat.html: the
// schema table on page 1, each table's b-tree of rows, overflow pages)
// and names each row's values by their columns (sqlRow). Rows in a
// write-ahead log not yet checkpointed (app.db-wal) are not read, nor
// WITHOUT ROWID tables.

const sqliteMagic = "SQLite format 3\x00"

// maxSQLitePages bounds the pages one database's walk visits.
const maxSQLitePages = 4096

// sqliteDB is a database file being read.
type sqliteDB struct {
	data     []byte
	pageSize int
	usable   int
	visited  map[uint32]bool
}

// sqliteTables calls row for each row of each table of data (a database
// file's bytes; a truncated or damaged one is read as far as it holds),
// at most maxSQLRows rows a table.
func sqliteTables(data []byte, row func(table string, cols, vals []string)) {
	if len(data) < 100 || string(data[:16]) != sqliteMagic {
		return
	}
	ps := int(binary.BigEndian.Uint16(data[16:18]))
	if ps == 1 {
		ps = 65536
	}
	if ps < 512 || ps&(ps-1) != 0 {
		return
	}
	db := &sqliteDB{data: data, pageSize: ps, usable: ps - int(data[20]), visited: map[uint32]bool{}}
	if db.usable < 480 {
		return
	}
	type table struct {
		name string
		root uint32
		cols []string
	}
	var tables []table
	db.walk(1, func(rec []string) bool {
		// type, name, tbl_name, rootpage, sql
		if len(rec) == 5 && rec[0] == "table" {
			root, err := strconv.ParseUint(rec[3], 10, 32)
			if m := sqlCreateRE.FindStringSubmatchIndex(rec[4]); err == nil && m != nil && root > 1 {
				tables = append(tables, table{sqlIdent(rec[1]), uint32(root), sqlColumns(rec[4][m[1]:])})
			}
		}
		return len(tables) < 256
	})
	for _, t := range tables {
		n := 0
		db.walk(t.root, func(rec []string) bool {
			row(t.name, t.cols, rec)
			n++
			return n < maxSQLRows
		})
	}
}

// page is page number n's bytes, nil when there is no such page.
func (db *sqliteDB) page(n uint32) []byte {
	off := int64(n-1) * int64(db.pageSize)
	if n == 0 || off+int64(db.pageSize) > int64(len(db.data)) {
		return nil
	}
	return db.data[off : off+int64(db.pageSize)]
}

// walk calls rec for each record of the table b-tree rooted at page
// root, in order, until it returns false; each page at most once.
func (db *sqliteDB) walk(root uint32, rec func([]string) bool) bool {
	if db.visited[root] || len(db.visited) >= maxSQLitePages {
		return false
	}
	db.visited[root] = true
	p := db.page(root)
	if p == nil {
		return false
	}
	h := 0
	if root == 1 {
		h = 100
	}
	if h+12 > len(p) {
		return false
	}
	kind, cells := p[h], int(binary.BigEndian.Uint16(p[h+3:]))
	hdr := 8
	if kind == 5 {
		hdr = 12
	} else if kind != 13 {
		return true // an index's page, or no b-tree page
	}
	for i := 0; i < cells; i++ {
		at := h + hdr + 2*i
		if at+2 > len(p) {
			return false
		}
		c := int(binary.BigEndian.Uint16(p[at:]))
		if c >= len(p) {
			continue
		}
		if kind == 5 { // interior: left child's page, then a rowid
			if c+4 > len(p) || !db.walk(binary.BigEndian.Uint32(p[c:]), rec) {
				return false
			}
			continue
		}
		payload, ok := db.payload(p, c)
		if !ok {
			continue
		}
		if !rec(sqliteRecord(payload)) {
			return false
		}
	}
	if kind == 5 && h+12 <= len(p) {
		return db.walk(binary.BigEndian.Uint32(p[h+8:]), rec)
	}
	return true
}

// payload is the record of the leaf cell at p[c:], its overflow pages
// followed.
func (db *sqliteDB) payload(p []byte, c int) ([]byte, bool) {
	size, n := sqliteVarint(p[c:])
	if n == 0 || size > MaxHarvest {
		return nil, false
	}
	c += n
	if _, n = sqliteVarint(p[c:]); n == 0 { // the rowid
		return nil, false
	}
	c += n
	P, U := int(size), db.usable
	local := P
	if X := U - 35; P > X {
		M := (U-12)*32/255 - 23
		local = M + (P-M)%(U-4)
		if local > X {
			local = M
		}
	}
	if c+local > len(p) {
		return nil, false
	}
	out := append(make([]byte, 0, P), p[c:c+local]...)
	if local == P {
		return out, true
	}
	if c+local+4 > len(p) {
		return nil, false
	}
	next := binary.BigEndian.Uint32(p[c+local:])
	for seen := 0; len(out) < P && next != 0 && seen < maxSQLitePages; seen++ {
		o := db.page(next)
		if o == nil || U > len(o) {
			return nil, false
		}
		next = binary.BigEndian.Uint32(o)
		out = append(out, o[4:min(U, 4+P-len(out))]...)
	}
	return out, len(out) == P
}

// sqliteRecord is a record's values as text: NULL as "", integers in
// decimal, text and blobs as their bytes, floats as "".
func sqliteRecord(b []byte) []string {
	hsize, n := sqliteVarint(b)
	if n == 0 || hsize > uint64(len(b)) || hsize < uint64(n) {
		return nil
	}
	var vals []string
	body := int(hsize)
	for at := n; at < int(hsize) && len(vals) < 2000; {
		st, m := sqliteVarint(b[at:int(hsize)])
		if m == 0 {
			return vals
		}
		at += m
		var size int
		switch {
		case st <= 4:
			size = int(st)
		case st == 5:
			size = 6
		case st == 6 || st == 7:
			size = 8
		case st >= 12:
			size = int((st - 12) / 2)
		}
		if st > MaxHarvest*2 || body+size > len(b) {
			return vals
		}
		v := b[body : body+size]
		body += size
		switch {
		case st >= 1 && st <= 6:
			x := int64(int8(v[0])) // sign-extended, big-endian
			for _, c := range v[1:] {
				x = x<<8 | int64(c)
			}
			vals = append(vals, strconv.FormatInt(x, 10))
		case st == 8:
			vals = append(vals, "0")
		case st == 9:
			vals = append(vals, "1")
		case st >= 12:
			vals = append(vals, string(v))
		default:
			vals = append(vals, "")
		}
	}
	return vals
}

// sqliteVarint reads a SQLite varint (1 to 9 bytes, big-endian, the
// ninth byte whole); n is 0 when b is too short.
func sqliteVarint(b []byte) (v uint64, n int) {
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, 0
		}
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return v, 9
}

// sqlRow calls add for a row's secrets: the values of its secret-named
// columns; in a table of names and values (settings(name, value),
// config(key, val)), the value of a row whose name says secret; in a
// secret-named table (secrets, api_tokens), its value-like columns.
func sqlRow(table string, cols, vals []string, add func(key, value string)) {
	for i, c := range cols {
		if i < len(vals) && SecretName(c) && vals[i] != "" {
			add(c, vals[i])
		}
	}
	name, value := sqlNameValue(cols)
	if value < 0 || value >= len(vals) {
		return
	}
	switch {
	case name >= 0 && name < len(vals) && SecretName(vals[name]):
		add(vals[name], vals[value])
	case name < 0 && secretTable(table):
		add(table, vals[value])
	}
}

// sqlNameValue are the columns of a table of names and values (-1: none).
func sqlNameValue(cols []string) (name, value int) {
	name, value = -1, -1
	for i, c := range cols {
		switch c {
		case "name", "key", "k", "setting", "option", "option_name", "param", "variable", "config_key", "setting_key":
			name = i
		case "value", "val", "v", "data", "option_value", "setting_value", "config_value", "content":
			value = i
		}
	}
	return name, value
}

func secretTable(table string) bool {
	return SecretName(table) || SecretName(strings.TrimSuffix(table, "s"))
}

// sqlNamedValues reports whether a table's rows may hold secrets under
// no secret-named column (sqlRow).
func sqlNamedValues(table string, cols []string) bool {
	name, value := sqlNameValue(cols)
	return value >= 0 && (name >= 0 || secretTable(table))
}

// harvestSQLite learns the secrets of a database's rows (sqlRow), at
// most maxLearnPerText from each table: a table of users' password
// hashes does not crowd out the tokens table.
func (s *Set) harvestSQLite(data []byte) int {
	n := 0
	perTable := map[string]int{}
	sqliteTables(data, func(table string, cols, vals []string) {
		sqlRow(table, cols, vals, func(key, value string) {
			if perTable[table] < maxLearnPerText && s.Add(key, value, Found) {
				perTable[table]++
				n++
			}
		})
	})
	return n
}
