//go:build unix

package snapshot

import (
	"fmt"
	"os"
	"syscall"
)

// readPart maps [off, off+size) of f read-only: the decode-check reads a
// part through the page cache the encoder just filled, without a copy on
// the heap (a chunk of a million objects is some 140 MiB). release unmaps
// it; nothing read from data may be kept past it.
func readPart(f *os.File, off, size int64) (data []byte, release func(), err error) {
	if size == 0 {
		return nil, func() {}, nil
	}
	page := int64(os.Getpagesize())
	start := off - off%page
	m, err := syscall.Mmap(int(f.Fd()), start, int(off-start+size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("map %d bytes at %d of %s: %w", size, off, f.Name(), err)
	}
	return m[off-start:], func() { _ = syscall.Munmap(m) }, nil
}
