package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/cmd/day1/internal/demo"
	"github.com/day1ai/day1/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestMain(m *testing.M) {
	testkit.RunAsMain(main)
	flag.Parse()
	// The commands run in this process: the user's own memory and model stay out.
	for _, k := range []string{"DAY1_DSN", "DAY1_PATH", "DAY1_MODEL", "DAY1_EMBED_MODEL", "DAY1_BRANCH", "NO_COLOR"} {
		os.Unsetenv(k)
	}
	code := m.Run()
	testkit.RemovePrograms()
	os.Exit(code)
}

// processCommand returns a command that runs day1 with args as a process of its own
// (testkit.Program).
func processCommand(t *testing.T, args ...string) *exec.Cmd {
	path, env := testkit.Program(t)
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// seeded returns the folder of a durable memory holding the demo.
func seeded(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	c, err := day1.Open(context.Background(), demo.Config(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := demo.Seed(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return dir
}

// day1Run runs the command in this process on the memory in dir.
func day1Run(t *testing.T, dir, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(append([]string{"--path", dir}, args...), strings.NewReader(stdin), &o, &e)
	return o.String(), e.String(), code
}

// day1Process runs the built command as a process on the memory in dir.
func day1Process(t *testing.T, dir, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := processCommand(t, append([]string{"--path", dir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

var (
	// Times the seed did not fix, and ids and tokens the command made.
	rfcTime   = regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?`)
	ulid      = regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Z]{26}\b`)
	shareTok  = regexp.MustCompile(`kb_[A-Za-z0-9_-]+`)
	spaceRuns = regexp.MustCompile(` +\n`)
	duration  = regexp.MustCompile(`"(\d+h)?(\d+m)?\d+(\.\d+)?(ns|µs|ms|s)"`)
	// File sizes, which follow the lengths of the times written.
	byteCount = regexp.MustCompile(`("\w*bytes\w*": )\d+`)
)

// normalize replaces what changes from run to run.
func normalize(s, dir string) string {
	s = strings.ReplaceAll(s, dir, "<dir>")
	s = rfcTime.ReplaceAllStringFunc(s, func(t string) string {
		if strings.HasPrefix(t, "2025-03-01") {
			return t
		}
		return "<time>"
	})
	s = ulid.ReplaceAllString(s, "<id>")
	s = shareTok.ReplaceAllString(s, "<token>")
	s = duration.ReplaceAllString(s, `"<duration>"`)
	s = byteCount.ReplaceAllString(s, "${1}<bytes>")
	return spaceRuns.ReplaceAllString(s, "\n")
}

// TestGolden runs the commands in order on one seeded memory (later ones see what
// earlier ones changed) and compares what they print and their exit codes with
// testdata/<name>.golden. go test -update rewrites the files.
func TestGolden(t *testing.T) {
	dir := seeded(t)
	cases := []struct {
		name string
		args string
	}{
		{"branch", "branch"},
		{"branch_json", "branch --json"},
		{"log", "log agent-a"},
		{"log_filtered", "log agent-a --agent agent-a --kind fact"},
		{"version", "--version"},
		{"snapshot_no_args", "snapshot"},
		{"err_snapshot_one_arg", "snapshot main"},
		{"log_limit", "log agent-a --limit 2"},
		{"log_reverse", "log agent-a --reverse --limit 2"},
		{"log_by_creation", "log agent-a --by-creation --limit 2"},
		{"show", "show fact/f-retry --branch agent-a"},
		{"show_json", "show --json fact/f-jwt"},
		{"search", "search token refresh --limit 3"},
		{"search_json", "search --json --mode keyword --limit 2 token"},
		{"diff", "diff agent-a agent-b"},
		{"diff_json", "diff --json agent-c"},
		{"merge_conflict", "merge agent-b agent-a"},
		{"merge_conflict_json", "merge agent-b agent-a --json"},
		{"merge_dry_run", "merge agent-a --dry-run"},
		{"at_snapshot_log", "at before-agents log main"},
		{"at_snapshot_show", "at before-agents show fact/f-retry"},
		{"at_instant_search", "--json at 2025-03-01T09:00:03.5Z search --mode keyword postgres"},
		{"snapshot_list", "snapshot list"},
		{"snapshot_exists", "snapshot main before-agents"},
		{"tasks", "tasks"},
		{"task", "tasks fix-auth"},
		{"handoffs", "handoffs"},
		{"replay", "replay fix-auth"},
		{"replay_json", "replay fix-auth --json"},
		{"verify", "verify agent-b"},
		{"verify_summary", "verify agent-b --summary"},
		{"branch_create", "branch create exp --from main --at before-agents --description retry"},
		{"branch_archive", "branch archive exp"},
		{"branch_delete", "branch delete exp"},
		{"merge", "merge agent-a --mark-merged --message fixes"},
		{"branch_after_merge", "branch --status merged"},
		{"bundle_create", "bundle create notes --branch agent-b --include-unverified --visibility team"},
		{"err_not_found", "show fact/nope"},
		{"err_branch_not_found", "log nope"},
		{"err_not_found_json", "log nope --json"},
		{"err_unknown_command", "frob"},
		{"err_bad_flag", "branch --frob"},
		{"err_flag_number", "write fact the cache holds --confidence high"},
		{"err_flag_duration", "write fact the cache holds --expires-in 3q"},
		{"err_memory_and_path", "--memory log"},
		{"err_bad_strategy", "merge agent-b --strategy sideways"},
		{"err_at_verb", "at before-agents branch"},
		{"err_at_missing", "at before-agents"},
		{"err_at_twice", "at before-agents log main --at 2025-03-01T09:00:03Z"},
		{"err_serve_public", "serve --addr 0.0.0.0:0"},
		{"compact", "compact"},
		{"compact_retention", "compact --retention 168h"},
		{"compact_json", "compact --json"},
		{"at_snapshot_after_compact", "at before-agents show fact/f-retry"},
		{"err_too_old", "at 2025-03-01T09:00:03.5Z search --mode keyword postgres"},
		{"err_compact_retention", "compact --retention -1h"},
		{"correct", "correct f-db --category storage --why recategorised --by lead"},
		{"correct_json", "correct f-db --invalidate --why obsolete --by lead --json"},
		{"err_correct_no_reason", "correct f-jwt --invalidate --by lead"},
		{"err_correct_invalidated", "correct f-db --delete --why again --by lead"},
		{"search_nothing_relevant", "search quantum banana smoothie"},
		{"search_every_hit", "search quantum banana smoothie --min-relevance 0"},
		{"err_branch_delete_unmerged", "branch delete agent-b"},
		{"branch_delete_force", "branch delete agent-b -D"},
		{"write_fact", "write fact Postgres 15 holds the user database --id f-pg15 --category storage"},
		{"write_observation_json", "write observation error go test ./auth failed --tool Bash --json"},
		{"err_write_observation_type", "write observation robot beep"},
		{"verify_json", "verify main --json"},
		{"err_write_fact_confidence", "write fact a shaky guess --confidence 3"},
		{"err_write_fact_expiry", "write fact the freeze holds --expires-in -1h"},
		{"write_fact_expires_json", "write fact the deploy freeze holds this week --id f-freeze --expires-in 72h --json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := day1Run(t, dir, "", strings.Fields(tc.args)...)
			got := normalize(fmt.Sprintf("$ day1 %s\nexit %d\n--- stdout\n%s--- stderr\n%s", tc.args, code, stdout, stderr), dir)
			compareGolden(t, tc.name, got)
		})
	}
}

func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, file, got, want)
	}
}

// TestBesideAnotherProcess: a memory another process has open (a day1 serve, an MCP
// server) is read and written by the command at once, and the holder sees the write.
func TestBesideAnotherProcess(t *testing.T) {
	dir := seeded(t)
	ctx := context.Background()
	c, err := day1.Open(ctx, day1.Config{Path: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The memory is open in this process: the command runs as another one.
	stdout, stderr, code := day1Process(t, dir, "", "branch")
	if code != 0 || !strings.Contains(stdout, "agent-a") {
		t.Fatalf("day1 branch beside a holder: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, stderr, code := day1Process(t, dir, "", "branch", "create", "from-cli"); code != 0 {
		t.Fatalf("day1 branch create beside a holder: exit %d\n%s", code, stderr)
	}
	if _, err := c.GetBranch(ctx, "from-cli"); err != nil {
		t.Fatalf("the holder does not see the branch the command made: %v", err)
	}
}

// TestBundleRoundTrip exports a bundle to a file and imports it into a new branch.
func TestBundleRoundTrip(t *testing.T) {
	dir := seeded(t)
	stdout, stderr, code := day1Run(t, dir, "", "bundle", "create", "notes", "--branch", "agent-a", "--include-unverified", "--json")
	var b day1.Bundle
	if code != 0 || json.Unmarshal([]byte(stdout), &b) != nil {
		t.Fatalf("create: exit %d %s %s", code, stdout, stderr)
	}
	file := filepath.Join(t.TempDir(), "notes.day1bundle.gz")
	if _, stderr, code := day1Run(t, dir, "", "bundle", "export", b.ID, "-o", file); code != 0 {
		t.Fatalf("export: exit %d %s", code, stderr)
	}
	stdout, stderr, code = day1Run(t, dir, "", "bundle", "import", file, "--branch", "imported", "--create-branch")
	if code != 0 || !strings.Contains(stdout, `imported "notes" into imported`) {
		t.Fatalf("import: exit %d %s %s", code, stdout, stderr)
	}
	if stdout, _, code := day1Run(t, dir, "", "show", "fact/f-a1", "--branch", "imported"); code != 0 || !strings.Contains(stdout, "line 142") {
		t.Fatalf("imported fact: exit %d %s", code, stdout)
	}
	// --json prints the result as the REST API answers it: snake_case, nothing else.
	stdout, stderr, code = day1Run(t, dir, "", "--json", "bundle", "import", file, "--branch", "again", "--create-branch")
	var res map[string]any
	if err := json.Unmarshal([]byte(stdout), &res); code != 0 || err != nil {
		t.Fatalf("import --json: exit %d, %v: %s %s", code, err, stdout, stderr)
	}
	for _, k := range []string{"bundle", "branch", "branch_created", "created", "deduplicated", "updated", "skipped", "conflicts"} {
		if _, ok := res[k]; !ok {
			t.Errorf("import --json lacks %q: %s", k, stdout)
		}
	}
	if res["branch"] != "again" || res["branch_created"] != true {
		t.Errorf("import --json: %s", stdout)
	}
	if _, stderr, code := day1Run(t, dir, "", "bundle", "import", "--bundle", b.ID, file); code != exitUsage {
		t.Fatalf("a file and --bundle: exit %d %s", code, stderr)
	}
	stdout, _, code = day1Run(t, dir, "", "bundle", "share", b.ID, "--visibility", "public")
	if code != 0 || !strings.Contains(stdout, "share token: kb_") {
		t.Fatalf("share: exit %d %s", code, stdout)
	}
}

// TestCompletion: the shell completion scripts work, and completion knows branches,
// snapshots and tasks.
func TestCompletion(t *testing.T) {
	dir := seeded(t)
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		if stdout, stderr, code := day1Run(t, dir, "", "completion", sh); code != 0 || len(stdout) < 100 {
			t.Errorf("completion %s: exit %d %s", sh, code, stderr)
		}
	}
	stdout, _, _ := day1Run(t, dir, "", "__complete", "diff", "agent-")
	if !strings.Contains(stdout, "agent-a\nagent-b\nagent-c\n") {
		t.Errorf("branch completion: %q", stdout)
	}
	stdout, stderr, code := day1Run(t, dir, "", "--json", "bundle", "create", "notes", "--branch", "main", "--include-unverified")
	var b day1.Bundle
	if code != 0 || json.Unmarshal([]byte(stdout), &b) != nil {
		t.Fatalf("bundle create: exit %d %s %s", code, stdout, stderr)
	}
	bundleID := b.ID
	// Snapshots, tasks, bundles and branches where commands take them.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "at", ""}, "before-agents"},
		{[]string{"__complete", "snapshot", "delete", "be"}, "before-agents"},
		{[]string{"__complete", "tasks", ""}, "fix-auth"},
		{[]string{"__complete", "replay", "fix"}, "fix-auth"},
		{[]string{"__complete", "log", "agent-"}, "agent-a"},
		{[]string{"__complete", "log", "--at", ""}, "before-agents"},
		{[]string{"__complete", "branch", "create", "x", "--at", ""}, "before-agents"},
		{[]string{"__complete", "bundle", "export", ""}, bundleID},
		{[]string{"__complete", "bundle", "share", ""}, bundleID},
		{[]string{"__complete", "bundle", "import", "--bundle", ""}, bundleID},
	} {
		stdout, stderr, code := day1Run(t, dir, "", tc.args...)
		if code != 0 || !slices.Contains(strings.Split(stdout, "\n"), tc.want) {
			t.Errorf("%v: exit %d, %q %q; want %s offered", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

func TestRewriteAt(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"at snap show f", "show f --at snap"},
		{"--path p at snap log main", "--path p log main --at snap"},
		{"--json at 2025-01-01T00:00:00Z search x y", "--json search x y --at 2025-01-01T00:00:00Z"},
		{"log main", "log main"},
	} {
		got, err := rewriteAt(strings.Fields(tc.in))
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("rewriteAt(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestSearchMessages: search finds the messages of a conversation, filters them by
// speaker, and shows the turns around each hit with --window.
func TestSearchMessages(t *testing.T) {
	dir := seeded(t)
	ctx := context.Background()
	c, err := day1.Open(ctx, demo.Config(dir))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteConversation(ctx, day1.Conversation{ID: "chat-1", Title: "cache planning"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AppendMessages(ctx, []day1.Message{
		{ID: "q1", ConversationID: "chat-1", Role: day1.RoleUser, Content: "Where do we keep sessions?"},
		{ID: "a1", ConversationID: "chat-1", Role: day1.RoleAssistant, Content: "Sessions live in the memcached cluster."},
		{ID: "q2", ConversationID: "chat-1", Role: day1.RoleUser, Content: "Thanks, that settles it."},
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := day1Run(t, dir, "", "search", "memcached", "sessions", "--kind", "message", "--role", "assistant", "--window", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var got []string
	for _, l := range lines[1:] {
		got = append(got, strings.Join(strings.Fields(l), " "))
	}
	want := []string{"message/q1 user: Where do we keep sessions?", "message/a1 assistant: Sessions live in the memcached cluster.",
		"message/q2 user: Thanks, that settles it."}
	if len(got) != 3 || !strings.HasSuffix(got[0], want[0]) || !strings.HasSuffix(got[1], want[1]) || !strings.HasPrefix(got[1], "1 ") ||
		!strings.HasSuffix(got[2], want[2]) {
		t.Errorf("search output:\n%s\nwant the hit a1 between q1 and q2", stdout)
	}
}

// TestReadsDoNotCreate checks that a reading command at a path that holds no memory
// fails with exit 3 and leaves nothing there, that init creates the memory, and that
// the reading command then works.
func TestReadsDoNotCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mistyped")
	for _, args := range [][]string{{"log"}, {"search", "token"}, {"branch"}, {"snapshot"}, {"at", "2025-03-01T09:00:00Z", "log"},
		// Commands that change what a memory holds need one too.
		{"compact"}, {"verify", "main"}, {"branch", "create", "x"}, {"branch", "delete", "x"}, {"merge", "x"},
		{"snapshot", "main", "s1"}, {"correct", "f1", "--invalidate", "--why", "wrong", "--by", "me"}, {"bundle", "create", "b", "--branch", "main"}} {
		_, stderr, code := day1Run(t, dir, "", args...)
		if code != exitNotFound || !strings.Contains(stderr, "no day1 memory at "+dir) || !strings.Contains(stderr, "day1 init") {
			t.Errorf("%v at a missing path: exit %d, %q; want 3 saying there is no memory", args, code, stderr)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("%v at a missing path made %s (%v)", args, dir, err)
		}
	}
	stdout, _, code := day1Run(t, dir, "", "init")
	if code != 0 || !strings.Contains(stdout, "created an empty day1 memory at "+dir) {
		t.Fatalf("init: exit %d, %q", code, stdout)
	}
	if stdout, _, code := day1Run(t, dir, "", "init"); code != 0 || !strings.Contains(stdout, "already holds a day1 memory") {
		t.Errorf("init again: exit %d, %q", code, stdout)
	}
	if _, stderr, code := day1Run(t, dir, "", "log"); code != 0 {
		t.Errorf("log after init: exit %d, %q", code, stderr)
	}
	if _, stderr, code := day1Run(t, dir, "", "init", "--memory"); code != exitUsage {
		t.Errorf("init --memory: exit %d, %q; want 2", code, stderr)
	}
}

// TestLogExpired checks that log leaves out a fact whose expiry has passed and that
// --include-expired shows it.
func TestLogExpired(t *testing.T) {
	dir := seeded(t)
	c, err := day1.Open(context.Background(), demo.Config(dir))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.WriteFact(context.Background(), day1.Fact{ID: "f-freeze", Text: "The deploy freeze holds until ten", ExpiresAt: demo.Start.Add(time.Hour)})
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"log", "--kind", "fact"}, false},
		{[]string{"log", "--kind", "fact", "--include-expired"}, true},
		{[]string{"log", "--kind", "fact", "--include-expired", "--by-creation", "--reverse"}, true},
	} {
		stdout, stderr, code := day1Run(t, dir, "", c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d, %s", c.args, code, stderr)
		}
		if got := strings.Contains(stdout, "fact/f-freeze"); got != c.want || !strings.Contains(stdout, "fact/f-jwt") {
			t.Errorf("%v shows the expired fact: %v, want %v; output:\n%s", c.args, got, c.want, stdout)
		}
	}
}

// TestBundleImportErrors checks the exit codes of bad bundles: a file that is no
// bundle is an error (1) with a hint about the file, not a usage error; a bundle of a
// newer format version is not supported (6).
func TestBundleImportErrors(t *testing.T) {
	dir := t.TempDir()
	sample, err := os.ReadFile("../../bundle/testdata/sample.bundle")
	if err != nil {
		t.Fatal(err)
	}
	newer := strings.Replace(string(sample), `"format_version":1`, `"format_version":99`, 1)
	for _, tc := range []struct {
		name, stdin string
		code        int
		hint        string
	}{
		{"not a bundle", "these are not the facts you are looking for\n", exitError, "not a whole, untampered day1 bundle"},
		{"newer format", newer, exitNotSupported, "written by a newer day1"},
	} {
		_, stderr, code := day1Run(t, dir, tc.stdin, "bundle", "import", "-")
		if code != tc.code || !strings.Contains(stderr, tc.hint) {
			t.Errorf("%s: exit %d, %q; want %d with a hint saying %q", tc.name, code, stderr, tc.code, tc.hint)
		}
	}
}

// TestAtHelp checks that "day1 at --help" prints the help of at and exits 0.
func TestAtHelp(t *testing.T) {
	stdout, stderr, code := day1Run(t, t.TempDir(), "", "at", "--help")
	if code != 0 || !strings.Contains(stdout, "Run a reading command") || stderr != "" {
		t.Errorf("at --help: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestBundleExportJSON checks that --json bundle export -o prints what it wrote, as
// JSON on standard output, and nothing on standard error.
func TestBundleExportJSON(t *testing.T) {
	dir := seeded(t)
	stdout, stderr, code := day1Run(t, dir, "", "bundle", "create", "notes", "--branch", "agent-a", "--include-unverified", "--json")
	var b struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(stdout), &b); code != 0 || err != nil || b.ID == "" {
		t.Fatalf("bundle create: exit %d, %v, %q %q", code, err, stdout, stderr)
	}
	file := filepath.Join(t.TempDir(), "notes.day1bundle.gz")
	stdout, stderr, code = day1Run(t, dir, "", "bundle", "export", b.ID, "-o", file, "--json")
	var out struct{ Bundle, File string }
	if err := json.Unmarshal([]byte(stdout), &out); code != 0 || err != nil || out.Bundle != b.ID || out.File != file || stderr != "" {
		t.Errorf("bundle export --json: exit %d, %v, stdout %q, stderr %q", code, err, stdout, stderr)
	}
	if st, err := os.Stat(file); err != nil || st.Size() == 0 {
		t.Errorf("the bundle file: %v, %v", st, err)
	}
}

// TestInitSQLite makes a memory kept in SQLite with init --store sqlite and checks
// that the commands then open it as one, that init refuses a kind it does not know,
// and that a plain init makes a SQLite memory and --store log a log store's.
func TestInitSQLite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shared")
	if _, stderr, code := day1Run(t, dir, "", "init", "--store", "sqlite"); code != 0 {
		t.Fatalf("init --store sqlite: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "memory.db")); err != nil {
		t.Fatalf("init --store sqlite made no memory.db: %v", err)
	}
	if _, stderr, code := day1Run(t, dir, "", "write", "fact", "The cache TTL is 12 hours"); code != 0 {
		t.Fatalf("write fact: exit %d, %q", code, stderr)
	}
	if stdout, stderr, code := day1Run(t, dir, "", "search", "cache TTL"); code != 0 || !strings.Contains(stdout, "The cache TTL is 12 hours") {
		t.Errorf("search: exit %d, %q, %q", code, stdout, stderr)
	}
	if stdout, stderr, code := day1Run(t, dir, "", "--json", "log"); code != 0 || !strings.Contains(stdout, "The cache TTL is 12 hours") {
		t.Errorf("log: exit %d, %q, %q", code, stdout, stderr)
	}
	// A SQLite memory compacts in place: no checkpoint generation to speak of.
	if stdout, stderr, code := day1Run(t, dir, "", "compact"); code != 0 || !strings.HasPrefix(stdout, "nothing to compact: all history is kept") {
		t.Errorf("compact: exit %d, %q, %q", code, stdout, stderr)
	}
	if stdout, stderr, code := day1Run(t, dir, "", "compact", "--retention", "720h"); code != 0 || !strings.HasPrefix(stdout, "compacted: 1 versions kept, 0 dropped") {
		t.Errorf("compact --retention: exit %d, %q, %q", code, stdout, stderr)
	}
	// A plain init of the folder finds the memory, of whatever kind.
	if stdout, _, code := day1Run(t, dir, "", "init"); code != 0 || !strings.Contains(stdout, "already holds a day1 memory") {
		t.Errorf("init again: exit %d, %q", code, stdout)
	}
	if _, stderr, code := day1Run(t, filepath.Join(t.TempDir(), "x"), "", "init", "--store", "paper"); code != exitUsage {
		t.Errorf("init --store paper: exit %d, %q; want 2", code, stderr)
	}
	// A plain init makes a SQLite memory; --store log makes a log store's, which the
	// commands then open as one.
	plain := filepath.Join(t.TempDir(), "plain")
	if _, stderr, code := day1Run(t, plain, "", "init"); code != 0 {
		t.Fatalf("init: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(plain, "memory.db")); err != nil {
		t.Errorf("a plain init made no memory.db: %v", err)
	}
	logDir := filepath.Join(t.TempDir(), "log")
	if _, stderr, code := day1Run(t, logDir, "", "init", "--store", "log"); code != 0 {
		t.Fatalf("init --store log: exit %d, %q", code, stderr)
	}
	if _, stderr, code := day1Run(t, logDir, "", "write", "fact", "Workers read the queue in batches"); code != 0 {
		t.Fatalf("write fact in the log store: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(logDir, "memory.db")); err == nil {
		t.Error("a write to a log store's memory made a memory.db beside it")
	}
	if stdout, stderr, code := day1Run(t, logDir, "", "search", "queue batches"); code != 0 || !strings.Contains(stdout, "Workers read the queue") {
		t.Errorf("search the log store: exit %d, %q, %q", code, stdout, stderr)
	}
}
