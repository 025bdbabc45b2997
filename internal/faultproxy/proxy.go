// Package faultproxy is a TCP proxy for the MySQL protocol that injects network
// faults, for tests of how day1's MatrixOne store survives them: it forwards
// connections to a server and, on request, cuts one after a number of bytes, drops it
// at a chosen statement (before the server sees it, or after the server answered it
// without passing the answer on, as a lost COMMIT acknowledgement), or closes every
// open connection, idle ones included.
//
// The proxy reads the client's side packet by packet (a 3-byte length, a sequence
// number, the payload) and recognises text queries (COM_QUERY, sequence 0); the
// server's side is copied as it comes. TLS and compression are not supported: connect
// without them.
package faultproxy

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// Action is what the proxy does with a query (see Proxy.OnQuery).
type Action int

// Actions.
const (
	// Forward passes the query on.
	Forward Action = iota
	// Drop closes the connection, on both sides, without passing the query on: the
	// server never sees it.
	Drop
	// DropReply passes the query on, waits for the server's answer and closes the
	// connection on both sides without passing the answer on: the server executed the
	// query but the client never learns so.
	DropReply
)

// comQuery is the MySQL command byte of a text query.
const comQuery = 0x03

// Proxy forwards TCP connections from its address to a target.
type Proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	conns   map[*Conn]struct{}
	onQuery func(c *Conn, query string) Action
	budget  int64 // client bytes still forwarded before a cut; <0: no cut
	closed  bool

	accepted, cut atomic.Int64
	wg            sync.WaitGroup
}

// Conn is one client connection through the proxy.
type Conn struct {
	id           int64
	client, srv  net.Conn
	swallow      atomic.Bool   // DropReply armed: the next server bytes close the conn
	replyDropped chan struct{} // closed when a DropReply swallowed the answer
	serverDone   chan struct{} // closed when the server side ends
	once         sync.Once
}

// ID numbers the connections in the order they were accepted, from 1.
func (c *Conn) ID() int64 { return c.id }

// close closes both sides.
func (c *Conn) close() {
	c.once.Do(func() {
		c.client.Close()
		c.srv.Close()
	})
}

// Start listens on a free loopback port and forwards every connection to target
// (host:port).
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[*Conn]struct{}{}, budget: -1}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's address, host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// OnQuery sets the function called with every text query a client sends, before it
// is forwarded; its Action decides what happens. It may block (the client then waits)
// and runs on the connection's goroutine. nil forwards everything.
func (p *Proxy) OnQuery(f func(c *Conn, query string) Action) {
	p.mu.Lock()
	p.onQuery = f
	p.mu.Unlock()
}

// CutAfter cuts the connection that carries the (n+1)-th byte clients send from now
// on, in the middle of whatever it carries: the first n bytes are forwarded, then that
// connection is closed on both sides. n < 0 turns cutting off. Only one connection is
// cut per call.
func (p *Proxy) CutAfter(n int64) {
	p.mu.Lock()
	p.budget = n
	p.mu.Unlock()
}

// CloseAll closes every open connection, on both sides, and returns how many there
// were. New connections are accepted as before.
func (p *Proxy) CloseAll() int {
	p.mu.Lock()
	list := make([]*Conn, 0, len(p.conns))
	for c := range p.conns {
		list = append(list, c)
	}
	p.mu.Unlock()
	for _, c := range list {
		c.close()
	}
	return len(list)
}

// Open returns the number of open connections.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Accepted returns the number of connections accepted so far.
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

// Close stops listening, closes every connection and waits for the proxy's goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.CloseAll()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		srv, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		c := &Conn{id: p.accepted.Add(1), client: client, srv: srv, replyDropped: make(chan struct{}), serverDone: make(chan struct{})}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.close()
			return
		}
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.fromClient(c)
		go p.fromServer(c)
	}
}

// forget drops c from the open connections, then closes it: a client that sees its
// connection end no longer finds it counted (Open, CloseAll).
func (p *Proxy) forget(c *Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.close()
}

// fromServer copies the server's bytes to the client, unless a DropReply is armed.
func (p *Proxy) fromServer(c *Conn) {
	defer p.wg.Done()
	defer close(c.serverDone)
	defer p.forget(c)
	buf := make([]byte, 32<<10)
	for {
		n, err := c.srv.Read(buf)
		if n > 0 {
			if c.swallow.Load() {
				close(c.replyDropped)
				return
			}
			if _, werr := c.client.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// fromClient forwards the client's packets, asking OnQuery about each text query.
func (p *Proxy) fromClient(c *Conn) {
	defer p.wg.Done()
	defer p.forget(c)
	hdr := make([]byte, 4)
	for {
		if _, err := io.ReadFull(c.client, hdr); err != nil {
			return
		}
		n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
		payload := make([]byte, n)
		if _, err := io.ReadFull(c.client, payload); err != nil {
			return
		}
		act := Forward
		if hdr[3] == 0 && n > 0 && payload[0] == comQuery {
			p.mu.Lock()
			f := p.onQuery
			p.mu.Unlock()
			if f != nil {
				act = f(c, string(payload[1:]))
			}
		}
		switch act {
		case Drop:
			return
		case DropReply:
			c.swallow.Store(true)
		}
		if !p.send(c, append(hdr, payload...)) {
			return
		}
		if act == DropReply {
			select {
			case <-c.replyDropped:
			case <-c.serverDone:
			}
			return
		}
	}
}

// send forwards b to the server, cutting the connection where the byte budget ends.
func (p *Proxy) send(c *Conn, b []byte) bool {
	p.mu.Lock()
	cutAt := -1
	if p.budget >= 0 {
		if int64(len(b)) > p.budget {
			cutAt = int(p.budget)
			p.budget = -1
		} else {
			p.budget -= int64(len(b))
		}
	}
	p.mu.Unlock()
	if cutAt >= 0 {
		c.srv.Write(b[:cutAt])
		p.cut.Add(1)
		return false
	}
	_, err := c.srv.Write(b)
	return err == nil
}

// Cuts returns how many connections CutAfter has cut.
func (p *Proxy) Cuts() int64 { return p.cut.Load() }
