package sqlite_test

import (
	"testing"

	"github.com/day1ai/day1/store/driver"
	"github.com/day1ai/day1/store/driver/drivertest"
	"github.com/day1ai/day1/store/sqlite"
)

// TestDriver runs the checks of the driver contract on a SQLite file.
func TestDriver(t *testing.T) {
	drivertest.Run(t, func(t *testing.T) driver.Driver {
		d, err := sqlite.Open(t.Context(), sqlite.Options{Path: t.TempDir(), NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}
