package snapshot

import (
	"fmt"
	"syscall"
)

// Per-object cost estimates for admission. They are deliberately
// conservative: a capture is skipped rather than risk an OOM or a full disk.
const (
	estCaptureBytesPerObject = 256 // live B-tree item, object, replica slice
	estPayloadBytesPerObject = 96  // encoded record (measured ~58) plus headroom
	diskReserveBytes         = 256 << 20
)

// Budget is the admission check of RFC "Encoding and Resource Bounds".
type Budget struct {
	MaxCaptureBytes int64  // max_snapshot_capture_bytes
	WorkDir         string // snapshot_work_dir
}

// Estimate is what a capture of n objects is expected to cost.
type Estimate struct {
	CaptureBytes int64 // memory a full copy would take (the COW capture shares it, but a decoded copy would not)
	PayloadBytes int64 // temporary file size
}

// EstimateFor estimates a capture of objects objects.
func EstimateFor(objects int) Estimate {
	return Estimate{CaptureBytes: int64(objects) * estCaptureBytesPerObject, PayloadBytes: int64(objects)*estPayloadBytesPerObject + 1<<20}
}

// Check returns ErrCaptureTooLarge or ErrDiskBudget (typed skip reasons,
// see SkipReason) when the estimate does not fit, before any work is done.
func (b Budget) Check(e Estimate) error {
	if b.MaxCaptureBytes > 0 && e.CaptureBytes > b.MaxCaptureBytes {
		return fmt.Errorf("%w: estimated %d bytes, budget %d", ErrCaptureTooLarge, e.CaptureBytes, b.MaxCaptureBytes)
	}
	free, err := FreeBytes(b.WorkDir)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrDiskBudget, err)
	}
	if need := e.PayloadBytes + diskReserveBytes; free < need {
		return fmt.Errorf("%w: %s has %d bytes free, the payload needs %d (with a %d-byte reserve)", ErrDiskBudget, b.WorkDir, free, need, int64(diskReserveBytes))
	}
	return nil
}

// FreeBytes is the space available to an unprivileged writer in dir.
func FreeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return int64(st.Bavail) * st.Bsize, nil
}
