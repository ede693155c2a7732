package legacysnap

import (
	"fmt"
	"strconv"
	"strings"
)

// The three text files of the layout: latest.txt, descriptor.txt and
// manifest.txt. Upstream writes each without a trailing newline; the reader
// trims surrounding whitespace, as it always has, and takes nothing else.

// Descriptor is a legacy descriptor.txt,
// "<last_included_seq>|<producer_view_version>|<created_at_ms>"
// (snapshot_catalog_store.h). It carries no batch id: the old writer had
// none, and a snapshot-only cluster wrote 0 as the sequence.
type Descriptor struct {
	Seq          uint64
	ProducerView uint64
	CreatedAtMS  int64
}

// maxCreatedAtMS bounds created_at_ms (milliseconds far beyond any clock).
const maxCreatedAtMS = 1 << 62

// DecodeDescriptor reads descriptor.txt: three canonical decimals (no sign,
// no leading zero) separated by '|', each within uint64, created_at_ms at
// most 2^62. Anything else — a schema-v1 JSON descriptor included — is
// ErrDescriptor with the reason.
func DecodeDescriptor(data []byte) (Descriptor, error) {
	text := strings.TrimSpace(string(data))
	bad := func(format string, args ...any) (Descriptor, error) {
		return Descriptor{}, fmt.Errorf("%w: %q: want <last_included_seq>|<producer_view_version>|<created_at_ms> (%s)", ErrDescriptor,
			clipString(text), fmt.Sprintf(format, args...))
	}
	parts := strings.Split(text, "|")
	if len(parts) != 3 {
		return bad("%d fields, want 3", len(parts))
	}
	var nums [3]uint64
	for i, p := range parts {
		v, err := canonicalUint(p)
		if err != nil {
			return bad("field %d: %v", i, err)
		}
		nums[i] = v
	}
	if nums[2] > maxCreatedAtMS {
		return bad("created_at_ms %d out of range", nums[2])
	}
	return Descriptor{Seq: nums[0], ProducerView: nums[1], CreatedAtMS: int64(nums[2])}, nil
}

// EncodeDescriptor is the text upstream writes for d (fixtures: nothing in
// this repository writes the old format otherwise).
func EncodeDescriptor(d Descriptor) []byte {
	return []byte(fmt.Sprintf("%d|%d|%d", d.Seq, d.ProducerView, d.CreatedAtMS))
}

// CheckManifest requires manifest.txt to be exactly ManifestFor(id) (less
// surrounding whitespace): upstream's restore checks the serializer type and
// version, and a manifest naming another id means the files of two
// snapshots are mixed. Failures are ErrManifest.
func CheckManifest(id string, data []byte) error {
	if got := strings.TrimSpace(string(data)); got != ManifestFor(id) {
		return fmt.Errorf("%w: %q, want %q", ErrManifest, clipString(got), ManifestFor(id))
	}
	return nil
}

// DecodeLatest reads latest.txt: the id of the newest snapshot (CheckID).
func DecodeLatest(data []byte) (string, error) {
	id := strings.TrimSpace(string(data))
	if err := CheckID(id); err != nil {
		return "", err
	}
	return id, nil
}

func canonicalUint(s string) (uint64, error) {
	if s == "" || (len(s) > 1 && s[0] == '0') || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("not a canonical decimal: %q", clipString(s))
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is out of range", clipString(s))
	}
	return v, nil
}
