package httpguard

import (
	"net/http/httptest"
	"slices"
	"testing"
)

func TestHosts(t *testing.T) {
	for _, c := range []struct {
		addr string
		want []string
	}{
		{"127.0.0.1:7077", nil},
		{"localhost:7077", nil},
		{"[::1]:7077", nil},
		{"0.0.0.0:7077", []string{"*"}},
		{"[::]:7077", []string{"*"}},
		{":7077", []string{"*"}},
		{"10.1.2.3:7077", []string{"10.1.2.3"}},
		{"day1.internal:7077", []string{"day1.internal"}},
	} {
		if got := Hosts(c.addr); !slices.Equal(got, c.want) {
			t.Errorf("Hosts(%q) = %q; want %q", c.addr, got, c.want)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		method, host string
		header       map[string]string
		hosts        []string
		ok           bool
	}{
		{"GET", "127.0.0.1:7077", nil, nil, true},
		{"GET", "127.9.9.9:7077", nil, nil, true},
		{"GET", "localhost:7077", nil, nil, true},
		{"GET", "LOCALHOST", nil, nil, true},
		{"GET", "[::1]:7077", nil, nil, true},
		{"GET", "attacker.example", nil, nil, false},
		{"GET", "attacker.example:7077", nil, []string{"day1.internal"}, false},
		{"GET", "day1.internal:7077", nil, []string{"day1.internal"}, true},
		{"GET", "anything.example", nil, []string{"*"}, true},
		{"GET", "10.0.0.5:7077", nil, []string{"10.0.0.5"}, true},
		{"POST", "127.0.0.1:7077", map[string]string{"Origin": "http://evil.example"}, nil, false},
		{"GET", "127.0.0.1:7077", map[string]string{"Origin": "http://evil.example"}, nil, false},
		{"GET", "127.0.0.1:7077", map[string]string{"Origin": "null"}, nil, false},
		{"GET", "127.0.0.1:7077", map[string]string{"Origin": "http://127.0.0.1:7077"}, nil, true},
		{"POST", "127.0.0.1:7077", map[string]string{"Origin": "http://127.0.0.1:7077", "Sec-Fetch-Site": "same-origin"}, nil, true},
		{"POST", "127.0.0.1:7077", map[string]string{"Sec-Fetch-Site": "cross-site"}, nil, false},
		{"GET", "127.0.0.1:7077", map[string]string{"Sec-Fetch-Site": "same-site"}, nil, false},
		{"GET", "127.0.0.1:7077", map[string]string{"Sec-Fetch-Site": "none"}, nil, true},
	} {
		r := httptest.NewRequest(c.method, "http://"+c.host+"/api", nil)
		r.Host = c.host
		for k, v := range c.header {
			r.Header.Set(k, v)
		}
		if reason := Check(r, c.hosts, nil); (reason == "") != c.ok {
			t.Errorf("%s Host %s %v (hosts %q): %q; want ok=%v", c.method, c.host, c.header, c.hosts, reason, c.ok)
		}
	}
}
