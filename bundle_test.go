package day1

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// A bundle's errors are told apart with the root package's sentinels alone.
func TestBundleErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, _ := open(t, nil)
	if _, err := c.WriteFact(ctx, Fact{Text: "The importer checks the seal of every bundle", Verify: Verification{Status: Verified, Score: 0.9}}); err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	if _, err := c.WriteBundle(ctx, &file, CreateBundleRequest{Name: "seal", Branch: DefaultBranch}, true); err != nil {
		t.Fatal(err)
	}
	gz := file.Bytes()
	var plain bytes.Buffer
	if _, err := c.WriteBundle(ctx, &plain, CreateBundleRequest{Name: "seal", Branch: DefaultBranch}, false); err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Replace(plain.Bytes(), []byte("every bundle"), []byte("some bundles"), 1)
	for _, tc := range []struct {
		name  string
		input []byte
		want  error
	}{
		{"tampered", tampered, ErrBundleTampered},
		{"truncated", gz[:len(gz)/2], ErrBundleTruncated},
		{"garbage after it", append(bytes.Clone(gz), "12345678"...), ErrBundleFormat},
		{"not a bundle", []byte("hello\n"), ErrBundleFormat},
	} {
		_, err := c.ImportBundle(ctx, ImportBundleRequest{From: bytes.NewReader(tc.input), Branch: "in", CreateBranch: true})
		var fe *BundleFormatError
		if !errors.Is(err, tc.want) || !errors.Is(err, ErrBundleFormat) || !errors.Is(err, ErrInvalidArgument) || !errors.As(err, &fe) {
			t.Errorf("%s: %v; want %v", tc.name, err, tc.want)
		}
		if tc.want == ErrBundleFormat && errors.Is(err, ErrBundleTruncated) {
			t.Errorf("%s: %v; the file is not truncated", tc.name, err)
		}
	}
}
