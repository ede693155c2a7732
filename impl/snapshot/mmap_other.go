//go:build !unix

package snapshot

import (
	"io"
	"os"
)

// readPart reads [off, off+size) of f into memory (no mmap here).
func readPart(f *os.File, off, size int64) ([]byte, func(), error) {
	data := make([]byte, size)
	if _, err := f.ReadAt(data, off); err != nil && err != io.EOF {
		return nil, nil, err
	}
	return data, func() {}, nil
}
