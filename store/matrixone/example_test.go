package matrixone_test

import (
	"context"
	"fmt"
	"log"

	"github.com/day1ai/day1/store/matrixone"
)

// Open a store on a MatrixOne server and see which search paths it took. Without a
// server at the address the example fails, so it has no checked output.
func ExampleOpen() {
	ctx := context.Background()
	s, err := matrixone.Open(ctx, matrixone.Options{
		DSN: "root:111@tcp(127.0.0.1:6001)/day1",
		// The defaults, spelled out: indexes where the server has them, an IVFFLAT
		// index from 10,000 rows on, 8 lists probed per query.
		FullText:        matrixone.IndexAuto,
		VectorIndex:     matrixone.IndexAuto,
		VectorIndexRows: 10000,
		VectorProbes:    8,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	c := s.Capabilities()
	fmt.Println(c.Version, c.BranchPath, c.KeywordPath, c.VectorPath)
	// On the 2024-11 build: 8.0.30-MatrixOne-v2.0.1 portable fulltext ivfflat

	// Build the vector indexes of a branch now rather than at the next mark.
	if err := s.BuildVectorIndexes(ctx, "main"); err != nil {
		log.Fatal(err)
	}
}
