// Package llm defines the two model interfaces day1 builds on, and an offline embedder.
//
// # Embedder
//
// An [Embedder] turns texts into vectors for semantic search: records whose vectors point
// the same way mean similar things. day1 embeds facts and observations when they are
// written and queries when they are searched, always with the same Embedder, so that
// vectors are comparable.
//
// [StemEmbedder] is the default: a deterministic feature-hashing embedder that runs
// in-process with no model and no network. It hashes word stems ("failed", "failing"
// and "fails" share "fail"), word forms, stem pairs and character n-grams, and weighs
// common conversational words ("really", "thing") less than rarer ones; it does not know
// synonyms, so it reports QualityLexical. [LocalEmbedder], the default before it,
// hashes words, word pairs and n-grams with equal word weights. The two never share a
// name, so their vectors are never compared. Plug in a neural embedding model through
// the same interface for better recall.
//
// # Model
//
// A [Model] is a chat-completion language model. day1's engines use it as a judge
// (scoring facts before they reach main), an extractor (turning conversations into
// facts) and a conflict resolver during merges; each builds its prompt on top of
// [Model.Complete] and usually reads a JSON answer with [CompleteJSON]. Every engine
// also works without a model, falling back to heuristics.
//
// The package llm/llmfake holds deterministic, scriptable fakes of both interfaces for
// tests.
package llm
