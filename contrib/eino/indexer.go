package eino

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudwego/eino/components/indexer"
	"github.com/cloudwego/eino/schema"

	"github.com/day1ai/day1"
	"github.com/day1ai/day1/store"
)

// SourceType is the Fact.SourceType of the facts an Indexer writes.
const SourceType = "eino"

// IndexerConfig configures an Indexer. The zero value writes to the default branch,
// which must exist (it always does).
type IndexerConfig struct {
	// Branch is the branch written when neither the call (indexer.WithSubIndexes)
	// nor the document (schema.Document.WithSubIndexes) names one. Empty means
	// day1.DefaultBranch.
	Branch string
	// Category is the category of every fact written. Default empty: none.
	Category string
	// CreateBranches creates a branch a call or a document names that does not exist,
	// forked from Parent. Default false: such a call fails with an error matching
	// day1.ErrBranchNotFound and writes nothing.
	CreateBranches bool
	// Parent is the branch that CreateBranches forks from. Empty means
	// day1.DefaultBranch.
	Parent string
}

// Indexer is an Eino indexer.Indexer over a day1 memory: Store writes each document
// as a fact. It is safe for concurrent use.
type Indexer struct {
	c   *day1.Client
	cfg IndexerConfig
}

var _ indexer.Indexer = (*Indexer)(nil)

// NewIndexer returns an Indexer that writes facts through c. An invalid config is a
// *day1.ValidationError naming the field.
func NewIndexer(c *day1.Client, cfg IndexerConfig) (*Indexer, error) {
	if c == nil {
		return nil, store.Invalid("NewIndexer: client", "must be an open *day1.Client, not nil", nil)
	}
	if err := checkBranch("IndexerConfig.Branch", cfg.Branch); err != nil {
		return nil, err
	}
	if err := checkBranch("IndexerConfig.Parent", cfg.Parent); err != nil {
		return nil, err
	}
	if err := store.ValidateRecord(day1.Fact{ID: "x", Text: "x", Category: cfg.Category}, 0); err != nil {
		var ve *day1.ValidationError
		if errors.As(err, &ve) {
			return nil, store.Invalid("IndexerConfig.Category", ve.Reason, cfg.Category)
		}
		return nil, err
	}
	return &Indexer{c: c, cfg: cfg}, nil
}

// Store writes each document as a fact and returns the facts' IDs, in the order of
// docs.
//
// A document's ID becomes the fact's ID (it must be 1 to 128 letters, digits and
// . _ : @ -, starting with a letter or digit); a document without one gets an ID that
// day1 generates. Its Content becomes the fact's Text and must not be blank. Its
// MetaData becomes the fact's Metadata: string values as they are; any other value
// as its JSON encoding, its key listed under MetaJSONKeys so that a Retriever
// decodes it again (numbers come back as float64, structs as map[string]any); Eino's
// score and vector keys are left out, since day1 embeds the content itself with its
// Client's embedder. day1's limits apply: at most 64 pairs, keys of 1 to 256 bytes,
// values of at most 4096 bytes once encoded.
//
// The branch is, in order: the call's indexer.WithSubIndexes (every document goes to
// each branch named), the document's own sub-indexes
// (schema.Document.WithSubIndexes), IndexerConfig.Branch. Each branch's documents are
// written as one atomic batch; a call that writes several branches writes them one
// after the other, and an error names the branch that failed. indexer.WithIndex and
// indexer.WithEmbedding are ignored.
//
// day1's write rules apply: storing a document again is a no-op, a document with the
// exact text of a live fact is deduplicated (its ID, when it had one, becomes an
// alias that reads as that fact), and a near-duplicate supersedes the older fact. The
// ID returned is the document's own when it had one, else the ID of the fact that
// holds the text.
//
// Errors: a *day1.ValidationError whose message names the document (docs[i]) and the
// field; day1.ErrBranchNotFound for a branch that does not exist without
// CreateBranches; day1's write errors.
func (ix *Indexer) Store(ctx context.Context, docs []*schema.Document, opts ...indexer.Option) ([]string, error) {
	common := indexer.GetCommonOptions(&indexer.Options{}, opts...)
	for i, b := range common.SubIndexes {
		if err := store.ValidateBranchName(fmt.Sprintf("indexer.WithSubIndexes[%d]", i), b); err != nil {
			return nil, err
		}
	}
	facts := make([]day1.Fact, len(docs))
	branches := make([][]string, len(docs))
	for i, d := range docs {
		f, err := ix.fact(i, d)
		if err != nil {
			return nil, err
		}
		facts[i] = f
		switch own := subIndexes(d); {
		case len(common.SubIndexes) > 0:
			branches[i] = common.SubIndexes
		case len(own) > 0:
			for j, b := range own {
				if err := store.ValidateBranchName(fmt.Sprintf("docs[%d] sub-index %d", i, j), b); err != nil {
					return nil, err
				}
			}
			branches[i] = own
		default:
			branches[i] = []string{branchName(ix.cfg.Branch)}
		}
	}
	order, groups := groupByBranch(branches)
	for _, b := range order {
		if err := ix.ensureBranch(ctx, b); err != nil {
			return nil, err
		}
	}
	ids := make([]string, len(docs))
	for _, b := range order {
		if err := ix.write(ctx, b, groups[b], facts, ids); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// GetType names the component in Eino's callbacks and tooling.
func (ix *Indexer) GetType() string { return "Day1" }

// fact is the fact of document i, checked as day1 checks a write.
func (ix *Indexer) fact(i int, d *schema.Document) (day1.Fact, error) {
	field := fmt.Sprintf("docs[%d]", i)
	if d == nil {
		return day1.Fact{}, store.Invalid(field, "must not be nil", nil)
	}
	if d.ID != "" {
		if err := store.ValidateID(field+".ID", d.ID); err != nil {
			return day1.Fact{}, err
		}
	}
	md, err := factMetadata(field, d.MetaData)
	if err != nil {
		return day1.Fact{}, err
	}
	f := day1.Fact{ID: d.ID, Text: d.Content, Category: ix.cfg.Category, Metadata: md, SourceType: SourceType}
	check := f
	if check.ID == "" {
		check.ID = "x"
	}
	if err := store.ValidateRecord(check, 0); err != nil {
		return day1.Fact{}, documentError(field, err)
	}
	return f, nil
}

// documentError renames the fact field a *day1.ValidationError names after the
// document's (Fact.Text is docs[i].Content, Fact.Metadata[k] is docs[i].MetaData[k]).
func documentError(doc string, err error) error {
	var ve *day1.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	renamed := *ve
	for from, to := range map[string]string{"Fact.Text": ".Content", "Fact.Metadata": ".MetaData", "Fact.ID": ".ID"} {
		if rest, ok := strings.CutPrefix(ve.Field, from); ok {
			renamed.Field = doc + to + rest
			return &renamed
		}
	}
	renamed.Field = doc + " " + ve.Field
	return &renamed
}

// ensureBranch checks that a branch exists, creating it when the config says so.
func (ix *Indexer) ensureBranch(ctx context.Context, name string) error {
	_, err := ix.c.GetBranch(ctx, name)
	if !errors.Is(err, day1.ErrBranchNotFound) {
		return err
	}
	if !ix.cfg.CreateBranches {
		return fmt.Errorf("day1: the Eino indexer writes to branch %q, which does not exist; create it with Client.Branch or set IndexerConfig.CreateBranches: %w", name, err)
	}
	_, err = ix.c.Branch(ctx, name, day1.BranchOptions{From: ix.cfg.Parent, Description: "documents indexed through Eino"})
	if errors.Is(err, day1.ErrBranchExists) {
		return nil
	}
	return err
}

// write writes the documents idx of facts to branch b, in batches of at most
// store.MaxBatch, and records their IDs. A document without an ID that an earlier
// branch gave one keeps it, so it has one ID on every branch.
func (ix *Indexer) write(ctx context.Context, b string, idx []int, facts []day1.Fact, ids []string) error {
	for start := 0; start < len(idx); start += store.MaxBatch {
		part := idx[start:min(start+store.MaxBatch, len(idx))]
		batch := make([]day1.Fact, len(part))
		for j, i := range part {
			batch[j] = facts[i]
			batch[j].Branch = b
			if batch[j].ID == "" {
				batch[j].ID = ids[i]
			}
		}
		ws, err := ix.c.WriteFacts(ctx, batch)
		if err != nil {
			return fmt.Errorf("day1: the Eino indexer writing %d document(s) to branch %q: %w", len(batch), b, err)
		}
		for j, i := range part {
			switch {
			case ids[i] != "":
			case facts[i].ID != "":
				ids[i] = facts[i].ID
			default:
				ids[i] = ws[j].Record.ID
			}
		}
	}
	return nil
}

// groupByBranch lists the branches in the order documents first name them, and the
// documents of each.
func groupByBranch(branches [][]string) ([]string, map[string][]int) {
	var order []string
	groups := map[string][]int{}
	for i, bs := range branches {
		for _, b := range bs {
			if _, ok := groups[b]; !ok {
				order = append(order, b)
			}
			if g := groups[b]; len(g) == 0 || g[len(g)-1] != i {
				groups[b] = append(g, i)
			}
		}
	}
	return order, groups
}
