// Package cond is the condition language of handoff triggers and conditional
// transfers: small boolean expressions over a context map, such as
//
//	context.tokens_used > 100000 and agent.error_count >= 3
//
// compiled once (Compile) and evaluated by walking their syntax tree (Expr.Eval):
// nothing is executed, and the work one untrusted expression can cost is bounded
// (MaxExprLen, MaxExprDepth). Expr documents the grammar, the types and the errors.
// The handoff package re-exports these names.
package cond
