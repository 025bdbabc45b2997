// Command day1 looks at and steers the memory of AI agents the way git does a
// repository: branches, a branch's log, records, search, diff and merge, snapshots
// and reads in the past, tasks and handoffs, verification, bundles and replays. day1
// compact replaces the durable store's log by a checkpoint, dropping history past
// --retention. day1 serve serves the same memory as a REST API with a live web
// inspector.
//
// The memory is the durable embedded store at --path (default: $DAY1_PATH, or day1
// in the user's data folder), the MatrixOne database at --dsn (or $DAY1_DSN), or an
// empty memory in this process with --memory. Every command prints for people by
// default and JSON with --json.
//
// Every command reads and writes the durable store while other processes (day1
// serve, MCP servers, hooks, other commands) have it open: their commits take turns.
//
// Exit codes: 0 success, 1 any other error, 2 usage (a bad command, flag or
// argument), 3 not found, 4 conflict (a merge conflict, a merge gate, a name that
// exists, a stale or archived branch), 5 locked (a write waited longer than the lock
// timeout for other processes' writes), 6 not supported.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
