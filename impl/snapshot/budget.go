package snapshot

import (
	"fmt"
	"syscall"
	"unsafe"

	"github.com/oplogha/oplogha/impl/state"
)

// Cost estimates for admission, deliberately conservative: a capture is
// skipped rather than risk an OOM or a full disk.
const (
	// estCaptureBytesPerObject is a decoded object's fixed memory: its
	// B-tree item and node share, its Object, its key's string headers.
	estCaptureBytesPerObject = 256
	// estReplicaBytes is one decoded replica beside its strings.
	estReplicaBytes = int64(unsafe.Sizeof(state.Replica{}))
	// estChunkHeaderBytes bounds a part's own bytes beside its records:
	// struct_pack's header and hash, a chunk's index and object count.
	estChunkHeaderBytes = 64
	// diskReserveBytes is left free in the work directory, which may
	// share a disk with etcd: admission asks for the payload and this
	// much, and the encoder stops once less than this is free.
	diskReserveBytes = 256 << 20
	// diskRecheckBytes is how often, in bytes written, the encoder looks
	// at the free space again: others write to the disk too.
	diskRecheckBytes = 8 << 20
)

// Budget is the admission check of RFC "Encoding and Resource Bounds",
// and the free-space check the encoder repeats while it writes.
type Budget struct {
	MaxCaptureBytes int64  // max_snapshot_capture_bytes
	WorkDir         string // snapshot_work_dir
	// freeBytes is FreeBytes, replaced by tests that play a disk filling.
	freeBytes func(dir string) (int64, error)
}

// Estimate is what a capture is expected to cost.
type Estimate struct {
	CaptureBytes int64 // memory a full copy would take (the COW capture shares it, but a decoded copy would not)
	PayloadBytes int64 // temporary file size: an upper bound of what Encode writes
}

// EstimateFor estimates a capture of a state of footprint fp, encoded in
// chunks of chunkObjects objects (DefaultChunkObjects when 0 or less):
// from the bytes the state holds, which the state keeps as it changes,
// not from its object count alone.
func EstimateFor(fp state.Footprint, chunkObjects int) Estimate {
	if chunkObjects <= 0 {
		chunkObjects = DefaultChunkObjects
	}
	chunks := int64((fp.Objects + chunkObjects - 1) / chunkObjects)
	return Estimate{
		CaptureBytes: int64(fp.Objects)*estCaptureBytesPerObject + int64(fp.Replicas)*estReplicaBytes + fp.StringBytes,
		PayloadBytes: fp.EncodedBytes + (chunks+1)*estChunkHeaderBytes,
	}
}

// Check returns ErrCaptureTooLarge or ErrDiskBudget (typed skip reasons,
// see SkipReason) when the estimate does not fit, before any work is done.
func (b Budget) Check(e Estimate) error {
	if b.MaxCaptureBytes > 0 && e.CaptureBytes > b.MaxCaptureBytes {
		return fmt.Errorf("%w: estimated %d bytes, budget %d", ErrCaptureTooLarge, e.CaptureBytes, b.MaxCaptureBytes)
	}
	free, err := b.free()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrDiskBudget, err)
	}
	if need := e.PayloadBytes + diskReserveBytes; free < need {
		return fmt.Errorf("%w: %s has %d bytes free, the payload needs %d (with a %d-byte reserve)", ErrDiskBudget, b.WorkDir, free, need, int64(diskReserveBytes))
	}
	return nil
}

// whileWriting is the check the encoder makes every diskRecheckBytes:
// ErrDiskBudget once the work directory has less than the reserve free,
// whatever filled it. A Budget without a work directory checks nothing.
func (b Budget) whileWriting(written int64) error {
	if b.WorkDir == "" {
		return nil
	}
	free, err := b.free()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrDiskBudget, err)
	}
	if free < diskReserveBytes {
		return fmt.Errorf("%w: %s has %d bytes free after %d bytes of the payload were written, below the %d-byte reserve: the encoder stops",
			ErrDiskBudget, b.WorkDir, free, written, int64(diskReserveBytes))
	}
	return nil
}

func (b Budget) free() (int64, error) {
	if b.freeBytes != nil {
		return b.freeBytes(b.WorkDir)
	}
	return FreeBytes(b.WorkDir)
}

// FreeBytes is the space available to an unprivileged writer in dir.
func FreeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return int64(st.Bavail) * st.Bsize, nil
}
