// Package pathkind holds the one rule that decides which embedded store a folder
// opens as: the kind of memory it already holds, else the kind asked for, else a
// SQLite memory. day1.Open (Config.Path) and the command line, the MCP server and the
// hooks (internal/localmem) all follow it.
package pathkind

import (
	"github.com/day1ai/day1/store/memstore"
	"github.com/day1ai/day1/store/sqlite"
)

// Kind is a kind of embedded store.
type Kind string

// The kinds of embedded store.
const (
	// SQLite keeps a memory in a SQLite file (store/sqlite).
	SQLite Kind = "sqlite"
	// Log keeps a memory in memory and appends to a log (store/memstore).
	Log Kind = "log"
)

// Held returns the kind of memory the folder at path holds, "" when it holds none
// (it is missing, empty, or holds other files).
func Held(path string) Kind {
	switch {
	case sqlite.HoldsMemory(path):
		return SQLite
	case memstore.HoldsMemory(path):
		return Log
	}
	return ""
}

// For returns the kind of store the folder at path opens as: the kind it holds, else
// want, else SQLite.
func For(path string, want Kind) Kind {
	if k := Held(path); k != "" {
		return k
	}
	if want != "" {
		return want
	}
	return SQLite
}
