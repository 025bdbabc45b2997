//go:build windows

package mapfile

import (
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

func mapPrivate(f *os.File, size int) ([]byte, func() error, error) {
	h, err := windows.CreateFileMapping(windows.Handle(f.Fd()), nil, windows.PAGE_WRITECOPY, 0, 0, nil)
	if err != nil {
		return nil, nil, err
	}
	// The view keeps the file mapped once the handle is closed.
	defer windows.CloseHandle(h)
	addr, err := windows.MapViewOfFile(h, windows.FILE_MAP_COPY, 0, 0, uintptr(size))
	if err != nil {
		return nil, nil, err
	}
	// The view's address, read as the pointer it is: memory the system owns,
	// outside Go's heap.
	data := unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&addr))), size)
	return data, func() error { return windows.UnmapViewOfFile(addr) }, nil
}
