package textsearch

import (
	"cmp"
	"slices"
)

// Posting is one document of a term's postings: the document's number (Ord, given by
// the index that holds it), a tag the index uses as it likes (the memory store keeps
// there the branch a version is current on), and the term's frequency in the document
// with the document's length, packed in 16 bits. A search decides most postings'
// visibility and scores them reading them alone, in order, rather than reading each
// document's entries at random. Postings hold no pointers, so the collector never
// scans them.
type Posting struct {
	Ord int32
	Tag uint16
	// tfLen holds the term's frequency in its top tfBits bits and the document's
	// length in the others, each saturated at its field's largest value: see List.TF
	// and Posting.DocLen.
	tfLen uint16
}

const (
	tfBits        = 4
	lenBits       = 16 - tfBits
	maxPostingTF  = 1<<tfBits - 1
	maxPostingLen = 1<<lenBits - 1
)

// DocLen returns the length in tokens of the posting's document; false when it is
// too long for a posting to hold (4,095 tokens or more), and the index that holds the
// document must say.
func (p Posting) DocLen() (int, bool) {
	n := p.tfLen & maxPostingLen
	return int(n), n < maxPostingLen
}

// List is a term's postings in ascending order of Ord, with the largest frequency and
// the smallest document length among every posting it was given (those dropped since
// included): together they bound the score the term can add to a document (Bound).
// The zero List is empty and ready.
type List struct {
	Postings []Posting
	maxTF    int32
	minDL    int32
	big      map[int32]int32 // tf by ord, for the postings whose tf is saturated
}

// Add appends the posting of document ord, whose tag is tag, which holds the term tf
// times in docLen tokens. ord is above that of every posting in the list.
func (l *List) Add(ord int32, tag uint16, tf, docLen int) {
	if l.maxTF == 0 {
		l.minDL = int32(docLen)
	}
	if tf >= maxPostingTF {
		if l.big == nil {
			l.big = map[int32]int32{}
		}
		l.big[ord] = int32(tf)
	}
	l.Postings = append(l.Postings, Posting{Ord: ord, Tag: tag,
		tfLen: uint16(min(tf, maxPostingTF))<<lenBits | uint16(min(docLen, maxPostingLen))})
	l.maxTF = max(l.maxTF, int32(tf))
	l.minDL = min(l.minDL, int32(docLen))
}

// TF returns how often the term occurs in p's document.
func (l *List) TF(p Posting) int {
	if tf := p.tfLen >> lenBits; tf < maxPostingTF {
		return int(tf)
	}
	return int(l.big[p.Ord])
}

// Find returns the position of the posting of ord in the list, or -1.
func (l *List) Find(ord int32) int {
	i, ok := slices.BinarySearchFunc(l.Postings, ord, func(p Posting, o int32) int { return cmp.Compare(p.Ord, o) })
	if !ok {
		return -1
	}
	return i
}

// Bound is the most the term can add to the score of a document of the list, in a
// collection of average document length avg where its weight is idf: scores rise with
// the frequency and fall with the length, and rounding keeps both so.
func (l *List) Bound(avg, idf float64) float64 {
	return DefaultBM25.Score(int(l.maxTF), int(l.minDL), avg, idf)
}

// Renumber gives each posting the ord remap[Ord], and drops those whose remap is
// negative; remap keeps the order of the ords it keeps. It reports whether postings
// are left.
func (l *List) Renumber(remap []int32) bool {
	ps := slices.DeleteFunc(l.Postings, func(p Posting) bool { return remap[p.Ord] < 0 })
	for i := range ps {
		ps[i].Ord = remap[ps[i].Ord]
	}
	l.Postings = ps
	if l.big != nil {
		big := make(map[int32]int32, len(l.big))
		for o, tf := range l.big {
			if remap[o] >= 0 {
				big[remap[o]] = tf
			}
		}
		l.big = big
	}
	return len(ps) > 0
}
