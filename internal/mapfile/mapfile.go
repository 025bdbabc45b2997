// Package mapfile maps a file into memory, privately: the mapping reads the file's
// pages as they are touched, and a write to it changes a copy of the page that the
// process alone sees, never the file. Where the system maps no files, Map reads the
// file whole instead.
package mapfile

import (
	"errors"
	"fmt"
	"os"
)

// Map is a file mapped into memory.
type Map struct {
	data  []byte
	unmap func() error
}

// Bytes returns the file's bytes. They are valid until Close, and writes to them are
// seen by this process alone.
func (m *Map) Bytes() []byte { return m.data }

// Close unmaps the file: every slice of Bytes, and every value made from them
// without a copy, is invalid after it.
func (m *Map) Close() error {
	if m.unmap == nil {
		return nil
	}
	err := m.unmap()
	m.data, m.unmap = nil, nil
	return err
}

// Open maps the file at path whole. An empty file gives an error: there is nothing
// to map.
func Open(path string) (*Map, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size <= 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("mapfile: %s: %w", path, errSize)
	}
	data, unmap, err := mapPrivate(f, int(size))
	if err != nil {
		return nil, fmt.Errorf("mapfile: %s: %w", path, err)
	}
	return &Map{data: data, unmap: unmap}, nil
}

var errSize = errors.New("empty, or too large to map")
