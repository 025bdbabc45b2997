// Package ids makes day1's record identifiers.
//
// [New] returns 26-character, lexicographically time-ordered random ids in the ULID
// layout: 48 bits of Unix time in milliseconds, then 80 random bits from crypto/rand,
// written in Crockford's base32 (digits and upper-case letters without I, L, O and U).
// Sorting ids as strings sorts them by creation time; ids made in the same millisecond
// by one process are still strictly increasing.
//
// [Sequential] returns a deterministic [Generator] for tests.
package ids

import (
	"crypto/rand"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Len is the length of an id returned by [New].
const Len = 26

// crockford is the Crockford base32 alphabet, in ascending ASCII order so that string
// order equals numeric order.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// maxTime is the largest timestamp 48 bits hold, in the year 10889.
const maxTime = 1<<48 - 1

// Generator returns a new id on each call. Implementations are safe for concurrent use.
// New is the Generator day1 uses unless a test injects another.
type Generator func() string

var _ Generator = New

// New returns a new time-ordered random id, 26 characters long. It is safe for
// concurrent use.
//
// Ids from one process are strictly increasing: within one millisecond the random part
// of the previous id is incremented instead of drawn afresh, and if the clock steps
// back, the last timestamp is reused. New panics only if the operating system's random
// source fails, which crypto/rand treats as fatal anyway.
func New() string {
	return defaultGen.next()
}

// Time returns the creation time encoded in an id made by [New], to the millisecond.
// It fails when id is not 26 upper-case Crockford base32 characters or its timestamp
// does not fit in 48 bits.
func Time(id string) (time.Time, error) {
	if len(id) != Len {
		return time.Time{}, errors.New("day1: invalid id " + strconv.Quote(id) + ": want 26 characters")
	}
	var ms uint64
	for i := range 10 {
		d := decodeChar(id[i])
		if d < 0 {
			return time.Time{}, errors.New("day1: invalid id " + strconv.Quote(id) + ": not Crockford base32")
		}
		ms = ms<<5 | uint64(d)
	}
	for i := 10; i < Len; i++ {
		if decodeChar(id[i]) < 0 {
			return time.Time{}, errors.New("day1: invalid id " + strconv.Quote(id) + ": not Crockford base32")
		}
	}
	// Ten characters carry 50 bits; a valid id leaves the top two at zero.
	if ms > maxTime {
		return time.Time{}, errors.New("day1: invalid id " + strconv.Quote(id) + ": timestamp out of range")
	}
	return time.UnixMilli(int64(ms)), nil
}

// decodeChar returns the value of one upper-case Crockford digit, or -1.
func decodeChar(c byte) int {
	for i := range len(crockford) {
		if crockford[i] == c {
			return i
		}
	}
	return -1
}

// Sequential returns a deterministic Generator for tests: prefix + "-000001",
// prefix + "-000002", and so on. Numbers keep six digits up to 999999 and grow wider
// after that, where string order no longer follows creation order. It is safe for
// concurrent use; each call of Sequential starts its own count.
func Sequential(prefix string) Generator {
	var n atomic.Uint64
	return func() string {
		v := n.Add(1)
		digits := strconv.FormatUint(v, 10)
		b := make([]byte, 0, len(prefix)+1+max(6, len(digits)))
		b = append(b, prefix...)
		b = append(b, '-')
		for range 6 - len(digits) {
			b = append(b, '0')
		}
		b = append(b, digits...)
		return string(b)
	}
}

// generator holds the state New needs to stay monotonic: the last timestamp and the
// last 80-bit random part (hi holds its top 16 bits).
type generator struct {
	mu     sync.Mutex
	now    func() time.Time
	random func([]byte)
	last   uint64
	hi     uint16
	lo     uint64
}

var defaultGen = &generator{now: time.Now, random: cryptoRandom}

func cryptoRandom(b []byte) {
	if _, err := rand.Read(b); err != nil {
		panic("day1: crypto/rand failed: " + err.Error())
	}
}

func (g *generator) next() string {
	g.mu.Lock()
	ms := uint64(max(g.now().UnixMilli(), 0))
	if ms > maxTime {
		ms = maxTime
	}
	switch {
	case ms > g.last:
		var b [10]byte
		g.random(b[:])
		g.last = ms
		g.hi = uint16(b[0])<<8 | uint16(b[1])
		g.lo = uint64(b[2])<<56 | uint64(b[3])<<48 | uint64(b[4])<<40 | uint64(b[5])<<32 |
			uint64(b[6])<<24 | uint64(b[7])<<16 | uint64(b[8])<<8 | uint64(b[9])
	default:
		// Same millisecond, or the clock stepped back: keep the last timestamp and count
		// up. In the astronomically unlikely case that the 80 bits overflow, borrow the
		// next millisecond so order still holds.
		g.lo++
		if g.lo == 0 {
			g.hi++
			if g.hi == 0 && g.last < maxTime {
				g.last++
			}
		}
	}
	id := encode(g.last, g.hi, g.lo)
	g.mu.Unlock()
	return id
}

// encode writes the 128-bit value ms<<80 | hi<<64 | lo as 26 base32 characters. The
// 26 characters carry 130 bits; the first character uses only its low 3 bits.
func encode(ms uint64, hi uint16, lo uint64) string {
	var b [Len]byte
	// The 80 random bits: 16 characters, least significant last.
	for i := Len - 1; i >= 10; i-- {
		b[i] = crockford[lo&31]
		lo = lo>>5 | uint64(hi)<<59
		hi >>= 5
	}
	// The 48 time bits: 10 characters.
	for i := 9; i >= 0; i-- {
		b[i] = crockford[ms&31]
		ms >>= 5
	}
	return string(b[:])
}
