package faultproxy

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// echoServer echoes every byte back and records what it received, per connection.
type echoServer struct {
	ln   net.Listener
	mu   sync.Mutex
	got  []*bytes.Buffer
	done sync.WaitGroup
}

func startEcho(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &echoServer{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := &bytes.Buffer{}
			e.mu.Lock()
			e.got = append(e.got, buf)
			e.mu.Unlock()
			e.done.Add(1)
			go func() {
				defer e.done.Done()
				defer c.Close()
				b := make([]byte, 1024)
				for {
					n, err := c.Read(b)
					if n > 0 {
						e.mu.Lock()
						buf.Write(b[:n])
						e.mu.Unlock()
						c.Write(b[:n])
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return e
}

// received waits for the server's connections to end and returns what connection i got.
func (e *echoServer) received(i int) []byte {
	e.done.Wait()
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]byte(nil), e.got[i].Bytes()...)
}

func query(q string) []byte {
	n := len(q) + 1
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), 0, comQuery}, q...)
}

func dial(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip sends b and reads len(b) bytes back, or the error that ended the read.
func roundTrip(c net.Conn, b []byte) ([]byte, error) {
	if _, err := c.Write(b); err != nil {
		return nil, err
	}
	out := make([]byte, len(b))
	_, err := io.ReadFull(c, out)
	return out, err
}

func TestActions(t *testing.T) {
	e := startEcho(t)
	p, err := Start(e.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.OnQuery(func(_ *Conn, q string) Action {
		switch q {
		case "drop":
			return Drop
		case "commit":
			return DropReply
		}
		return Forward
	})
	c := dial(t, p)
	if got, err := roundTrip(c, query("select 1")); err != nil || !bytes.Equal(got, query("select 1")) {
		t.Fatalf("forward: %q, %v", got, err)
	}
	if _, err := roundTrip(c, query("drop")); err == nil {
		t.Fatal("a dropped query got an answer")
	}
	c = dial(t, p)
	if _, err := roundTrip(c, query("commit")); err == nil {
		t.Fatal("DropReply passed the answer on")
	}
	p.Close()
	if got := e.received(0); !bytes.Equal(got, query("select 1")) {
		t.Errorf("the server saw %q on the first connection; want only the forwarded query", got)
	}
	if got := e.received(1); !bytes.Equal(got, query("commit")) {
		t.Errorf("the server saw %q; want the query whose answer was dropped", got)
	}
}

func TestCutAfterAndCloseAll(t *testing.T) {
	e := startEcho(t)
	p, err := Start(e.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := dial(t, p)
	p.CutAfter(7)
	if _, err := roundTrip(c, query("select 12345")); err == nil {
		t.Fatal("a cut connection answered")
	}
	if p.Cuts() != 1 {
		t.Errorf("Cuts = %d; want 1", p.Cuts())
	}
	a, b := dial(t, p), dial(t, p)
	for _, c := range []net.Conn{a, b} {
		if _, err := roundTrip(c, query("ping")); err != nil {
			t.Fatal(err)
		}
	}
	if n := p.CloseAll(); n != 2 {
		t.Errorf("CloseAll closed %d connections; want 2", n)
	}
	for _, c := range []net.Conn{a, b} {
		if _, err := roundTrip(c, query("ping")); err == nil {
			t.Error("a closed connection still answered")
		}
	}
	p.Close()
	if got := e.received(0); !bytes.Equal(got, query("select 12345")[:7]) {
		t.Errorf("the server saw %q before the cut; want the first 7 bytes", got)
	}
}
