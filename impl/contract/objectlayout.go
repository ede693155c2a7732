package contract

import "fmt"

// The objects of one snapshot, named relative to its object prefix
// ({s3_prefix}/{cluster_id}/{snapshot_id}, the pointer's object_prefix; RFC
// "Object Layout and Immutability", whose payload the project stores cut
// at record boundaries). Writers put them create-only, chunks first, then
// segments, manifest and descriptor; readers GET them by these exact keys
// and never list.
const (
	// SegmentsObject holds the envelope header and the segments record:
	// the first bytes of the payload stream.
	SegmentsObject = "segments.bin"
	// ManifestObject is the manifest (the descriptor's manifest_key).
	ManifestObject = "manifest.json"
	// DescriptorName is the descriptor, the object a pointer leads to.
	DescriptorName = "descriptor.json"
)

// ChunkObject names chunk n, the payload stream's (n+2)th object:
// chunks/{n:%06d}.bin.
func ChunkObject(n int) string { return fmt.Sprintf("chunks/%06d.bin", n) }
