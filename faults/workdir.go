package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// fillWorkDir mounts a 64 KiB tmpfs over dir and fills it, so the master's
// free-space check (and any write) sees a full disk. Mounting needs
// CAP_SYS_ADMIN; without it the fault is unavailable, and says so.
func fillWorkDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		return fmt.Errorf("%w: mount a small tmpfs over %s: %v", ErrUnavailable, dir, err)
	}
	f, err := os.Create(filepath.Join(dir, ".harness-fill"))
	if err != nil {
		_ = syscall.Unmount(dir, 0)
		return err
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			return nil // full
		}
	}
}

func unmount(dir string) error {
	if err := syscall.Unmount(dir, 0); err != nil {
		return fmt.Errorf("unmount %s: %w", dir, err)
	}
	return nil
}
