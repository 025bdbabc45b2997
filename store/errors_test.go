package store

import (
	"errors"
	"testing"

	"github.com/day1ai/day1/llm"
)

// The llm packages report bad input without importing store; their errors must still
// match store's sentinel and type.
func TestLLMValidationErrorsAreStoreErrors(t *testing.T) {
	err := error(llm.Invalid("Config.Dimensions", "must be 1 to 8192", 0))
	if !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("errors.Is(%v, ErrInvalidArgument) = false", err)
	}
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "Config.Dimensions" {
		t.Errorf("errors.As(%v, *ValidationError) = %v, %+v", err, ve != nil, ve)
	}
	if MaxEmbeddingDims != llm.MaxDimensions {
		t.Errorf("MaxEmbeddingDims %d, llm.MaxDimensions %d", MaxEmbeddingDims, llm.MaxDimensions)
	}
}
