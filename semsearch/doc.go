// Package semsearch ranks passages of a directory's text files against a
// query: files listed and read through a small Files interface (a
// transport), split into overlapping chunks of lines, ranked by embedding
// similarity when an Embedder answers, else lexically by BM25; vectors are
// cached per host and directory, keyed by each file's size and mtime.
package semsearch
