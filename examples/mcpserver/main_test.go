package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/day1ai/day1/internal/testkit"
)

func TestMain(m *testing.M) {
	testkit.RunAsMain(main)
	code := m.Run()
	testkit.RemovePrograms()
	os.Exit(code)
}

// serverCommand returns a command that runs the server with args as a process of its
// own (testkit.Program), in an environment where nothing of the user's own memory or
// model configuration leaks in.
func serverCommand(t *testing.T, args ...string) *exec.Cmd {
	path, env := testkit.Program(t)
	cmd := exec.Command(path, args...)
	cmd.Env = append(serverEnv(t), env...)
	return cmd
}

// serverEnv is the environment of a server under test: nothing from the user's own
// memory or model configuration leaks in.
func serverEnv(t *testing.T) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DAY1_") && !strings.HasPrefix(kv, "OPENAI_") {
			env = append(env, kv)
		}
	}
	return append(env, "XDG_DATA_HOME="+t.TempDir())
}

// newClient returns an MCP client for the tests.
func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "mcpserver-test", Version: "1"}, nil)
}

// connectStdio starts the server with args and connects to it over stdio.
func connectStdio(t *testing.T, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := serverCommand(t, args...)
	cmd.Stderr = testWriter{t}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := newClient().Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting over stdio: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// testWriter logs what the server writes to stderr.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("server: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// callResult calls a tool and returns its result, failing on a protocol error.
func callResult(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

// call calls a tool that must succeed and decodes its structured result into T.
func call[T any](t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) T {
	t.Helper()
	res := callResult(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v): tool error: %s", name, args, resultText(res))
	}
	if resultText(res) == "" {
		t.Errorf("%s: no text content", name)
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s: decoding %s: %v", name, data, err)
	}
	return out
}

// callError calls a tool that must fail and returns the error's text.
func callError(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res := callResult(t, cs, name, args)
	if !res.IsError {
		t.Fatalf("%s(%v): succeeded, want a tool error", name, args)
	}
	return resultText(res)
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// startProcess starts cmd and kills it when the test ends.
func startProcess(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
}

// startHTTP starts the server with args (which serve HTTP) and returns its MCP URL,
// read from its stderr.
func startHTTP(t *testing.T, args ...string) (url string, cmd *exec.Cmd) {
	t.Helper()
	cmd = serverCommand(t, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	startProcess(t, cmd)
	re := regexp.MustCompile(`serving MCP over streamable HTTP at (\S+)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			t.Logf("server: %s", sc.Text())
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case url = <-found:
		return url, cmd
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not say where it serves")
	}
	return "", nil
}

// connectHTTP connects to an MCP server over streamable HTTP.
func connectHTTP(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
