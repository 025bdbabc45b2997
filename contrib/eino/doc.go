// Package eino connects day1 to CloudWeGo Eino (github.com/cloudwego/eino): a
// Retriever and an Indexer, Eino's retrieval components, over a day1 memory, so that
// an Eino chain or graph stores documents as day1 facts and retrieves them with day1's
// search, on any branch.
//
// It is a module of its own, github.com/day1ai/day1/contrib/eino, so that the core
// module and its users pull none of Eino's dependencies.
//
// # Indexing
//
// Indexer.Store writes each schema.Document as a fact: the document's ID is the
// fact's ID (day1 generates one when it is empty), its Content the fact's Text, its
// MetaData the fact's Metadata. day1's metadata holds strings: a value of another type
// is kept as its JSON encoding and decoded again when retrieved (MetaJSONKeys lists
// them). Eino's sub-indexes are day1 branches: indexer.WithSubIndexes or the
// document's own sub-indexes choose the branches written, IndexerConfig.Branch
// otherwise. day1's write rules hold: an exact repeat is a no-op and a
// near-duplicate supersedes the older fact.
//
//	ix, err := eino.NewIndexer(client, eino.IndexerConfig{Category: "docs"})
//	ids, err := ix.Store(ctx, []*schema.Document{{ID: "tls", Content: "The gateway terminates TLS"}})
//
// # Retrieving
//
// Retriever.Retrieve is day1's search (hybrid by default) of the facts of a branch.
// Eino's options map to its query: retriever.WithTopK is the limit,
// retriever.WithScoreThreshold the relevance floor (SearchQuery.MinRelevance) and
// retriever.WithSubIndex the branch. Each document carries the fact's ID, text and
// metadata, and its Relevance in [0, 1] as its score (schema.Document.Score), the
// same quantity the threshold compares, on every store. A Retriever over a
// day1.View (Client.TimeTravel) retrieves memory as it was at a snapshot or an
// instant.
//
//	r, err := eino.NewRetriever(client, eino.RetrieverConfig{TopK: 5})
//	chain := compose.NewChain[string, []*schema.Document]().AppendRetriever(r)
//	run, err := chain.Compile(ctx)
//	docs, err := run.Invoke(ctx, "where is TLS terminated?",
//		compose.WithRetrieverOption(retriever.WithScoreThreshold(day1.DefaultMinRelevance)))
//
// # Errors
//
// Bad input is a *day1.ValidationError that names the option, the config field or the
// document (docs[i]) and says what is allowed; a missing branch matches
// day1.ErrBranchNotFound; day1's own errors pass through, wrapped, so errors.Is and
// errors.As reach them.
package eino
