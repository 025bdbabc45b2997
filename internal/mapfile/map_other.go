//go:build !unix && !windows

package mapfile

import (
	"io"
	"os"
)

func mapPrivate(f *os.File, size int) ([]byte, func() error, error) {
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}
