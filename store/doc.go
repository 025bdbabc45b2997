package store

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Doc is a global, versioned JSON document in a named collection. Engines keep their own
// records as documents: tasks, handoffs and their audit events, templates, agent
// profiles, collaboration sessions. Documents are not branched and have no history; a
// write replaces the document and increments its Version, which callers use for
// optimistic concurrency (DocWrite.Cond).
type Doc struct {
	Collection string `json:"collection"`
	ID         string `json:"id"`
	// Version is 1 after the document is created and grows by one with every write.
	// Set by the store.
	Version uint64 `json:"version"`
	// Data is the document body, a JSON value (usually an object).
	Data json.RawMessage `json:"data"`
	// Keys are the document's indexed fields: DocQuery.Where matches them by equality.
	Keys      map[string]string `json:"keys,omitempty"`
	CreatedAt time.Time         `json:"created_at"` // set by the store on creation
	UpdatedAt time.Time         `json:"updated_at"` // set by the store on every write
}

// DocCond is the precondition of a document write.
type DocCond uint8

// Document write preconditions. A write whose precondition fails fails the whole batch
// with a *DocConflictError.
const (
	// DocUpsert writes whether or not the document exists. The zero value.
	DocUpsert DocCond = iota
	// DocCreate requires that the document does not exist.
	DocCreate
	// DocMatch requires that the document exists at DocWrite.Version.
	DocMatch
	// DocDelete removes the document, which must exist at DocWrite.Version, or at any
	// version when DocWrite.Version is 0. Doc.Data and Doc.Keys are ignored.
	DocDelete
)

// DocWrite is one change in a WriteDocs batch.
type DocWrite struct {
	Doc     Doc
	Cond    DocCond
	Version uint64 // the version DocMatch and DocDelete require
}

// DocQuery selects documents of one collection.
type DocQuery struct {
	Collection string
	// Where keeps documents whose Keys hold every pair (equality).
	Where map[string]string
	// IDPrefix keeps documents whose ID starts with it.
	IDPrefix string
	// Limit caps the result; 0 means no limit.
	Limit int
	// Desc lists newest first; the default is oldest first (CreatedAt, then ID).
	Desc bool
}

// Limits on documents.
const (
	MaxDocLen       = 4 << 20 // bytes of Doc.Data
	MaxDocKeys      = 32
	MaxDocKeyLen    = 64
	MaxDocValueLen  = 256
	MaxDocBatch     = 1000
	maxCollectionID = 64
)

var collectionPattern = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// ValidateDocWrite checks one write of a batch; i is its position, used in field names.
func ValidateDocWrite(i int, w DocWrite) error {
	field := fmt.Sprintf("DocWrite[%d]", i)
	if err := ValidateCollection(field+".Doc.Collection", w.Doc.Collection); err != nil {
		return err
	}
	if err := ValidateID(field+".Doc.ID", w.Doc.ID); err != nil {
		return err
	}
	switch w.Cond {
	case DocUpsert, DocCreate:
	case DocMatch:
		if w.Version == 0 {
			return Invalid(field+".Version", "must be the document's current version (1 or more) with DocMatch", nil)
		}
	case DocDelete:
		return nil
	default:
		return Invalid(field+".Cond", "must be DocUpsert, DocCreate, DocMatch or DocDelete", int(w.Cond))
	}
	if len(w.Doc.Data) == 0 {
		return Invalid(field+".Doc.Data", "must be a JSON value", nil)
	}
	if len(w.Doc.Data) > MaxDocLen {
		return Invalid(field+".Doc.Data", fmt.Sprintf("is %d bytes; at most %d are allowed", len(w.Doc.Data), MaxDocLen), nil)
	}
	if !json.Valid(w.Doc.Data) {
		return Invalid(field+".Doc.Data", "must be valid JSON", string(w.Doc.Data))
	}
	return validateDocKeys(field+".Doc.Keys", w.Doc.Keys)
}

// ValidateCollection checks a collection name: lower-case letters, digits and
// underscores, starting with a letter, at most 64 characters.
func ValidateCollection(field, c string) error {
	if len(c) == 0 || len(c) > maxCollectionID || !collectionPattern.MatchString(c) {
		return Invalid(field, "must be 1 to 64 lower-case letters, digits and underscores, starting with a letter", c)
	}
	return nil
}

func validateDocKeys(field string, keys map[string]string) error {
	if len(keys) > MaxDocKeys {
		return Invalid(field, fmt.Sprintf("has %d keys; at most %d are allowed", len(keys), MaxDocKeys), nil)
	}
	for k, v := range keys {
		if k == "" || len(k) > MaxDocKeyLen {
			return Invalid(field, fmt.Sprintf("key must be 1 to %d bytes", MaxDocKeyLen), k)
		}
		if len(v) > MaxDocValueLen {
			return Invalid(field+"["+k+"]", fmt.Sprintf("must be at most %d bytes", MaxDocValueLen), v)
		}
	}
	return nil
}

// ValidateDocWrites checks a WriteDocs batch: size, each write, and that no document
// appears twice.
func ValidateDocWrites(ws []DocWrite) error {
	if len(ws) == 0 {
		return Invalid("DocWrite", "the batch must hold at least one write", nil)
	}
	if len(ws) > MaxDocBatch {
		return Invalid("DocWrite", fmt.Sprintf("the batch holds %d writes; at most %d are allowed", len(ws), MaxDocBatch), nil)
	}
	seen := make(map[[2]string]bool, len(ws))
	for i, w := range ws {
		if err := ValidateDocWrite(i, w); err != nil {
			return err
		}
		k := [2]string{w.Doc.Collection, w.Doc.ID}
		if seen[k] {
			return Invalid(fmt.Sprintf("DocWrite[%d].Doc.ID", i), "appears twice in the batch", w.Doc.ID)
		}
		seen[k] = true
	}
	return nil
}

// ValidateDocQuery checks a DocQuery.
func ValidateDocQuery(q DocQuery) error {
	if err := ValidateCollection("DocQuery.Collection", q.Collection); err != nil {
		return err
	}
	if q.Limit < 0 {
		return Invalid("DocQuery.Limit", "must be 0 (no limit) or more", q.Limit)
	}
	return validateDocKeys("DocQuery.Where", q.Where)
}

// CheckDocCond checks w's precondition against the stored document; have is nil when
// the document does not exist.
func CheckDocCond(w DocWrite, have *Doc) error {
	var cur uint64
	if have != nil {
		cur = have.Version
	}
	switch w.Cond {
	case DocCreate:
		if have != nil {
			return &DocConflictError{Collection: w.Doc.Collection, ID: w.Doc.ID, Want: 0, Have: cur}
		}
	case DocMatch:
		if cur != w.Version {
			return &DocConflictError{Collection: w.Doc.Collection, ID: w.Doc.ID, Want: w.Version, Have: cur}
		}
	case DocDelete:
		if have == nil {
			return fmt.Errorf("%w: document %s/%s", ErrNotFound, w.Doc.Collection, w.Doc.ID)
		}
		if w.Version != 0 && cur != w.Version {
			return &DocConflictError{Collection: w.Doc.Collection, ID: w.Doc.ID, Want: w.Version, Have: cur}
		}
	}
	return nil
}

// NextDoc returns the document w writes over have (nil when absent) at now.
func NextDoc(w DocWrite, have *Doc, now time.Time) Doc {
	d := Doc{
		Collection: w.Doc.Collection,
		ID:         w.Doc.ID,
		Version:    1,
		Data:       slices.Clone(w.Doc.Data),
		Keys:       maps.Clone(w.Doc.Keys),
		CreatedAt:  now,
		UpdatedAt:  now,
	}
	if have != nil {
		d.Version = have.Version + 1
		d.CreatedAt = have.CreatedAt
	}
	return d
}

// MatchDoc reports whether d satisfies q's Where and IDPrefix.
func MatchDoc(q DocQuery, d *Doc) bool {
	if !strings.HasPrefix(d.ID, q.IDPrefix) {
		return false
	}
	for k, v := range q.Where {
		if got, ok := d.Keys[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// SortDocs orders documents by creation time then id, or the reverse when desc.
func SortDocs(ds []Doc, desc bool) {
	slices.SortFunc(ds, func(a, b Doc) int {
		c := a.CreatedAt.Compare(b.CreatedAt)
		if c == 0 {
			c = strings.Compare(a.ID, b.ID)
		}
		if desc {
			return -c
		}
		return c
	})
}

// CloneDoc returns a deep copy of d.
func CloneDoc(d Doc) Doc {
	d.Data = slices.Clone(d.Data)
	d.Keys = maps.Clone(d.Keys)
	return d
}

// DocConflictError says a document write's precondition failed: the document exists
// when it should not (Want 0), or has another version (Have 0: it does not exist).
// Nothing in the batch was written. It matches ErrStale: read the document again.
type DocConflictError struct {
	Collection, ID string
	Want, Have     uint64
}

func (e *DocConflictError) Error() string {
	switch {
	case e.Want == 0:
		return fmt.Sprintf("day1: document %s/%s already exists (version %d)", e.Collection, e.ID, e.Have)
	case e.Have == 0:
		return fmt.Sprintf("day1: document %s/%s does not exist (expected version %d)", e.Collection, e.ID, e.Want)
	}
	return fmt.Sprintf("day1: document %s/%s is at version %d, not %d; read it again", e.Collection, e.ID, e.Have, e.Want)
}

// Is makes errors.Is(err, ErrStale) true.
func (e *DocConflictError) Is(target error) bool { return target == ErrStale }
